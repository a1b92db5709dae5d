import HushCore
import XCTest

final class LevelAndAuthorizationTests: XCTestCase {
    func policy(_ apps: [String: AppSettings]) -> Policy { Policy(apps: apps) }

    func testEffectiveLevelTable() {
        struct Row {
            var requested: String?
            var sound: String?
            var app: AppSettings
            var level: InterruptionLevel
            var requestedLevel: InterruptionLevel
            var delivery: Decision.Delivery
        }
        let rows: [Row] = [
            Row(requested: nil, app: AppSettings(), level: .active, requestedLevel: .active, delivery: .alert),
            Row(requested: "passive", app: AppSettings(), level: .passive, requestedLevel: .passive, delivery: .quiet),
            Row(
                requested: "time-sensitive", app: AppSettings(), level: .timeSensitive, requestedLevel: .timeSensitive,
                delivery: .alert),
            Row(
                requested: "time-sensitive", app: AppSettings(timeSensitive: false), level: .active,
                requestedLevel: .timeSensitive, delivery: .alert),
            Row(requested: "critical", app: AppSettings(), level: .active, requestedLevel: .critical, delivery: .alert),
            Row(
                requested: "critical", app: AppSettings(criticalAlerts: true), level: .critical,
                requestedLevel: .critical, delivery: .alert),
            Row(
                requested: nil, sound: "{\"critical\":1,\"name\":\"siren.caf\",\"volume\":0.7}",
                app: AppSettings(criticalAlerts: true),
                level: .critical, requestedLevel: .critical, delivery: .alert),
        ]
        for (i, row) in rows.enumerated() {
            let h = PipelineHarness(policy(["com.example.app": row.app]))
            let d = h.decide(note(level: row.requested, sound: row.sound))
            XCTAssertEqual(d.level, row.level, "row \(i)")
            XCTAssertEqual(d.requestedLevel, row.requestedLevel, "row \(i)")
            XCTAssertEqual(d.delivery, row.delivery, "row \(i)")
            if row.level != row.requestedLevel {
                XCTAssertTrue(d.reasons.contains { $0.contains("downgraded to active") }, "row \(i): \(d.reasons)")
            }
        }
    }

    func testDeniedAppIsDroppedExceptEntitledCritical() {
        let h = PipelineHarness(policy(["com.example.app": AppSettings(authorization: .denied, criticalAlerts: true)]))
        XCTAssertEqual(h.decide(note()).delivery, .dropped)
        XCTAssertEqual(h.decide(note(level: "time-sensitive")).delivery, .dropped)
        let critical = h.decide(note(level: "critical"))
        XCTAssertEqual(critical.delivery, .alert)
        XCTAssertEqual(critical.level, .critical)

        let noEntitlement = PipelineHarness(policy(["com.example.app": AppSettings(authorization: .denied)]))
        XCTAssertEqual(noEntitlement.decide(note(level: "critical")).delivery, .dropped)
    }

    func testProvisionalIsAtMostQuiet() {
        let h = PipelineHarness(
            policy(["com.example.app": AppSettings(authorization: .provisional, criticalAlerts: true)]))
        let d = h.decide(note(level: "time-sensitive"))
        XCTAssertEqual(d.delivery, .quiet)
        XCTAssertNil(d.alert)
        XCTAssertTrue(d.reasons.contains { $0.contains("provisional") })
        XCTAssertEqual(h.decide(note(level: "critical")).delivery, .alert)
    }

    func testBackgroundAndExpiry() {
        let h = PipelineHarness(Policy())
        let background = h.decide(note(headers: "{\"apns-push-type\":\"background\"}"))
        XCTAssertEqual(background.delivery, .background)
        XCTAssertNil(background.group)
        let contentAvailable = h.decide("{\"app\":\"a\",\"payload\":{\"aps\":{\"content-available\":1}}}")
        XCTAssertEqual(contentAvailable.delivery, .background)
        // A badge alone shows nothing: a background push that updates the icon.
        let withBadge = h.decide("{\"app\":\"a\",\"payload\":{\"aps\":{\"content-available\":1,\"badge\":3}}}")
        XCTAssertEqual(withBadge.delivery, .background)
        XCTAssertEqual(withBadge.badge, 3)

        // 2026-11-23T09:00:00Z = 1795424400
        let expired = h.decide(note(date: "2026-11-23T10:00:00Z", headers: "{\"apns-expiration\":1795424400}"))
        XCTAssertEqual(expired.delivery, .dropped)
        let future = h.decide(note(date: "2026-11-23T08:00:00Z", headers: "{\"apns-expiration\":1795424400}"))
        XCTAssertEqual(future.delivery, .alert)
        let nowOrNever = h.decide(note(date: "2026-11-23T10:00:00Z", headers: "{\"apns-expiration\":0}"))
        XCTAssertEqual(nowOrNever.delivery, .alert)
    }

    func testRuleLevelNeedsNoEntitlementAndForcedDelivery() {
        var p = Policy(rules: [Policy.RuleInfo(name: "test rule", file: "test.lua", line: 1)])
        p.apps["com.example.app"] = AppSettings()
        let h = PipelineHarness(
            p,
            rules: ClosureRules { subject, _ in
                subject.envelope.body == "SEV1" ? RuleChanges(level: .critical, reason: "SEV1 page") : nil
            })
        let d = h.decide(note(body: "SEV1"))
        XCTAssertEqual(d.level, .critical)
        XCTAssertEqual(d.alert?.bypassRinger, true)
        XCTAssertEqual(d.rules, ["test rule"])
        XCTAssertTrue(d.reasons.contains("rule 'test rule': SEV1 page"))
        XCTAssertEqual(h.decide(note(body: "other")).level, .active)

        let dropper = PipelineHarness(p, rules: ClosureRules { _, _ in RuleChanges(delivery: .dropped) })
        XCTAssertEqual(dropper.decide(note()).delivery, .dropped)
    }
}
