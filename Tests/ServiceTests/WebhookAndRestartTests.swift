import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import XCTest

/// A webhook receiver of the test's own: refuses each event's first `failures` tries with 503,
/// then acknowledges; records every try.
final class WebhookReceiver: @unchecked Sendable {
    struct Try: Sendable {
        var key: String
        var attempt: String
        var body: String
        var acknowledged: Bool
    }

    private let lock = NSLock()
    private var tries: [Try] = []
    private var task: Task<Void, any Error>?
    private(set) var port = 0

    var all: [Try] {
        lock.lock()
        defer { lock.unlock() }
        return tries
    }
    var acknowledged: [Try] { all.filter(\.acknowledged) }

    init(failures: Int) async throws {
        let router = Router()
        router.post("/hook") { [self] request, _ -> Response in
            var request = request
            let body = String(buffer: try await request.collectBody(upTo: 1 << 20))
            let key = request.headers[HTTPField.Name("Idempotency-Key")!] ?? ""
            let attempt = request.headers[HTTPField.Name("Hush-Attempt")!] ?? ""
            let ok = record(key: key, attempt: attempt, body: body, failures: failures)
            return Response(status: ok ? .ok : .serviceUnavailable)
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) })
        task = Task { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = ports.makeAsyncIterator()
        port = await iterator.next() ?? 0
    }

    var url: String { "http://127.0.0.1:\(port)/hook" }

    /// Records a try; whether it is acknowledged.
    private func record(key: String, attempt: String, body: String, failures: Int) -> Bool {
        lock.withLock {
            let ok = tries.filter { $0.key == key }.count >= failures
            tries.append(Try(key: key, attempt: attempt, body: body, acknowledged: ok))
            return ok
        }
    }

    func wait(timeout: TimeInterval, until condition: ([Try]) -> Bool) async -> [Try] {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(all) { return all }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return all
    }

    deinit { task?.cancel() }
}

