import HushCore
import HushJSON
import HushState
import XCTest

/// Every read the pipeline makes of state, when it fails, fails the evaluation with the store's
/// error: no decision is made as if that state were empty.
final class StateReadFailureTests: XCTestCase {
    struct ReadFailed: Error, Equatable {
        var read: String
    }

    /// State in memory in which the read named `failing` throws.
    final class StateFailingOneRead: StateReading {
        let store = InMemoryStateStore()
        var failing: String?

        private func check(_ read: String) throws {
            if read == failing { throw ReadFailed(read: read) }
        }

        func delivered(user: String, app: String, id: String) throws -> StoredNotification? {
            try check("delivered")
            return store.delivered(user: user, app: app, id: id)
        }

        func queued(user: String, app: String, id: String) throws -> StoredNotification? {
            try check("queued")
            return store.queued(user: user, app: app, id: id)
        }

        func groupMembers(user: String, groupID: String) throws -> [StoredNotification] {
            try check("groupMembers")
            return store.groupMembers(user: user, groupID: groupID)
        }

        func calls(user: String, since: Double) throws -> [CallRecord] {
            try check("calls")
            return store.calls(user: user, since: since)
        }

        func manualFocus(user: String) throws -> ManualFocus? {
            try check("manualFocus")
            return store.manualFocus(user: user)
        }

        func recent(user: String, since: Double) throws -> [StoredNotification] {
            try check("recent")
            return store.recent(user: user, since: since)
        }

        func interactions(user: String, since: Double) throws -> [Interaction] {
            try check("interactions")
            return store.interactions(user: user, since: since)
        }

        func groupDigest(user: String, groupID: String) throws -> GroupDigest? {
            try check("groupDigest")
            return store.groupDigest(user: user, groupID: groupID)
        }
    }

    let now = RFC3339.parse("2026-11-23T10:00:00+01:00")!
    // Sleep, turned on by hand: calls ring only when repeated, messages pass from suggested people.
    let pipeline = Pipeline(
        policy: Policy(
            timezone: "UTC",
            focuses: [
                FocusSettings(name: "Sleep", suggested: 1, calls: .nobody, repeatedCalls: true)
            ]))

    func evaluate(_ json: String, in state: StateFailingOneRead) throws -> Pipeline.Outcome {
        var envelope = try Envelope.decode(JSONParser.parse(json), fallbackID: "generated")
        envelope.date = now
        return try pipeline.evaluate(
            envelope, now: now, context: EvaluationContext(), state: state, rules: nil,
            clock: pipeline.defaultClock)
    }

    func testEachFailedReadFailsTheEvaluationThatNeedsIt() throws {
        let withdrawGrouped = #"{"app":"com.example.chat","id":"grouped","withdraw":true}"#
        let cases: [(read: String, notification: String)] = [
            ("manualFocus", note()),
            ("delivered", note(id: "update")),
            ("queued", note(id: "update")),
            ("calls", note("com.apple.phone", communication: call(from: "+15550001"))),
            ("interactions", note("com.example.chat", communication: message(from: "+15550001"))),
            ("groupDigest", note("com.example.chat")),
            ("groupMembers", withdrawGrouped),
        ]
        for (read, notification) in cases {
            let state = StateFailingOneRead()
            state.store.setManualFocus(user: "default", ManualFocus(name: "Sleep", since: now - 3600, until: nil))
            state.store.apply([
                .deliver(
                    StoredNotification(
                        user: "default", app: "com.example.chat", id: "grouped",
                        date: now - 60, groupID: "com.example.chat"))
            ])
            // With every read working, the notification is decided: the failure below is the read's alone.
            XCTAssertNoThrow(try evaluate(notification, in: state), read)
            state.failing = read
            XCTAssertThrowsError(try evaluate(notification, in: state), read) { error in
                XCTAssertEqual(error as? ReadFailed, ReadFailed(read: read))
            }
        }
    }
}
