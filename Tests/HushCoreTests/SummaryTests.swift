import HushCore
import HushState
import XCTest

final class SummaryTests: XCTestCase {
    func harness(_ extra: (inout Policy) -> Void = { _ in }) -> PipelineHarness {
        var p = Policy(
            apps: ["com.example.news": AppSettings(summary: true, name: "News")], summaryTimes: [8 * 60, 18 * 60])
        extra(&p)
        return PipelineHarness(p)
    }

    func testHeldUntilNextSummaryAtOrAfterNow() {
        let h = harness()
        let d = h.decide(note("com.example.news", date: "2026-11-23T09:15:00+01:00"))
        XCTAssertEqual(d.delivery, .summary)
        XCTAssertEqual(d.summaryAt, RFC3339.parse("2026-11-23T18:00:00+01:00"))
        XCTAssertNil(d.group)
        XCTAssertNil(d.alert)
        XCTAssertTrue(d.jsonString.contains("\"summary_at\":\"2026-11-23T18:00:00+01:00\""))
        let exact = h.decide(note("com.example.news", date: "2026-11-23T18:00:00+01:00"))
        XCTAssertEqual(exact.summaryAt, RFC3339.parse("2026-11-23T18:00:00+01:00"))
        let night = h.decide(note("com.example.news", date: "2026-11-23T21:00:00+01:00"))
        XCTAssertEqual(night.summaryAt, RFC3339.parse("2026-11-24T08:00:00+01:00"))
        let passive = h.decide(note("com.example.news", date: "2026-11-23T10:00:00+01:00", level: "passive"))
        XCTAssertEqual(passive.delivery, .summary)
    }

    func testSummaryTimeIsDSTCorrect() {
        var p = Policy(apps: ["n": AppSettings(summary: true)], summaryTimes: [2 * 60 + 30])
        p.timezone = "Europe/Berlin"
        let h = PipelineHarness(p)
        let d = h.decide(note("n", date: "2026-03-29T01:00:00+01:00"))
        XCTAssertEqual(d.summaryAt, RFC3339.parse("2026-03-29T03:00:00+02:00"))
    }

    func testWhatPassesTheSummary() {
        let h = harness { $0.apps["com.example.news"]?.criticalAlerts = true }
        let ts = h.decide(note("com.example.news", level: "time-sensitive"))
        XCTAssertEqual(ts.delivery, .alert)
        XCTAssertEqual(ts.breakthrough, .timeSensitive)
        let critical = h.decide(note("com.example.news", level: "critical"))
        XCTAssertEqual(critical.breakthrough, .critical)
        let dm = h.decide(note("com.example.news", communication: message(from: "alice@example.com")))
        XCTAssertEqual(dm.delivery, .alert)
        XCTAssertEqual(dm.breakthrough, .communication)
        let noSender = h.decide(note("com.example.news", communication: "{\"kind\":\"message\"}"))
        XCTAssertEqual(noSender.delivery, .summary)
        // Not a summary app: nothing to break through.
        XCTAssertNil(h.decide(note("com.example.other", level: "time-sensitive")).breakthrough)
    }

    func testSummaryBeforeFocus() {
        let h = harness { $0.focuses = [FocusSettings(name: "Work", people: ["alice@example.com"])] }
        h.context = context("{\"focus\":\"Work\"}")
        XCTAssertEqual(h.decide(note("com.example.news")).delivery, .summary)
        let dm = h.decide(note("com.example.news", communication: message(from: "alice@example.com")))
        XCTAssertEqual(dm.breakthrough, .person)  // the focus step names another breakthrough
        let stranger = h.decide(note("com.example.news", communication: message(from: "mallory@example.com")))
        XCTAssertEqual(stranger.delivery, .silenced)
        XCTAssertNil(stranger.breakthrough)
    }

    func testBatchOrderAndExpiryAndGroupsAfterDelivery() {
        let h = harness()
        h.decide(note("com.example.news", id: "low", date: "2026-11-23T09:00:00+01:00", relevance: 0.2))
        h.decide(note("com.example.news", id: "none-old", date: "2026-11-23T09:01:00+01:00"))
        h.decide(
            note(
                "com.example.news", id: "media", date: "2026-11-23T09:02:00+01:00",
                attachments: "[{\"type\":\"image\"}]"))
        h.decide(note("com.example.news", id: "none-new", date: "2026-11-23T09:03:00+01:00"))
        h.decide(note("com.example.news", id: "high", date: "2026-11-23T09:04:00+01:00", relevance: 0.9))
        // Expires at 12:00 local, before the 18:00 summary.
        h.decide(
            note(
                "com.example.news", id: "stale", date: "2026-11-23T09:05:00+01:00",
                headers: "{\"apns-expiration\":\(Int(RFC3339.parse("2026-11-23T12:00:00+01:00")!))}"))
        let batches = h.store.takeDueSummaries(user: "default", upTo: RFC3339.parse("2026-11-23T18:00:00+01:00")!)
        XCTAssertEqual(batches.count, 1)
        XCTAssertEqual(batches[0].notifications.map(\.id), ["high", "low", "media", "none-new", "none-old"])
        XCTAssertEqual(batches[0].dropped.map(\.id), ["stale"])
        h.store.apply(h.pipeline.deliveryChanges(forSummary: batches[0].notifications))
        let after = h.decide(
            note("com.example.news", id: "later", date: "2026-11-23T18:05:00+01:00", level: "time-sensitive"))
        XCTAssertEqual(after.group?.count, 6)
        XCTAssertEqual(after.group?.summary, "5 more notifications")
    }

    func testCollapseInsideTheQueue() {
        let h = harness()
        h.decide(note("com.example.news", id: "story", date: "2026-11-23T09:00:00+01:00", title: "v1"))
        let second = h.decide(note("com.example.news", id: "story", date: "2026-11-23T09:30:00+01:00", title: "v2"))
        XCTAssertEqual(second.replaces, "story")
        XCTAssertEqual(second.delivery, .summary)
        let batch = h.store.takeDueSummaries(user: "default", upTo: RFC3339.parse("2026-11-23T18:00:00+01:00")!)
        XCTAssertEqual(batch.first?.notifications.map(\.title), ["v2"])
    }

    func testRuleSummaryOverrides() {
        var p = Policy(apps: ["com.example.news": AppSettings(summary: true)], summaryTimes: [18 * 60])
        p.rules = [Policy.RuleInfo(name: "test rule", file: "t.lua", line: 1)]
        let h = PipelineHarness(
            p,
            rules: ClosureRules { s, _ in
                s.envelope.app == "com.example.news" ? RuleChanges(summary: false) : RuleChanges(summary: true)
            })
        XCTAssertEqual(h.decide(note("com.example.news")).delivery, .alert)
        XCTAssertEqual(h.decide(note("com.example.shop")).delivery, .summary)
    }
}
