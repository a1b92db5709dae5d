import HushCore
import HushState
import XCTest

final class GroupAndCollapseTests: XCTestCase {
    func testGroupingModes() {
        let auto = PipelineHarness(Policy())
        XCTAssertEqual(auto.decide(note("chat", thread: "t1")).group?.id, "chat/t1")
        XCTAssertEqual(auto.decide(note("chat")).group?.id, "chat")
        XCTAssertEqual(auto.decide(note("chat", thread: "t1")).group?.count, 2)
        let byApp = PipelineHarness(Policy(apps: ["chat": AppSettings(grouping: .app)]))
        byApp.decide(note("chat", thread: "t1"))
        let d = byApp.decide(note("chat", thread: "t2"))
        XCTAssertEqual(d.group?.id, "chat")
        XCTAssertEqual(d.group?.count, 2)
        let off = PipelineHarness(Policy(appDefaults: AppSettings(grouping: .off)))
        XCTAssertNil(off.decide(note("chat", thread: "t1")).group)
    }

    /// A week keeps every notification of a thread: they share the group's id instead of holding
    /// one copy each (memory, issue 16). The text is the same either way.
    func testAGroupsMembersShareOneCopyOfItsID() {
        let h = PipelineHarness(Policy())
        let thread = "a-thread-long-enough-to-live-on-the-heap"
        for i in 0..<3 { h.decide(note("chat", id: "m\(i)", thread: thread, user: "u1")) }
        let members = h.store.groupMembers(user: "u1", groupID: "chat/\(thread)")
        XCTAssertEqual(members.count, 3)
        func storage(_ s: String?) -> UnsafePointer<UInt8>? {
            var s = s
            return s?.withUTF8 { $0.baseAddress }
        }
        let first = storage(members[0].groupID)
        XCTAssertNotNil(first)
        for member in members {
            XCTAssertEqual(member.groupID, "chat/\(thread)")
            XCTAssertEqual(storage(member.groupID), first, "\(member.id) holds its own copy of the group's id")
        }
    }

    func testSummaryLineTable() {
        let categories = [
            "MESSAGE": CategorySettings(
                summaryFormat: PluralFormat(one: "%u more message from %@", other: "%u more messages from %@")),
            "INVITE": CategorySettings(
                summaryFormat: PluralFormat(one: "%u more invitation", other: "%u more invitations")),
            "PLAIN": CategorySettings(summaryFormat: PluralFormat(other: "%u new items")),
        ]
        struct Row {
            var earlier: [(String?, String?, Int?)]  // category, summary-arg, summary-arg-count
            var line: String?
        }
        let rows: [Row] = [
            Row(earlier: [], line: nil),
            Row(earlier: [(nil, nil, nil)], line: "1 more notification"),
            Row(earlier: [(nil, nil, nil), (nil, nil, 3)], line: "4 more notifications"),
            Row(earlier: [("MESSAGE", "Alice", nil)], line: "1 more message from Alice"),
            Row(
                earlier: [("MESSAGE", "Alice", nil), ("MESSAGE", "Bob", 2)], line: "3 more messages from Alice and Bob"),
            Row(
                earlier: [
                    ("MESSAGE", "Alice", nil), ("MESSAGE", "Bob", nil), ("MESSAGE", "Alice", nil),
                    ("MESSAGE", "Carol", nil),
                ],
                line: "4 more messages from Alice, Bob and Carol"),
            Row(earlier: [("MESSAGE", nil, nil), ("MESSAGE", nil, nil)], line: "2 more notifications"),
            Row(
                earlier: [("INVITE", nil, nil), ("INVITE", nil, nil), ("PLAIN", nil, 1)],
                line: "2 more invitations and 1 new items"),
            Row(earlier: [("INVITE", nil, nil), (nil, nil, nil)], line: "1 more invitation and 1 more notification"),
            Row(earlier: [("MESSAGE", "Alice", nil), ("INVITE", nil, 2)], line: "3 more notifications"),
            Row(earlier: [("PLAIN", nil, nil)], line: "1 new items"),
        ]
        for (i, row) in rows.enumerated() {
            let h = PipelineHarness(Policy(categories: categories))
            for (j, e) in row.earlier.enumerated() {
                h.decide(note("chat", id: "e\(j)", thread: "t", category: e.0, summaryArg: e.1, summaryArgCount: e.2))
            }
            let d = h.decide(note("chat", id: "last", thread: "t", category: "MESSAGE", summaryArg: "Zed"))
            XCTAssertEqual(d.group?.summary, row.line, "row \(i)")
            XCTAssertEqual(d.group?.count, row.earlier.count + 1, "row \(i)")
        }
    }

    /// Whether a format names the arguments is found when it is made, and again when a form changes.
    func testAFormatKnowsWhetherItNamesTheArguments() {
        var format = PluralFormat(other: "%u more")
        XCTAssertFalse(format.mentionsArguments)
        format.one = "%u more from %@"
        XCTAssertTrue(format.mentionsArguments)
        format.one = nil
        XCTAssertFalse(format.mentionsArguments)
        format.other = "%u more from Zoë, %@"
        XCTAssertTrue(format.mentionsArguments)
        XCTAssertFalse(PluralFormat(other: "100%% @ home").mentionsArguments)
        XCTAssertTrue(PluralFormat(one: "%@", other: "x").mentionsArguments)
        XCTAssertEqual(format, PluralFormat(other: "%u more from Zoë, %@"))
    }

    func testPlaceholderWhenPreviewsHidden() {
        let categories = [
            "MESSAGE": CategorySettings(hiddenPreview: PluralFormat(one: "%u message", other: "%u messages"))
        ]
        let never = PipelineHarness(Policy(apps: ["chat": AppSettings(previews: .never)], categories: categories))
        XCTAssertEqual(never.decide(note("chat", category: "MESSAGE")).placeholder, "1 message")
        XCTAssertEqual(never.decide(note("chat", category: "MESSAGE")).placeholder, "2 messages")
        XCTAssertEqual(never.decide(note("chat")).placeholder, "Notification")
        let unlocked = PipelineHarness(
            Policy(apps: ["bank": AppSettings(previews: .unlocked)]), context: context("{\"locked\":true}"))
        XCTAssertEqual(unlocked.decide(note("bank")).placeholder, "Notification")
        let open = PipelineHarness(
            Policy(apps: ["bank": AppSettings(previews: .unlocked)]), context: context("{\"locked\":false}"))
        XCTAssertNil(open.decide(note("bank")).placeholder)
    }

    func testCollapseReplacesInPlace() {
        let h = PipelineHarness(Policy())
        h.decide(note("score", id: "game-1", body: "1-0", thread: "t"))
        h.decide(note("score", id: "other", thread: "t"))
        let update = h.decide(note("score", id: "game-1", body: "2-0", thread: "t"))
        XCTAssertEqual(update.replaces, "game-1")
        XCTAssertEqual(update.group?.count, 2)
        XCTAssertEqual(h.store.groupMembers(user: "default", groupID: "score/t").map(\.body), ["2-0", "Hello"])
        // apns-collapse-id stands in for a missing id.
        h.decide(note("score", headers: "{\"apns-collapse-id\":\"c1\"}"))
        XCTAssertEqual(h.decide(note("score", headers: "{\"apns-collapse-id\":\"c1\"}")).replaces, "c1")
        // Generated ids never collapse; other apps and users are separate.
        XCTAssertNil(h.decide(note("score")).replaces)
        XCTAssertNil(h.decide(note("other-app", id: "game-1")).replaces)
        XCTAssertNil(h.decide(note("score", id: "game-1", user: "kim")).replaces)
    }
}
