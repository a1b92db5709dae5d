import Hush
import HushCore
import HushJSON
import HushPolicy
import XCTest

/// The public library, as an embedder uses it.
final class EngineTests: XCTestCase {
    let source = PolicySource(
        name: "policy.lua",
        text: """
            timezone "Europe/Berlin"
            app "com.example.news" { summary = true }
            summary { at = { "18:00" } }
            focus "Work" { apps = { "com.example.mail" } }
            rule("VIP subject lines are time-sensitive", function(n, ctx)
              if n.title:find("^VIP") then return { level = "time-sensitive", reason = "VIP" } end
            end)
            """)

    func envelope(_ json: String) throws -> Envelope {
        try Envelope.decode(try JSONParser.parse(json), fallbackID: UUID().uuidString)
    }

    func testPrepareOnceEvaluateMany() throws {
        let engine = try Engine(sources: [source])
        XCTAssertEqual(engine.policy.focuses.map(\.name), ["Work"])
        let session = try engine.makeSession()
        let context = EvaluationContext(now: RFC3339.parse("2026-11-23T10:00:00+01:00"), focus: .on("Work"))
        let mail = try session.evaluate(
            try envelope("{\"app\":\"com.example.mail\",\"payload\":{\"aps\":{\"alert\":\"hi\"}}}"), context: context)
        XCTAssertEqual(mail.breakthrough, .app)
        let vip = try session.evaluate(
            try envelope("{\"app\":\"chat\",\"payload\":{\"aps\":{\"alert\":{\"title\":\"VIP: call me\"}}}}"),
            context: context)
        XCTAssertEqual(vip.level, .timeSensitive)
        XCTAssertEqual(vip.breakthrough, .timeSensitive)
        XCTAssertEqual(vip.rules, ["VIP subject lines are time-sensitive"])
        let news = try session.evaluate(
            try envelope("{\"app\":\"com.example.news\",\"payload\":{\"aps\":{\"alert\":\"x\"}}}"), context: context)
        XCTAssertEqual(news.delivery, .summary)
        XCTAssertEqual(news.summaryAt, RFC3339.parse("2026-11-23T18:00:00+01:00"))
    }

    /// A store in memory that keeps no outbox (a batch command's: `hush eval --ephemeral`) still
    /// delivers the same summaries; only the events a service would send are not made.
    func testAStoreWithoutAnOutboxDeliversTheSameSummaries() throws {
        let engine = try Engine(sources: [source])
        var delivered: [[SummaryDelivery]] = []
        for keepsEvents in [true, false] {
            let store = InMemoryStateStore()
            store.keepsEvents = keepsEvents
            let session = try engine.makeSession(store: store)
            let context = EvaluationContext(now: RFC3339.parse("2026-11-23T10:00:00+01:00"))
            for id in ["n1", "n2"] {
                let news = try session.evaluate(
                    try envelope(#"{"app":"com.example.news","id":"\#(id)","payload":{"aps":{"alert":"x"}}}"#),
                    context: context)
                XCTAssertEqual(news.delivery, .summary)
            }
            delivered.append(
                try session.deliverDueSummaries(user: "default", at: RFC3339.parse("2026-11-23T18:00:00+01:00")!))
            XCTAssertEqual(try store.events(after: 0, user: nil, limit: 10).count, keepsEvents ? 1 : 0)
        }
        XCTAssertEqual(delivered[0].map { $0.notifications.map(\.id) }, [["n1", "n2"]])
        XCTAssertEqual(delivered[1], delivered[0])
    }

    func testLoadErrorsCarryEveryProblem() {
        XCTAssertThrowsError(
            try Engine(sources: [
                PolicySource(name: "p.lua", text: "app \"x\" { sumary = true }\nfocus \"A\" { calls = \"some\" }")
            ])
        ) { error in
            let problems = (error as? PolicyLoadError)?.problems ?? []
            XCTAssertEqual(problems.map(\.line), [1, 2])
            XCTAssertEqual(problems.first?.file, "p.lua")
        }
    }

    func testSessionsOnTwoThreadsShareOneEngine() throws {
        let engine = try Engine(sources: [source])
        let results = Mutex2()
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            do {
                let session = try engine.makeSession()
                var alerts = 0
                for i in 0..<500 {
                    let e = try Envelope.decode(
                        try JSONParser.parse(
                            "{\"app\":\"chat\",\"user\":\"u\(worker)\",\"id\":\"m\(i)\",\"payload\":{\"aps\":{\"alert\":{\"title\":\"VIP \(i)\"}}}}"
                        ), fallbackID: "x")
                    let d = try session.evaluate(e, context: EvaluationContext(now: 1_795_424_400))
                    if d.level == .timeSensitive { alerts += 1 }
                }
                results.add(alerts)
            } catch {
                results.add(-1)
            }
        }
        XCTAssertEqual(results.values.sorted(), [500, 500])
    }

    func testPolicyTestSuiteRunsLuaTests() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hush-suite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let testFile = dir.appendingPathComponent("p_test.lua").path
        try """
        test("news waits for the summary", {
          context = { now = "2026-11-23T10:00:00+01:00" },
          notification = { app = "com.example.news", payload = { aps = { alert = "x" } } },
          expect = { delivery = "summary", summary_at = "2026-11-23T18:00:00+01:00", group = null },
        })
        """.write(toFile: testFile, atomically: true, encoding: .utf8)
        let suite = try PolicyTestSuite(testFile: testFile)
        XCTAssertEqual(suite.cases.count, 1)
        let result = suite.run(engine: try Engine(sources: [source]))
        XCTAssertEqual(result.summaryLine, "1 passed, 0 failed", result.failures.map(\.description).joined())
    }

    /// A test's `expect` is checked against these lists before it runs: they must be the
    /// decision's own fields, in the order it prints them.
    func testPolicyTestSuiteKnowsTheDecisionsFields() throws {
        let session = try Engine(sources: [source]).makeSession()
        let decision = try session.evaluate(
            try envelope("{\"app\":\"chat\",\"payload\":{\"aps\":{\"alert\":\"hi\",\"sound\":\"default\"}}}"),
            explain: true)
        guard case .object(let json) = try JSONParser.parse(decision.jsonString) else {
            return XCTFail("not an object")
        }
        XCTAssertEqual(json.keys, PolicyTestSuite.decisionFields)
        XCTAssertEqual(Set(PolicyTestSuite.objectFields.keys), ["alert", "group"])
        for (field, fields) in PolicyTestSuite.objectFields {
            XCTAssertEqual(json[field]?.objectValue?.keys, fields, field)
        }
    }
}

/// A tiny lock-protected list for the threaded test.
final class Mutex2: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [Int] = []
    func add(_ v: Int) { lock.lock(); list.append(v); lock.unlock() }
    var values: [Int] { lock.lock(); defer { lock.unlock() }; return list }
}
