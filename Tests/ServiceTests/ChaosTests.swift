import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import XCTest

/// A webhook receiver that can be down (no listener: connections refused), refusing (503) or
/// accepting, on a port chosen before it first listens; it records every try.
final class SwitchableReceiver: @unchecked Sendable {
    struct Try: Sendable {
        var key: String
        var eventID: Int64
        var acknowledged: Bool
    }

    private let lock = NSLock()
    private var tries: [Try] = []
    private var refusing = false
    private var task: Task<Void, any Error>?
    let port: Int

    /// Not listening yet: connections to `url` are refused until `listen()`.
    init() throws { port = try freeLoopbackPort() }

    var url: String { "http://127.0.0.1:\(port)/hook" }

    var all: [Try] { lock.withLock { tries } }
    var acknowledged: [Try] { all.filter(\.acknowledged) }

    /// While true, every try is answered 503.
    func refuse(_ value: Bool) { lock.withLock { refusing = value } }

    func listen() async throws {
        let router = Router()
        router.post("/hook") { [self] request, _ -> Response in
            var request = request
            _ = try await request.collectBody(upTo: 1 << 20)
            let key = request.headers[HTTPField.Name("Idempotency-Key")!] ?? ""
            let id = Int64(request.headers[HTTPField.Name("Hush-Event-Id")!] ?? "") ?? -1
            let ok = lock.withLock {
                tries.append(Try(key: key, eventID: id, acknowledged: !refusing))
                return !refusing
            }
            return Response(status: ok ? .ok : .serviceUnavailable)
        }
        let (started, continuation) = AsyncStream.makeStream(of: Bool.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { _ in continuation.yield(true) })
        task = Task { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
    }

    func wait(timeout: TimeInterval, until condition: ([Try]) -> Bool) async -> [Try] {
        _ = await poll(timeout: timeout) { condition(all) }
        return all
    }

    deinit { task?.cancel() }
}

/// Whether `condition` came to hold within `timeout` seconds (looked at every 20 ms).
func poll(timeout: TimeInterval, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}

/// A loopback port nobody listens on now (bound, read, closed).
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EMFILE) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw POSIXError(.EADDRINUSE) }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// `sqlite3 FILE SQL`'s output lines (the state file read from outside, as an operator would).
func sqlite(_ path: String, _ sql: String) throws -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    process.arguments = [path, sql]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
}

