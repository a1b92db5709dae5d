import Foundation
import NIOHTTP1
import PostgresTestSupport
import XCTest

/// Several `hush serve` instances on one PostgreSQL database (SPEC §9): each test has a database
/// of its own on the tests' private cluster (scripts/test-postgres.sh).
final class SharedStateTests: XCTestCase {
    static let arguments = ["--policy", "policies/personal.lua", "--context", "examples/context.json"]

    /// examples/stream.jsonl once for each of `users`, interleaved line by line: one stream
    /// with several users whose notifications arrive together.
    static func multiUserStream(users: [String]) throws -> [(user: String, line: String)] {
        let stream = ServerProcess.root.appendingPathComponent("examples/stream.jsonl")
        var out: [(String, String)] = []
        for line in try String(contentsOf: stream, encoding: .utf8).split(separator: "\n") {
            for user in users {
                var object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
                object["user"] = user
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                out.append((user, String(decoding: data, as: UTF8.self)))
            }
        }
        return out
    }

    /// Two instances, each notification sent to one of them at random (each user's in order,
    /// the users at once): every decision is the one `hush eval` makes on the whole stream.
    func testTwoInstancesGiveTheDecisionsOneWould() async throws {
        let database = try PostgresTestCluster.makeDatabase()
        let users = (0..<6).map { "u\($0)" }
        let stream = try Self.multiUserStream(users: users)
        let expected = try HushCommandLine.run(
            ["eval", "--ephemeral"] + Self.arguments, stdin: stream.map(\.line).joined(separator: "\n"))
        XCTAssertEqual(expected.status, 0, expected.stderr)
        let expectedLines = expected.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(expectedLines.count, stream.count)

        let a = try ServerProcess(Self.arguments + ["--state", database])
        let b = try ServerProcess(Self.arguments + ["--state", database])
        let bases = [a.base, b.base]
        let answers = try await withThrowingTaskGroup(of: [(Int, String)].self) { group in
            for user in users {
                group.addTask {
                    var mine: [(Int, String)] = []
                    for (index, item) in stream.enumerated() where item.user == user {
                        let base = bases.randomElement()!
                        let answer = try await HTTP.send(.POST, base + "/v1/notifications", body: item.line)
                        XCTAssertEqual(answer.status, 200, answer.body)
                        mine.append((index, answer.body.trimmingCharacters(in: .newlines)))
                    }
                    return mine
                }
            }
            var all: [(Int, String)] = []
            for try await part in group { all += part }
            return all.sorted { $0.0 < $1.0 }.map(\.1)
        }
        XCTAssertEqual(answers.count, expectedLines.count)
        for (index, (got, want)) in zip(answers, expectedLines).enumerated() where got != want {
            XCTFail("line \(index + 1) (\(stream[index].user)): \(got)\n  one instance: \(want)")
            break
        }
        XCTAssertEqual(a.stop(), 0)
        XCTAssertEqual(b.stop(), 0)
    }

