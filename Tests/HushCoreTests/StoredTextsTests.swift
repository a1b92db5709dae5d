import HushJSON
import HushState
import XCTest

@testable import HushCore

/// The evaluation's last step moves the envelope's texts into what state keeps when nothing else
/// holds the envelope, and copies them when something does (`Envelope.takeStoredTexts`): either
/// way state keeps them whole, and a copy someone else holds is left as it was.
final class StoredTextsTests: XCTestCase {
    private static let line = """
        {"user": "u1", "app": "com.example.chat", "id": "m1",
         "payload": {"aps": {"alert": {"title": "Alice Doe in Family", "body": "Lunch at the usual place tomorrow?",
           "summary-arg": "Alice Doe"}, "category": "MESSAGE", "thread-id": "family"}},
         "communication": {"kind": "message", "sender": {"handle": "alice.doe@example.com", "name": "Alice Doe"}}}
        """

    /// The line with `id`; without its communication when `fromPerson` is false (a message from
    /// a person passes a summary).
    private func envelope(id: String, fromPerson: Bool = true) throws -> Envelope {
        var line = Self.line.replacingOccurrences(of: "\"m1\"", with: "\"\(id)\"")
        if !fromPerson { line = String(line[..<line.range(of: ",\n \"communication\"")!.lowerBound]) + "}" }
        var envelope = try Envelope.decode(try JSONParser.parse(line), fallbackID: "unused")
        envelope.date = RFC3339.parse("2026-11-23T10:00:00+01:00")
        return envelope
    }

    private func assertWhole(
        _ n: StoredNotification?, id: String, sender: String?, file: StaticString = #filePath, line: UInt = #line
    ) {
        guard let n else { return XCTFail("\(id) is not in state", file: file, line: line) }
        XCTAssertEqual(n.user, "u1", file: file, line: line)
        XCTAssertEqual(n.app, "com.example.chat", file: file, line: line)
        XCTAssertEqual(n.id, id, file: file, line: line)
        XCTAssertEqual(n.title, "Alice Doe in Family", file: file, line: line)
        XCTAssertEqual(n.body, "Lunch at the usual place tomorrow?", file: file, line: line)
        XCTAssertEqual(n.category, "MESSAGE", file: file, line: line)
        XCTAssertEqual(n.summaryArgument, "Alice Doe", file: file, line: line)
        XCTAssertEqual(n.sender, sender, file: file, line: line)
        XCTAssertEqual(n.threadID, "family", file: file, line: line)
    }

    func testTakingFromAnEnvelopeAloneMovesAndFromASharedOneCopies() throws {
        var alone = try envelope(id: "m1")
        let moved = alone.takeStoredTexts()
        XCTAssertEqual(moved.title, "Alice Doe in Family")
        XCTAssertEqual(moved.sender, "alice.doe@example.com")
        XCTAssertEqual(moved.collapseKey, "m1")
        XCTAssertNil(alone.title, "moved out, not copied")

        var shared = try envelope(id: "m2")
        let kept = shared
        let copied = shared.takeStoredTexts()
        XCTAssertEqual(copied.body, "Lunch at the usual place tomorrow?")
        XCTAssertEqual(copied.summaryArgument, "Alice Doe")
        for e in [kept, shared] {
            XCTAssertEqual(e.title, "Alice Doe in Family")
            XCTAssertEqual(e.body, "Lunch at the usual place tomorrow?")
            XCTAssertEqual(e.user, "u1")
            XCTAssertEqual(e.sender?.handle, "alice.doe@example.com")
        }
    }

    /// Delivered (the grouping step) and held for a summary (the summary step), each with the
    /// envelope handed over alone and with a copy kept by the caller.
    func testStateKeepsEveryTextWhetherTheEnvelopeWasSharedOrNot() throws {
        for summary in [false, true] {
            let pipeline = Pipeline(
                policy: Policy(
                    timezone: "Europe/Berlin", apps: ["com.example.chat": AppSettings(summary: summary, name: "Chat")],
                    summaryTimes: [18 * 60]))
            let store = InMemoryStateStore()
            func evaluate(_ envelope: consuming Envelope) throws {
                let outcome = try pipeline.evaluate(
                    envelope, now: envelope.date!, context: EvaluationContext(), state: store, rules: nil,
                    clock: pipeline.defaultClock)
                XCTAssertEqual(outcome.decision.delivery, summary ? .summary : .alert)
                store.apply(outcome.changes)
            }
            try evaluate(envelope(id: "alone", fromPerson: !summary))
            let kept = try envelope(id: "shared", fromPerson: !summary)
            try evaluate(kept)
            XCTAssertEqual(kept.title, "Alice Doe in Family", "the caller's copy is left as it was")
            for id in ["alone", "shared"] {
                let n =
                    summary
                    ? store.queued(user: "u1", app: "com.example.chat", id: id)
                    : store.delivered(user: "u1", app: "com.example.chat", id: id)
                assertWhole(n, id: id, sender: summary ? nil : "alice.doe@example.com")
            }
        }
    }
}
