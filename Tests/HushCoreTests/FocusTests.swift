import HushCore
import XCTest

final class FocusTests: XCTestCase {
    let alice = Contact(handle: "alice@example.com", name: "Alice", favorite: true, aliases: ["+1 617 555 1212"])
    let bob = Contact(handle: "+49 30 1234567", name: "Bob")

    func harness(_ focus: FocusSettings, _ ctx: String = "{\"focus\":\"Work\"}") -> PipelineHarness {
        PipelineHarness(Policy(contacts: [alice, bob], focuses: [focus]), context: context(ctx))
    }

    func testBreakthroughOrderTable() {
        let work = FocusSettings(name: "Work", people: ["alice@example.com"], apps: ["com.example.mail"])
        struct Row {
            var json: String
            var delivery: Decision.Delivery
            var breakthrough: Decision.Breakthrough?
        }
        let rows: [Row] = [
            Row(json: note(), delivery: .silenced, breakthrough: nil),
            Row(json: note("com.example.mail"), delivery: .alert, breakthrough: .app),
            Row(json: note(level: "time-sensitive"), delivery: .alert, breakthrough: .timeSensitive),
            Row(json: note(level: "critical"), delivery: .silenced, breakthrough: nil),  // no critical_alerts: active
            Row(
                json: note("com.example.chat", communication: message(from: "ALICE@example.com")), delivery: .alert,
                breakthrough: .person),
            Row(
                json: note("com.example.chat", communication: message(from: "tel:+1 (617) 555-1212")), delivery: .alert,
                breakthrough: .person),
            Row(
                json: note("com.example.chat", communication: message(from: "carol@example.com")), delivery: .silenced,
                breakthrough: nil),
            Row(
                json: note("com.example.phone", communication: call(from: "6175551212")), delivery: .alert,
                breakthrough: .call),
            Row(
                json: note("com.example.mail", communication: message(from: "carol@example.com")), delivery: .alert,
                breakthrough: .app),
        ]
        for (i, row) in rows.enumerated() {
            let d = harness(work).decide(row.json)
            XCTAssertEqual(d.focus, "Work", "row \(i)")
            XCTAssertEqual(d.delivery, row.delivery, "row \(i): \(d.reasons)")
            XCTAssertEqual(d.breakthrough, row.breakthrough, "row \(i)")
        }
    }

    func testCriticalBreaksThroughWithEntitlement() {
        var p = Policy(
            apps: ["com.example.pager": AppSettings(criticalAlerts: true)],
            focuses: [FocusSettings(name: "Sleep", timeSensitive: false)])
        p.timezone = "UTC"
        let h = PipelineHarness(p, context: context("{\"focus\":\"Sleep\",\"ringer\":\"silent\"}"))
        let d = h.decide(note("com.example.pager", level: "critical"))
        XCTAssertEqual(d.breakthrough, .critical)
        XCTAssertEqual(d.alert?.sound, true)
        XCTAssertEqual(d.alert?.bypassRinger, true)
        XCTAssertEqual(h.decide(note("com.example.pager", level: "time-sensitive")).delivery, .silenced)
    }

    func testCallsSettingTable() {
        let cases: [(FocusSettings.Calls, String, Bool)] = [
            (.everyone, "+44 20 7946 0000", true),
            (.allowed, "alice@example.com", true),
            (.allowed, "+49 30 1234567", false),
            (.favorites, "+1 617 555 1212", true),
            (.favorites, "+49301234567", false),
            (.contacts, "030 1234567", true),  // a leading country code missing on one side
            (.contacts, "+44 20 7946 0000", false),
            (.nobody, "alice@example.com", false),
        ]
        for (calls, caller, rings) in cases {
            let focus = FocusSettings(name: "Work", people: ["alice@example.com"], calls: calls, repeatedCalls: false)
            let d = harness(focus).decide(note("com.example.phone", communication: call(from: caller)))
            XCTAssertEqual(d.delivery, rings ? .alert : .silenced, "\(calls) \(caller)")
            XCTAssertEqual(d.breakthrough, rings ? .call : nil, "\(calls) \(caller)")
        }
    }

