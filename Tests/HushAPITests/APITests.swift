// What an embedder can do with `import Hush` alone: this target depends on nothing else, and
// builds with MemberImportVisibility, so every name used here is part of the public API.
import Foundation
import Hush
import XCTest

final class APITests: XCTestCase {
    let policy = """
        timezone "Europe/Berlin"
        app "com.example.news" { summary = true }
        summary { at = { "08:00" } }
        focus "Work" { people = { "alice@example.com" }, apps = { "com.example.mail" } }
        rule("pages mentioning SEV1 are critical", function(n, ctx)
          if n.app == "com.example.pager" and (n.body or ""):find("SEV1") then
            return { level = "critical", reason = "SEV1 page" }
          end
        end)
        """

    func line(_ app: String, _ id: String, body: String, date: String = "2026-03-02T10:00:00+01:00") -> String {
        #"{"app":"\#(app)","id":"\#(id)","date":"\#(date)","payload":{"aps":{"alert":{"title":"T","body":"\#(body)"},"sound":"default"}}}"#
    }

    func testDecidesWithReasonsAndTheSameLineAsTheCLI() throws {
        let engine = try Engine(policy: policy)
        let session = try engine.makeSession()
        let envelope = try session.envelope(fromJSON: line("com.example.pager", "p1", body: "SEV1 db down"))
        XCTAssertEqual(envelope.app, "com.example.pager")
        XCTAssertEqual(envelope.requestedLevel, .active)
        let decision = try session.evaluate(envelope, context: EvaluationContext(focus: .on("Work")))
        XCTAssertEqual(decision.delivery, .alert)
        XCTAssertEqual(decision.level, .critical)
        XCTAssertEqual(decision.breakthrough, .critical)
        XCTAssertEqual(decision.rules, ["pages mentioning SEV1 are critical"])
        XCTAssertTrue(
            decision.jsonString.hasPrefix(#"{"id":"p1","app":"com.example.pager","user":"default","delivery":"alert""#))
        XCTAssertNil(decision.trace)
        let explained = try session.evaluate(
            try session.envelope(fromJSON: line("com.example.pager", "p2", body: "ok")), explain: true)
        XCTAssertFalse(explained.trace?.isEmpty ?? true)
    }

    func testABadPolicyListsEveryProblemWithItsLine() {
        XCTAssertThrowsError(
            try Engine(policy: "app \"x\" { sumary = true }\nfocus \"A\" { calls = \"some\" }", name: "p.lua")
        ) {
            let error = $0 as! HushError
            XCTAssertEqual(error.code, .invalidPolicy)
            XCTAssertEqual(error.problems.count, 2)
            XCTAssertTrue(error.problems[0].hasPrefix("p.lua:1: "), error.problems[0])
            XCTAssertTrue(error.problems[1].hasPrefix("p.lua:2: "), error.problems[1])
        }
        XCTAssertThrowsError(try Engine(policyFiles: ["/nonexistent/policy.lua"])) {
            XCTAssertEqual(($0 as! HushError).code, .unreadablePolicy)
        }
    }

    func testLimitsStopARuleThatNeverEndsAndTheDecisionIsStillMade() throws {
        var limits = Engine.Limits()
        limits.graceMilliseconds = 0
        limits.instructionLimit = 100_000
        limits.timeLimitMilliseconds = 200
        let engine = try Engine(
            policy: #"rule("spins", function(n) while true do end end)"#, name: "spin.lua", limits: limits)
        let session = try engine.makeSession()
        let decision = try session.evaluate(try session.envelope(fromJSON: line("com.example.chat", "c1", body: "hi")))
        XCTAssertEqual(decision.delivery, .alert)
        XCTAssertEqual(decision.errors.count, 1)
        XCTAssertTrue(decision.errors[0].hasPrefix("rule 'spins': spin.lua:1: "), decision.errors[0])
    }

    func testABadNotificationNamesTheFieldAndLine() throws {
        let session = try Engine().makeSession()
        XCTAssertThrowsError(
            try session.envelope(fromJSON: #"{"app":"a","payload":{"aps":{"interruption-level":"loud"}}}"#, line: 7)
        ) {
            let error = $0 as! HushError
            XCTAssertEqual(error.code, .invalidInput)
            XCTAssertEqual(error.field, "payload.aps.interruption-level")
            XCTAssertEqual(error.line, 7)
        }
    }

    func testAHeldSummaryIsDeliveredAtItsTime() throws {
        let session = try Engine(policy: policy).makeSession(store: InMemoryStateStore())
        let held = try session.evaluate(
            try session.envelope(fromJSON: line("com.example.news", "n1", body: "Headline")))
        XCTAssertEqual(held.delivery, .summary)
        let at = try XCTUnwrap(held.summaryAt)
        XCTAssertEqual(try session.deliverDueSummaries(user: "default", at: at - 1), [])
        let delivered = try session.deliverDueSummaries(user: "default", at: at)
        XCTAssertEqual(delivered.map { $0.notifications.map(\.id) }, [["n1"]])
        let event = HushEvent.summary(delivered[0])
        XCTAssertEqual(event.user, "default")
        XCTAssertTrue(
            event.jsonString(timeZone: "Europe/Berlin").hasPrefix(
                #"{"event":"summary","user":"default","at":"2026-03-03T08:00:00+01:00","notifications":[{"id":"n1""#))
        XCTAssertEqual(try session.deliverDueSummaries(user: "default", at: at + 86400), [], "delivered once")
    }

    func testStateInASQLiteFileOutlivesTheSession() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hush-api-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let engine = try Engine(policy: policy)
        do {
            let session = try engine.makeSession(store: try SQLiteStateStore(path: path))
            XCTAssertEqual(
                try session.evaluate(try session.envelope(fromJSON: line("com.example.news", "n1", body: "a")))
                    .delivery, .summary)
        }
        let session = try engine.makeSession(store: try SQLiteStateStore(path: path))
        let delivered = try session.deliverDueSummaries(
            user: "default", at: Date(timeIntervalSince1970: 1_900_000_000).timeIntervalSince1970)
        XCTAssertEqual(delivered.flatMap { $0.notifications.map(\.id) }, ["n1"])
    }

    func testABatchCommitsItsDecisionsTogether() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hush-api-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let engine = try Engine(policy: policy)
        let store = try SQLiteStateStore(path: path)
        let session = try engine.makeSession(store: store)
        let envelopes = try (1...3).map {
            try session.envelope(fromJSON: line("com.example.news", "n\($0)", body: "h\($0)"))
        }
        let deliveries = try store.batch { envelopes.map { try? session.evaluate($0).delivery } }
        XCTAssertEqual(deliveries, [.summary, .summary, .summary])
        let reopened = try engine.makeSession(store: try SQLiteStateStore(path: path))
        let due = try reopened.deliverDueSummaries(user: "default", at: 1_900_000_000)
        XCTAssertEqual(due.flatMap { $0.notifications.map(\.id) }.sorted(), ["n1", "n2", "n3"])
    }

    func testAStateFileThatCannotBeUsedIsRefusedWithACode() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hush-api-\(UUID())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let notHush = dir + "/other.sqlite"
        try Data("not a database at all, just text".utf8).write(to: URL(fileURLWithPath: notHush))
        XCTAssertThrowsError(try SQLiteStateStore(path: notHush)) {
            let error = $0 as! HushError
            XCTAssertEqual(error.code, .stateUnusable)
            XCTAssertTrue(error.message.contains(notHush), error.message)
        }
        XCTAssertThrowsError(try SQLiteStateStore(path: dir + "/s.sqlite", retentionDays: 0)) {
            XCTAssertEqual(($0 as! HushError).code, .stateUnusable)
        }
    }

    func testOneEngineServesSessionsOnSeveralThreads() throws {
        // Engine is Sendable: shared by the threads; each makes its own Session.
        let engine = try Engine(policy: policy, limits: Engine.Limits())
        let results = Results()
        let line = self.line("com.example.mail", "m", body: "hi")
        DispatchQueue.concurrentPerform(iterations: 4) { i in
            let delivery = try? engine.makeSession().evaluate(
                engine.makeSession().envelope(fromJSON: line), context: EvaluationContext(focus: .on("Work"))
            ).delivery
            results.set(i, delivery)
        }
        XCTAssertEqual(results.all, Array(repeating: .alert, count: 4))
    }
}

final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int: Decision.Delivery?] = [:]
    func set(_ i: Int, _ value: Decision.Delivery?) { lock.lock(); values[i] = value; lock.unlock() }
    var all: [Decision.Delivery?] {
        lock.lock(); defer { lock.unlock() }; return values.keys.sorted().map { values[$0]! }
    }
}
