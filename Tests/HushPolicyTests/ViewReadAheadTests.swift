import HushCore
import HushJSON
import HushPolicy
import Lua
import XCTest

/// Fields the rules read nearly every time are read ahead for each notification after the first
/// 128 (`hush_view_prepare`): what a rule sees must stay what it saw when each field was read as
/// it was asked for, nil fields, fields an earlier rule changed, and another user's notification
/// included.
final class ViewReadAheadTests: XCTestCase {
    private let rules = """
        rule("quiet b", function(n, ctx)
          if n.app == "b" then return { level = "passive", thread = "moved" } end
        end)
        rule("see", function(n, ctx)
          return { reason = table.concat({ n.app, tostring(n.category), n.level, tostring(n.thread), n.title,
            tostring(n.badge), tostring(ctx.focus), ctx.user }, "|") }
        end)
        """

    private func reason(_ policy: PolicyInterpreter, _ i: Int) throws -> String {
        let app = i % 2 == 0 ? "a" : "b"
        let category = i % 3 == 0 ? #","category":"C\#(i)""# : ""
        let badge = i % 5 == 0 ? #","badge":\#(i)"# : ""
        let json =
            #"{"app":"\#(app)","user":"u\#(i % 4)","payload":{"aps":{"alert":{"title":"t\#(i)"},"thread-id":"th"\#(category)\#(badge)}}}"#
        var subject = RuleSubject(envelope: try Envelope.decode(try JSONParser.parse(json), fallbackID: "n\(i)"))
        let now = 1_700_000_000.0 + Double(i)
        let context = RuleContext(
            now: now, local: ZoneClock(identifier: "UTC")!.local(now), focus: i % 7 == 0 ? nil : "Work",
            locked: false, ringer: .ring, audio: .none, user: "u\(i % 4)", state: EmptyState(),
            directory: Directory(contacts: []))
        let reports = try policy.runRules(subject: &subject, context: context)
        XCTAssertNil(reports.compactMap(\.error).first)
        return reports.last?.changes?.reason ?? ""
    }

    func testFieldsReadAheadAreWhatARuleWouldHaveRead() throws {
        let policy = try PolicyInterpreter(sources: [PolicySource(name: "policy.lua", text: rules)])
        for i in 0..<400 {
            let b = i % 2 == 1
            let expected = [
                b ? "b" : "a", i % 3 == 0 ? "C\(i)" : "nil", b ? "passive" : "active", b ? "moved" : "th", "t\(i)",
                i % 5 == 0 ? "\(i)" : "nil", i % 7 == 0 ? "nil" : "Work", "u\(i % 4)",
            ].joined(separator: "|")
            XCTAssertEqual(try reason(policy, i), expected, "notification \(i)")
        }
    }
}