    func testRepeatedCallsWithinThreeMinutesInclusive() {
        let focus = FocusSettings(name: "Sleep", calls: .nobody, repeatedCalls: true)
        let h = harness(focus, "{\"focus\":\"Sleep\"}")
        let first = h.decide(
            note("com.example.phone", date: "2026-11-23T03:00:00Z", communication: call(from: "+1 555 0100 999")))
        XCTAssertEqual(first.delivery, .silenced)
        // Same person from another app, exactly 3 minutes later: rings.
        let second = h.decide(
            note("com.example.facetime", date: "2026-11-23T03:03:00Z", communication: call(from: "15550100999")))
        XCTAssertEqual(second.delivery, .alert)
        XCTAssertEqual(second.breakthrough, .repeatedCall)
        // 3 minutes and 1 second after the previous call: silenced.
        let third = h.decide(
            note("com.example.phone", date: "2026-11-23T03:06:01Z", communication: call(from: "+1 555 0100 999")))
        XCTAssertEqual(third.delivery, .silenced)
        // Off: never rings.
        let off = harness(FocusSettings(name: "Sleep", calls: .nobody, repeatedCalls: false), "{\"focus\":\"Sleep\"}")
        off.decide(note("p", date: "2026-11-23T03:00:00Z", communication: call(from: "x@example.com")))
        XCTAssertEqual(
            off.decide(note("p", date: "2026-11-23T03:01:00Z", communication: call(from: "x@example.com"))).delivery,
            .silenced)
    }

    func testFavoritesAndSilenceModeAndLocked() {
        let fav = harness(FocusSettings(name: "Work", favorites: true))
        XCTAssertEqual(fav.decide(note("chat", communication: message(from: "+16175551212"))).breakthrough, .person)

        let silence = harness(
            FocusSettings(name: "Work", people: ["bob@example.com"], apps: ["com.example.games"], mode: .silence))
        XCTAssertEqual(silence.decide(note("com.example.games")).delivery, .silenced)
        XCTAssertEqual(silence.decide(note("com.example.news")).breakthrough, .app)
        XCTAssertEqual(
            silence.decide(note("chat", communication: message(from: "bob@example.com"))).delivery, .silenced)
        XCTAssertEqual(
            silence.decide(note("chat", communication: message(from: "carol@example.com"))).breakthrough, .person)
        XCTAssertEqual(silence.decide(note("com.example.games", level: "time-sensitive")).breakthrough, .timeSensitive)

        let lockedOnly = FocusSettings(name: "Work", silence: .locked)
        XCTAssertEqual(harness(lockedOnly, "{\"focus\":\"Work\",\"locked\":false}").decide(note()).delivery, .alert)
        XCTAssertEqual(harness(lockedOnly, "{\"focus\":\"Work\",\"locked\":true}").decide(note()).delivery, .silenced)
    }

    func testFocusFilters() {
        let focus = FocusSettings(name: "Work", apps: ["com.example.mail"], filters: ["com.example.mail": ["work"]])
        let h = harness(focus)
        XCTAssertEqual(h.decide(note("com.example.mail", extraAPS: "\"filter-criteria\":\"work\"")).breakthrough, .app)
        XCTAssertEqual(
            h.decide(note("com.example.mail", extraAPS: "\"filter-criteria\":\"personal\"")).delivery, .silenced)
        XCTAssertEqual(
            h.decide(note("com.example.mail", level: "time-sensitive", extraAPS: "\"filter-criteria\":\"personal\""))
                .delivery, .silenced)
        XCTAssertEqual(h.decide(note("com.example.mail")).breakthrough, .app)  // no criteria: filters do not apply
    }

    func testContextFocusOffAndUnknownFocus() {
        let scheduled = FocusSettings(name: "Work", schedules: [Schedule(days: Set(1...7), from: 0, to: 0)])
        let p = Policy(focuses: [scheduled])
        XCTAssertEqual(PipelineHarness(p).decide(note()).focus, "Work")
        XCTAssertNil(PipelineHarness(p, context: context("{\"focus\":false}")).decide(note()).focus)
        XCTAssertNil(PipelineHarness(p, context: context("{\"focus\":\"off\"}")).decide(note()).focus)
        let adHoc = PipelineHarness(p, context: context("{\"focus\":\"Gym\"}")).decide(note())
        XCTAssertEqual(adHoc.focus, "Gym")
        XCTAssertEqual(adHoc.delivery, .silenced)
    }

    func testRuleAllowBreaksThrough() {
        var p = Policy(focuses: [FocusSettings(name: "Work")])
        p.rules = [Policy.RuleInfo(name: "test rule", file: "t.lua", line: 1)]
        let h = PipelineHarness(
            p, context: context("{\"focus\":\"Work\"}"),
            rules: ClosureRules { s, _ in
                s.envelope.app == "vip" ? RuleChanges(allow: true) : nil
            })
        XCTAssertEqual(h.decide(note("vip")).breakthrough, .rule)
        XCTAssertEqual(h.decide(note("other")).delivery, .silenced)
    }
}