    /// A day of examples/stream.jsonl replayed on two instances with a fast clock, each
    /// notification posted to one of them at random as its time comes: the event stream of
    /// EITHER instance has `hush simulate`'s events, each once, in order.
    func testADayOnTwoInstancesDeliversEachEventOnceToBoth() async throws {
        let database = try PostgresTestCluster.makeDatabase()
        let stream = ServerProcess.root.appendingPathComponent("examples/stream.jsonl")
        let simulated = try HushCommandLine.run(["simulate", "--ephemeral", "--json"] + Self.arguments + [stream.path])
        XCTAssertEqual(simulated.status, 0, simulated.stderr)
        let expected = simulated.stdout.split(separator: "\n").map(String.init)
            .filter { !$0.hasPrefix(#"{"event":"notification""#) }
        XCTAssertGreaterThanOrEqual(expected.count, 4)

        // Each instance's clock starts when it does: the second is behind the first by its start-up
        // time, hence a slower clock than the one-instance test and notifications posted earlier.
        let speed = 1800.0
        let start = EventsOverTimeTests.seconds("2026-11-24T00:00:00+01:00")
        let clock = ["--clock", "2026-11-24T00:00:00+01:00", "--speed", String(speed), "--state", database]
        let a = try ServerProcess(Self.arguments + clock)
        let b = try ServerProcess(Self.arguments + clock)
        // Both started within a moment: the clock of the later one is behind by that much.
        let began = Date()
        let onA = try await EventStreamReader(a.base + "/v1/events")
        let onB = try await EventStreamReader(b.base + "/v1/events")
        func serverNow() -> Double { start + Date().timeIntervalSince(began) * speed }
        for line in try String(contentsOf: stream, encoding: .utf8).split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            let due = EventsOverTimeTests.seconds(object["date"] as! String) - 3600
            let wait = (due - serverNow()) / speed
            if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
            let answer = try await HTTP.send(
                .POST, [a, b].randomElement()!.base + "/v1/notifications", body: String(line))
            XCTAssertEqual(answer.status, 200, answer.body)
        }
        let end = EventsOverTimeTests.seconds("2026-11-25T00:00:00+01:00")
        for (name, reader) in [("A", onA), ("B", onB)] {
            let received = await reader.wait(timeout: (end - serverNow()) / speed + 10) { $0.count >= expected.count }
            XCTAssertEqual(received.map(\.data), expected, "instance \(name): simulate's events, each once, in order")
            XCTAssertEqual(received.compactMap(\.id), received.compactMap(\.id).sorted())
        }
        try await Task.sleep(for: .seconds(1))
        XCTAssertEqual(onA.events.count, expected.count, "nothing twice")
        XCTAssertEqual(a.stop(), 0)
        XCTAssertEqual(b.stop(), 0)
    }

    /// Thirty users' news held for the 08:00 summary, posted to two instances; one is killed
    /// (SIGKILL) at 08:00 by the servers' clock, in the middle of delivering. The other delivers
    /// every summary: each user's exactly once, with every notification that was acknowledged.
    func testAnInstanceKilledAtEightLosesNothingAndDoublesNothing() async throws {
        let database = try PostgresTestCluster.makeDatabase()
        let folder = try temporaryFolder("shared-kill")
        let policy = folder.appendingPathComponent("policy.lua")
        try EventsOverTimeTests.summaryPolicy.write(to: policy, atomically: true, encoding: .utf8)
        let speed = 60.0
        let start = EventsOverTimeTests.seconds("2026-11-24T07:40:00+01:00")
        let arguments = [
            "--policy", policy.path, "--state", database, "--clock", "2026-11-24T07:40:00+01:00", "--speed",
            String(speed),
        ]
        let doomed = try ServerProcess(arguments)
        let survivor = try ServerProcess(arguments)
        let began = Date()
        let events = try await EventStreamReader(survivor.base + "/v1/events")
        let users = (0..<30).map { "k\($0)" }
        var acknowledged: [String: Set<String>] = [:]
        for round in 0..<4 {
            for user in users {
                let id = "\(user)-n\(round)"
                let line = EventsOverTimeTests.news(id, "07:5\(round)", user: user, relevance: nil)
                let server = Bool.random() ? doomed : survivor
                let answer = try await HTTP.send(.POST, server.base + "/v1/notifications", body: line)
                XCTAssertEqual(answer.status, 200, answer.body)
                XCTAssertTrue(answer.body.contains(#""delivery":"summary""#), answer.body)
                acknowledged[user, default: []].insert(id)
            }
        }
        // SIGKILL at 08:00 by the servers' clock.
        let eight = EventsOverTimeTests.seconds("2026-11-24T08:00:00+01:00")
        let untilEight = (eight - start) / speed - Date().timeIntervalSince(began)
        XCTAssertGreaterThan(untilEight, 0, "posted before 08:00")
        if untilEight > 0 { try await Task.sleep(for: .seconds(untilEight)) }
        XCTAssertEqual(doomed.stop(signal: SIGKILL), -9)

        let received = await events.wait(timeout: 30) { $0.count >= users.count }
        try await Task.sleep(for: .seconds(2))
        let summaries = events.events.filter { $0.name == "summary" }
        XCTAssertEqual(summaries.count, users.count, "one summary per user, none twice: \(survivor.stderr)")
        XCTAssertEqual(Set(summaries.compactMap { $0.json["user"] as? String }), Set(users))
        for event in received where event.name == "summary" {
            let user = event.json["user"] as? String ?? ""
            let items = (event.json["notifications"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            XCTAssertEqual(Set(items), acknowledged[user], "\(user): every acknowledged notification, once")
            XCTAssertEqual(items.count, Set(items).count)
        }
        // The whole outbox, replayed: the same, nothing more.
        let replay = try await EventStreamReader(survivor.base + "/v1/events", headers: [("Last-Event-ID", "0")])
        let all = await replay.wait(timeout: 5) { $0.count >= users.count }
        XCTAssertEqual(all.filter { $0.name == "summary" }.count, users.count)
        XCTAssertEqual(survivor.stop(), 0)
    }

    /// PostgreSQL restarted in the middle of a stream: requests in flight are refused (503, nothing
    /// of them kept) or wait; sent again, as a push gateway does, every one is decided as
    /// `hush eval` decides the whole stream once, and the events stream goes on.
    func testAPostgreSQLRestartMidStreamLosesNothingAcknowledged() async throws {
        let database = try PostgresTestCluster.makeDatabase()
        let users = ["r0", "r1", "r2"]
        let stream = try Self.multiUserStream(users: users)
        let expected = try HushCommandLine.run(
            ["eval", "--ephemeral"] + Self.arguments, stdin: stream.map(\.line).joined(separator: "\n"))
        XCTAssertEqual(expected.status, 0, expected.stderr)
        let expectedLines = expected.stdout.split(separator: "\n").map(String.init)

        let server = try ServerProcess(Self.arguments + ["--state", database])
        var answers: [String] = []
        var refused = 0
        var restart: Task<Void, any Error>?
        for (index, item) in stream.enumerated() {
            // While requests go on: some meet the server gone, some the new one.
            if index == stream.count / 2 { restart = Task.detached { try PostgresTestCluster.restart() } }
            let deadline = Date().addingTimeInterval(60)
            while true {
                let answer = try? await HTTP.send(.POST, server.base + "/v1/notifications", body: item.line)
                if let answer, answer.status == 200 {
                    answers.append(answer.body.trimmingCharacters(in: .newlines))
                    break
                }
                if let answer { XCTAssertEqual(answer.status, 503, answer.body) }
                refused += 1
                XCTAssertLessThan(Date(), deadline, "the server did not recover: \(server.stderr)")
                if Date() >= deadline { return }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        try await restart?.value
        XCTAssertEqual(answers, expectedLines, "every decision as one uninterrupted run makes it")
        print("PostgreSQL restarted mid-stream: \(refused) attempts refused and sent again")
        let health = try await HTTP.get(server.base + "/healthz")
        XCTAssertEqual(health.status, 200)
        // The events recorded before and after the restart are all in the outbox, in order.
        let replay = try await EventStreamReader(server.base + "/v1/events", headers: [("Last-Event-ID", "0")])
        let events = await replay.wait(timeout: 5) { !$0.isEmpty }
        XCTAssertFalse(events.isEmpty)
        XCTAssertEqual(events.compactMap(\.id), events.compactMap(\.id).sorted())
        XCTAssertEqual(server.stop(), 0)
    }
}