final class ChaosTests: XCTestCase {
    override func setUpWithError() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs sqlite3")
    }

    static func envelope(_ app: String, _ id: String, user: String, category: String) -> String {
        #"{"app":"\#(app)","id":"\#(id)","user":"\#(user)","payload":{"aps":{"alert":{"title":"T \#(id)","body":"B"},"category":"\#(category)","thread-id":"t"}}}"#
    }

    /// The receiver is down (connections refused, then 503) while the server's clock runs through
    /// 15 hours with a retention of 14.4 minutes and an hourly prune: the events keep accumulating
    /// in state, none pruned. Once it accepts, it gets every event exactly once, in seq order, and
    /// then the prunes forget the acknowledged old ones.
    func testAWebhookDownForHoursKeepsItsEventsInStateAndGetsEachOnceInOrder() async throws {
        let folder = try temporaryFolder("webhook-down")
        let state = folder.appendingPathComponent("state.sqlite").path
        let receiver = try SwitchableReceiver()
        let server = try ServerProcess([
            "--policy", "policies/personal.lua", "--context", "examples/context.json", "--state", state,
            "--clock", "2026-11-24T07:00:00+01:00", "--speed", "3600", "--retention", "0.01",
            "--webhook", receiver.url,
        ])
        let began = Date()
        let users = (1...4).map { "u\($0)" }
        func send(_ round: Int) async throws {
            let batch = users.flatMap { user in
                [
                    Self.envelope("com.example.news", "n\(round)", user: user, category: "STORY"),
                    Self.envelope("com.example.shop", "s\(round)", user: user, category: "DEAL"),
                ]
            }
            let answer = try await HTTP.send(
                .POST, server.base + "/v1/notifications", body: batch.joined(separator: "\n"))
            XCTAssertEqual(answer.status, 200, answer.body)
            for user in users {
                for focus in [#""Personal""#, "null"] {
                    let set = try await HTTP.send(
                        .PUT, server.base + "/v1/users/\(user)/focus", body: #"{"focus":\#(focus)}"#)
                    XCTAssertEqual(set.status, 200, set.body)
                }
            }
        }
        // Held for 08:00, then (sent around 12:00) for 18:00; the focus on and off by hand each time.
        try await send(1)
        try await Task.sleep(until: .now + .seconds(max(0, 5 - Date().timeIntervalSince(began))))
        try await send(2)
        // Past 22:00: the 08:00 and 18:00 summaries, Personal on and off by its schedule.
        try await Task.sleep(for: .seconds(max(0, 16 - Date().timeIntervalSince(began))))

        let recorded = Int(try sqlite(state, "SELECT seq FROM sqlite_sequence WHERE name = 'events'").first ?? "0")!
        let kept = Int(try sqlite(state, "SELECT count(*) FROM events").first ?? "0")!
        let prunes = Int(try sqlite(state, "SELECT seq FROM cursors WHERE name = 'prunes'").first ?? "0")!
        // Each user: 4 focus changes by hand, the 08:00 and 18:00 summaries, Personal on and off by its schedule.
        let expected = users.count * 8
        XCTAssertEqual(recorded, expected, "every event recorded")
        XCTAssertEqual(kept, recorded, "none pruned while the webhook has not taken them")
        XCTAssertGreaterThanOrEqual(prunes, 10, "pruned hourly through the day")
        XCTAssertTrue(server.stderr.contains("webhook did not acknowledge"), server.stderr)
        XCTAssertEqual(receiver.all.count, 0)

        // Up, but refusing for a while; then accepting.
        try await receiver.listen()
        receiver.refuse(true)
        _ = await receiver.wait(timeout: 70) { !$0.isEmpty }
        receiver.refuse(false)
        let tries = await receiver.wait(timeout: 90) { $0.filter(\.acknowledged).count >= recorded }
        let acknowledged = tries.filter(\.acknowledged)
        XCTAssertEqual(acknowledged.map(\.eventID), (1...Int64(recorded)).map { $0 }, "each once, in seq order")
        XCTAssertEqual(Set(acknowledged.map(\.key)).count, recorded)

        // Acknowledged and older than the retention: the next prunes forget them.
        let forgotten = await poll(timeout: 10) {
            Int((try? sqlite(state, "SELECT count(*) FROM events").first) ?? "") ?? recorded < recorded
        }
        XCTAssertTrue(forgotten, "acknowledged old events are pruned")
        try await Task.sleep(for: .seconds(1))
        XCTAssertEqual(receiver.acknowledged.count, recorded, "nothing sent again")
        XCTAssertEqual(server.stop(), 0, server.stderr)
    }

    /// As `HTTP.send`, but given up after 5 s: a request to a server killed under it must not
    /// hold its client for a minute.
    static func send(_ method: HTTPMethod, _ url: String, body: String) async throws -> HTTPAnswer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(5))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return HTTPAnswer(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    /// kill -9 at 20 random moments while four clients send notifications and set focuses for
    /// eight users, the server restarted each time on the same SQLite file (its clock going on
    /// where it was). Every decision answered 200 is in state, and every event of the outbox
    /// reached the webhook; a copy sent twice is only ever the event in flight at a kill.
    func testKillNineUnderLoadLosesNothingAcknowledged() async throws {
        let folder = try temporaryFolder("chaos")
        let state = folder.appendingPathComponent("state.sqlite").path
        let receiver = try SwitchableReceiver()
        try await receiver.listen()
        let speed = 1800.0
        let clockStart = Date()
        // 07:30 in Berlin: the 08:00 summary, then 18:00's and the Personal focus, within the run.
        let startInstant = try XCTUnwrap(ISO8601DateFormatter().date(from: "2026-11-24T06:30:00Z"))
        func clockNow() -> String {
            let t = startInstant.addingTimeInterval(Date().timeIntervalSince(clockStart) * speed)
            return ISO8601DateFormatter().string(from: t)
        }
        func start() throws -> ServerProcess {
            try ServerProcess([
                "--policy", "policies/personal.lua", "--context", "examples/context.json", "--state", state,
                "--clock", clockNow(), "--speed", String(speed), "--webhook", receiver.url,
            ])
        }
        let current = Current(try start())
        let users = (0..<8).map { "u\($0)" }
        let acknowledged = Acknowledged()
        let stop = Flag()
        let apps = [
            ("com.example.news", "STORY"), ("com.example.shop", "DEAL"), ("com.example.chat", "MESSAGE"),
            ("com.example.bank", "TRANSACTION"),
        ]
        let clients = (0..<4).map { client in
            Task {
                var n = 0
                while !stop.value {
                    n += 1
                    let ids = (0..<8).map { i in
                        (user: users[(n + i + client) % users.count], id: "c\(client)-\(n)-\(i)")
                    }
                    let body = ids.enumerated().map { i, x in
                        Self.envelope(apps[i % apps.count].0, x.id, user: x.user, category: apps[i % apps.count].1)
                    }.joined(separator: "\n")
                    let base = current.server.base
                    do {
                        // A focus change by hand each round: events recorded under load, for the webhook.
                        do {
                            let focus = n % 2 == 0 ? "null" : #""Personal""#
                            _ = try await Self.send(
                                .PUT, base + "/v1/users/\(users[(n / 2 + client) % users.count])/focus",
                                body: #"{"focus":\#(focus)}"#)
                        }
                        let answer = try await Self.send(.POST, base + "/v1/notifications", body: body)
                        guard answer.status == 200 else { continue }
                        for line in answer.lines {
                            let json = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                            if let id = json?["id"] as? String, let user = json?["user"] as? String,
                                let app = json?["app"] as? String, let delivery = json?["delivery"] as? String
                            {
                                acknowledged.add(user: user, app: app, id: id, delivery: delivery)
                            }
                        }
                    } catch {
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                }
            }
        }
        var kills = 0
        let loadBegan = Date()
        for _ in 0..<20 {
            try await Task.sleep(for: .milliseconds(Int.random(in: 300...1500)))
            current.server.stop(signal: SIGKILL, timeout: 5)
            kills += 1
            current.server = try start()
        }
        try await Task.sleep(for: .seconds(1))
        stop.value = true
        for client in clients { await client.value }

        let loadSeconds = Date().timeIntervalSince(loadBegan)
        // The outbox, complete: every event reaches the receiver.
        let outbox = Set(try sqlite(state, "SELECT seq FROM events").compactMap { Int64($0) })
        let tries = await receiver.wait(timeout: 30) { tries in
            outbox.isSubset(of: Set(tries.filter(\.acknowledged).map(\.eventID)))
        }
        XCTAssertEqual(current.server.stop(), 0, current.server.stderr)
        let delivered = tries.filter(\.acknowledged)
        var copies: [Int64: Int] = [:]
        for t in delivered { copies[t.eventID, default: 0] += 1 }
        let missing = outbox.subtracting(copies.keys)
        let duplicates = copies.values.reduce(0) { $0 + $1 - 1 }
        XCTAssertTrue(missing.isEmpty, "events never delivered: \(missing.sorted())")
        XCTAssertTrue(Set(copies.keys).isSubset(of: outbox), "nothing delivered that is not in the outbox")
        XCTAssertLessThanOrEqual(duplicates, kills, "at most the event in flight at each kill is sent again")
        // In order: each event's first delivery after the previous one's.
        let firsts = delivered.map(\.eventID).reduce(into: [Int64]()) { if !$0.contains($1) { $0.append($1) } }
        XCTAssertEqual(firsts, firsts.sorted(), "first deliveries in seq order")

        // Every decision answered 200 is in state.
        // An arrival is a row of `arrivals`, or a delivered row that stands for it (schema v6).
        let arrived = Set(
            try sqlite(
                state,
                "SELECT user || ' ' || app || ' ' || id FROM arrivals UNION ALL "
                    + "SELECT user || ' ' || app || ' ' || id FROM delivered WHERE arrival_seq IS NOT NULL"))
        let answered = acknowledged.all
        let lost = answered.filter { !arrived.contains("\($0.user) \($0.app) \($0.id)") }
        XCTAssertTrue(lost.isEmpty, "acknowledged but not in state: \(lost.prefix(10))")
        print(
            "chaos: \(Int(loadSeconds)) s of load, kills \(kills), acknowledged decisions \(answered.count), found in state \(answered.count - lost.count), "
                + "events \(outbox.count), deliveries \(delivered.count), duplicates \(duplicates)")
        XCTAssertGreaterThan(answered.count, 500)
        XCTAssertGreaterThan(outbox.count, 100)
    }
}

/// The server now running (replaced at each restart), for the clients.
final class Current: @unchecked Sendable {
    private let lock = NSLock()
    private var value: ServerProcess
    init(_ server: ServerProcess) { value = server }
    var server: ServerProcess {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    var value: Bool {
        get { lock.withLock { flag } }
        set { lock.withLock { flag = newValue } }
    }
}

/// Every decision answered 200, by (user, app, id).
final class Acknowledged: @unchecked Sendable {
    struct Entry: Sendable { var user, app, id, delivery: String }
    private let lock = NSLock()
    private var entries: [Entry] = []
    func add(user: String, app: String, id: String, delivery: String) {
        lock.withLock { entries.append(Entry(user: user, app: app, id: id, delivery: delivery)) }
    }
    var all: [Entry] { lock.withLock { entries } }
}
