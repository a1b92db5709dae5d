import HushCore
import HushJSON
import HushPolicy
import XCTest

/// A state read a `hush.*` helper makes that fails is the store's error, thrown by `runRules`: it
/// is not a rule's error the evaluation goes on without, nor an answer of 0.
final class HelperStateReadTests: XCTestCase {
    struct ReadFailed: Error, Equatable {
        var read: String
    }

    /// State whose history cannot be read.
    struct UnreadableState: StateReading {
        func delivered(user: String, app: String, id: String) -> StoredNotification? { nil }
        func queued(user: String, app: String, id: String) -> StoredNotification? { nil }
        func groupMembers(user: String, groupID: String) -> [StoredNotification] { [] }
        func calls(user: String, since: Double) -> [CallRecord] { [] }
        func manualFocus(user: String) -> ManualFocus? { nil }
        func recent(user: String, since: Double) throws -> [StoredNotification] { throw ReadFailed(read: "recent") }
        func interactions(user: String, since: Double) throws -> [Interaction] {
            throw ReadFailed(read: "interactions")
        }
    }

    private func runRules(_ rules: String) throws -> [RuleReport] {
        let policy = try PolicyInterpreter(sources: [PolicySource(name: "history.lua", text: rules)])
        var subject = RuleSubject(
            envelope: try Envelope.decode(
                JSONParser.parse(#"{"app":"a","payload":{"aps":{"alert":"x"}}}"#),
                fallbackID: "x"))
        let now = 1_795_000_000.0
        let context = RuleContext(
            now: now, local: ZoneClock(identifier: "UTC")!.local(now), focus: nil, locked: true,
            ringer: .ring, audio: .none, user: "default", state: UnreadableState(),
            directory: Directory(contacts: []))
        return try policy.runRules(subject: &subject, context: context)
    }

    func testEachHelperThatReadsStateThrowsTheStoresError() {
        let calls = [
            ("hush.recent({ minutes = 5 })", "recent"),
            ("hush.interactions({ person = \"+15550001\" })", "interactions"),
            ("hush.suggested(3)", "interactions"),
        ]
        for (call, read) in calls {
            XCTAssertThrowsError(
                try runRules(
                    """
                    rule("quiet when busy", function(n, ctx)
                      if \(call) == 0 then return { level = "passive" } end
                    end)
                    """), call
            ) { error in
                XCTAssertEqual(error as? ReadFailed, ReadFailed(read: read), call)
            }
        }
    }

    /// A rule that catches the Lua error (pcall) and goes on as if nothing were in state does not
    /// hide the failure.
    func testARuleCatchingTheErrorDoesNotHideIt() {
        XCTAssertThrowsError(
            try runRules(
                """
                rule("careful", function(n, ctx)
                  local ok, count = pcall(hush.recent, { minutes = 5 })
                  if not ok then count = 0 end
                  return { reason = "recent: " .. count }
                end)
                rule("after", function(n, ctx) return { reason = "ran" } end)
                """)
        ) { error in
            XCTAssertEqual(error as? ReadFailed, ReadFailed(read: "recent"))
        }
    }
}
