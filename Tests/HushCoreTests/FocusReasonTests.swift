import HushCore
import HushState
import XCTest

/// The focus step's reason, word for word, however the focus came to be on.
final class FocusReasonTests: XCTestCase {
    let policy = Policy(
        contacts: [Contact(handle: "alice@example.com", name: "Alice", aliases: ["+1 617 555 1212"])],
        focuses: [
            FocusSettings(
                name: "Work", people: ["alice@example.com"], apps: ["com.example.mail"],
                calls: .allowed, filters: ["com.example.chat": ["urgent"]])
        ])

    func focusReason(_ d: Decision) -> String? {
        d.reasons.first { $0.hasPrefix("Focus ") }
    }

    func testReasonsByContext() {
        let h = PipelineHarness(policy, context: context("{\"focus\":\"Work\"}"))
        let on = "Focus Work is on (context)"
        XCTAssertEqual(
            focusReason(h.decide(note("com.example.app", communication: message(from: "carol@example.com")))),
            on + "; silenced: messages from carol@example.com are not allowed in Focus Work")
        XCTAssertEqual(
            focusReason(
                h.decide(note("com.example.app", communication: message(from: "tel:+16175551212", name: "Al")))),
            on + "; Al is an allowed person")
        XCTAssertEqual(
            focusReason(h.decide(note("com.example.app", communication: call(from: "6175551212")))),
            on + "; calls from Alice are allowed (allowed)")
        XCTAssertEqual(
            focusReason(h.decide(note("com.example.mail"))),
            on + "; " + h.pipeline.settings(for: "com.example.mail").name + " is an allowed app")
        XCTAssertEqual(
            focusReason(h.decide(note("com.example.app"))),
            on + "; silenced: " + h.pipeline.settings(for: "com.example.app").name
                + " is not an allowed app in Focus Work")
        XCTAssertEqual(
            focusReason(h.decide(note("com.example.chat", extraAPS: "\"filter-criteria\":\"games\""))),
            on + "; silenced: the focus filter for " + h.pipeline.settings(for: "com.example.chat").name
                + " lets through only \"urgent\", not \"games\"")
        XCTAssertEqual(
            focusReason(h.decide(note("com.example.app", level: "time-sensitive"))),
            on + "; time-sensitive notifications are allowed")
    }

    func testReasonByHand() {
        let h = PipelineHarness(policy)
        let since = RFC3339.parse("2026-11-23T09:00:00+01:00")!
        let until = RFC3339.parse("2026-11-23T12:00:00+01:00")!
        h.store.setManualFocus(user: "u1", ManualFocus(name: "Work", since: since, until: until))
        let d = h.decide(note("com.example.app", user: "u1"), at: "2026-11-23T10:00:00+01:00")
        XCTAssertEqual(
            focusReason(d),
            "Focus Work is on by hand until " + h.pipeline.defaultClock.format(until)
                + "; silenced: " + h.pipeline.settings(for: "com.example.app").name
                + " is not an allowed app in Focus Work")
        h.store.setManualFocus(user: "u2", ManualFocus(name: "Work", since: since))
        let open = h.decide(note("com.example.mail", user: "u2"), at: "2026-11-23T10:00:00+01:00")
        XCTAssertEqual(
            focusReason(open),
            "Focus Work is on by hand; " + h.pipeline.settings(for: "com.example.mail").name + " is an allowed app")
    }
}