final class WebhookAndRestartTests: XCTestCase {
    /// Each event reaches the webhook once acknowledged, though the receiver refuses its first
    /// two tries; the tries carry one idempotency key per event, and events go in order.
    func testTheWebhookGetsEachEventOnceDespiteTwoFailedTries() async throws {
        let receiver = try await WebhookReceiver(failures: 2)
        let server = try ServerProcess([
            "--policy", "policies/work.lua", "--ephemeral", "--webhook", receiver.url,
        ])
        for (user, focus) in [("u1", "\"Work\""), ("u2", "\"Work\""), ("u1", "null")] {
            let answer = try await HTTP.send(
                .PUT, server.base + "/v1/users/\(user)/focus", body: #"{"focus":\#(focus)}"#)
            XCTAssertEqual(answer.status, 200, answer.body)
        }
        let tries = await receiver.wait(timeout: 20) { $0.filter(\.acknowledged).count >= 3 }
        let acknowledged = tries.filter(\.acknowledged)
        XCTAssertEqual(acknowledged.count, 3, "\(tries.map { ($0.key, $0.attempt, $0.acknowledged) })")
        XCTAssertEqual(Set(acknowledged.map(\.key)).count, 3, "each event acknowledged once")
        for ack in acknowledged {
            XCTAssertEqual(tries.filter { $0.key == ack.key }.count, 3, "two refusals, then the acknowledged try")
            XCTAssertEqual(ack.attempt, "3")
        }
        let bodies = acknowledged.map { try! JSONSerialization.jsonObject(with: Data($0.body.utf8)) as! [String: Any] }
        XCTAssertEqual(bodies.map { $0["user"] as? String }, ["u1", "u2", "u1"], "in the order they happened")
        XCTAssertEqual(bodies.map { $0["focus"] as? String }, ["Work", "Work", nil])
        try await Task.sleep(for: .seconds(1))
        XCTAssertEqual(receiver.acknowledged.count, 3, "nothing is sent again once acknowledged")
        let metrics = try await HTTP.get(server.base + "/metrics").body
        XCTAssertTrue(metrics.contains("hush_webhook_retries_total 6"), metrics)
        XCTAssertEqual(server.stop(), 0, server.stderr)
    }

    /// kill -9 mid-day and restart on the same state: every summary is delivered, exactly once,
    /// and nothing decided before the kill is lost.
    func testKillNineAndRestartLosesNoEventAndDoublesNone() async throws {
        let folder = try temporaryFolder("restart")
        let policy = folder.appendingPathComponent("policy.lua")
        try EventsOverTimeTests.summaryPolicy.write(to: policy, atomically: true, encoding: .utf8)
        let state = folder.appendingPathComponent("state.sqlite").path
        let receiver = try await WebhookReceiver(failures: 0)
        func start(at clock: String) throws -> ServerProcess {
            try ServerProcess([
                "--policy", policy.path, "--state", state, "--clock", clock, "--speed", "600", "--webhook",
                receiver.url,
            ])
        }
        let users = (1...6).map { "u\($0)" }
        var first = try start(at: "2026-11-24T07:40:00+01:00")
        var lines: [String] = []
        for (i, user) in users.enumerated() {
            lines.append(EventsOverTimeTests.news("a\(i)", "07:4\(i)", user: user, relevance: nil))
            lines.append(EventsOverTimeTests.news("b\(i)", "07:4\(i)", user: user, relevance: 0.5))
        }
        let decided = try await HTTP.send(.POST, first.base + "/v1/notifications", body: lines.joined(separator: "\n"))
        XCTAssertEqual(decided.lines.count, 12)
        // Killed just before 08:00 (server time), while its scheduler runs.
        try await Task.sleep(for: .seconds(1.9))
        XCTAssertNil(first.stop(signal: SIGKILL, timeout: 5).flatMap { $0 == -9 ? nil : $0 })
        // Restarted after 08:00: what fell due while it was down is delivered now.
        first = try start(at: "2026-11-24T08:05:00+01:00")
        let acks = await receiver.wait(timeout: 20) { Set($0.filter(\.acknowledged).map(\.key)).count >= users.count }
        try await Task.sleep(for: .seconds(1))
        let acknowledged = receiver.acknowledged
        let keys = acknowledged.map(\.key)
        XCTAssertEqual(Set(keys).count, users.count, "one summary per user: \(acks.map(\.body))")
        XCTAssertEqual(keys.count, Set(keys).count, "none sent twice")
        var usersSeen: [String] = []
        for ack in acknowledged {
            let json = try JSONSerialization.jsonObject(with: Data(ack.body.utf8)) as! [String: Any]
            usersSeen.append(json["user"] as! String)
            XCTAssertEqual(json["at"] as? String, "2026-11-24T08:00:00+01:00")
            XCTAssertEqual((json["notifications"] as? [Any])?.count, 2, ack.body)
        }
        XCTAssertEqual(usersSeen.sorted(), users)
        // The whole outbox, from the start: each summary once.
        let replay = try await EventStreamReader(first.base + "/v1/events", headers: [("Last-Event-ID", "0")])
        let all = await replay.wait(timeout: 5) { $0.count >= users.count }
        XCTAssertEqual(all.count, users.count)
        XCTAssertEqual(first.stop(), 0)
    }

    /// SIGTERM: requests in flight are answered, what was decided is committed, exit status 0.
    func testSigtermAnswersWhatIsInFlightCommitsAndExitsZero() async throws {
        let folder = try temporaryFolder("sigterm")
        let policy = folder.appendingPathComponent("policy.lua")
        try EventsOverTimeTests.summaryPolicy.write(to: policy, atomically: true, encoding: .utf8)
        let state = folder.appendingPathComponent("state.sqlite").path
        let server = try ServerProcess([
            "--policy", policy.path, "--state", state, "--clock", "2026-11-24T07:00:00+01:00",
        ])
        let events = try await EventStreamReader(server.base + "/v1/events")
        let batch = (0..<3000).map { EventsOverTimeTests.news("n\($0)", "07:01", user: "u\($0 % 7)", relevance: nil) }
            .joined(separator: "\n")
        async let answer = HTTP.send(.POST, server.base + "/v1/notifications", body: batch)
        try await Task.sleep(for: .milliseconds(100))
        kill(server.process.processIdentifier, SIGTERM)
        let answered = try await answer
        XCTAssertEqual(answered.status, 200)
        XCTAssertEqual(answered.lines.count, 3000)
        XCTAssertEqual(server.stop(), 0, "exit status 0 after SIGTERM, with an event stream open")
        _ = events
        // Everything answered is in state.
        let status = try HushCommandLine.run([
            "status", "--json", "--policy", policy.path, "--state", state, "--user", "u0", "--now",
            "2026-11-24T07:30:00+01:00",
        ])
        let json = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(json?["pending_summary"] as? Int, 429, status.stdout + status.stderr)
    }
}
