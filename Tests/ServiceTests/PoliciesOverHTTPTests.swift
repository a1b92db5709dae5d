import Foundation
import NIOHTTP1
import XCTest

/// Users' own policies: checked before they are taken, each in its own interpreter.
final class PoliciesOverHTTPTests: XCTestCase {
    /// A policy with memory: every body it sees goes into a global and comes back in a reason.
    static let keeper = """
        local seen = {}
        rule("remember", function(n, ctx)
          seen[#seen + 1] = n.body or ""
          return { level = "active", reason = "seen: " .. table.concat(seen, "|") }
        end)
        """

    static func note(_ id: String, user: String, body: String) -> String {
        #"{"app":"com.example.chat","id":"\#(id)","user":"\#(user)","payload":{"aps":{"alert":{"title":"t","body":"\#(body)"}}}}"#
    }

    func testABadPolicyIsRefusedWith422ListingEveryProblemWithItsLine() async throws {
        let server = try ServerProcess(["--ephemeral"])
        let bad = """
            app "com.example.chat" { summary = "yes" }
            focus "Work" { calls = "sometimes" }
            rule("broken", function(n, ctx) return { level = "loud" } end
            """
        let answer = try await HTTP.send(.PUT, server.base + "/v1/users/u1/policy", body: bad)
        XCTAssertEqual(answer.status, 422, answer.body)
        let problems = try XCTUnwrap(answer.json?["problems"] as? [String], answer.body)
        XCTAssertFalse(problems.isEmpty)
        for problem in problems {
            XCTAssertNotNil(problem.range(of: #"^policy\.lua:\d+: "#, options: .regularExpression), problem)
        }
        XCTAssertEqual(answer.json?["field"] as? String, "policy")
        // Nothing was taken: the user still has no policy of their own.
        let none = try await HTTP.get(server.base + "/v1/users/u1/policy")
        XCTAssertEqual(none.status, 404)
        XCTAssertNotNil(none.json?["error"])

        let good = "focus \"Deep\" { }\n"
        let taken = try await HTTP.send(.PUT, server.base + "/v1/users/u1/policy", body: good)
        XCTAssertEqual(taken.status, 200, taken.body)
        XCTAssertEqual(taken.json?["focuses"] as? [String], ["Deep"])
        let read = try await HTTP.get(server.base + "/v1/users/u1/policy")
        XCTAssertEqual(read.body, good)
        XCTAssertEqual(read.headers.first(name: "content-type"), "text/x-lua; charset=utf-8")
        // Taken without a restart: the focus it declares can be turned on now.
        let focus = try await HTTP.send(.PUT, server.base + "/v1/users/u1/focus", body: #"{"focus":"Deep"}"#)
        XCTAssertEqual(focus.status, 200, focus.body)
        let otherUser = try await HTTP.send(.PUT, server.base + "/v1/users/u2/focus", body: #"{"focus":"Deep"}"#)
        XCTAssertEqual(otherUser.status, 400, "u2 has the server's policy, which declares no Deep")
        XCTAssertEqual(otherUser.json?["field"] as? String, "focus")
        let deleted = try await HTTP.send(.DELETE, server.base + "/v1/users/u1/policy")
        XCTAssertEqual(deleted.status, 204)
        let again = try await HTTP.send(.DELETE, server.base + "/v1/users/u1/policy")
        XCTAssertEqual(again.status, 404)
        XCTAssertEqual(server.stop(), 0)
    }

    /// Two users with the same policy that keeps what it sees: neither ever reads the other's
    /// notifications — with their own policies, and with the server's.
    func testTwoUsersPoliciesCannotSeeEachOthersNotifications() async throws {
        let folder = try temporaryFolder("isolation")
        let policy = folder.appendingPathComponent("keeper.lua")
        try Self.keeper.write(to: policy, atomically: true, encoding: .utf8)
        let server = try ServerProcess(["--ephemeral", "--policy", policy.path])
        for user in ["own1", "own2"] {
            let put = try await HTTP.send(.PUT, server.base + "/v1/users/\(user)/policy", body: Self.keeper)
            XCTAssertEqual(put.status, 200, put.body)
        }
        for (first, second) in [("own1", "own2"), ("srv1", "srv2")] {
            let stream = [
                Self.note("a", user: first, body: "SECRET-\(first)"),
                Self.note("b", user: second, body: "hello"),
                Self.note("c", user: first, body: "again"),
                Self.note("d", user: second, body: "bye"),
            ].joined(separator: "\n")
            let lines = try await HTTP.send(.POST, server.base + "/v1/notifications", body: stream).lines
            XCTAssertEqual(lines.count, 4)
            XCTAssertTrue(lines[1].contains("seen: hello"), lines[1])
            XCTAssertFalse(lines[1].contains("SECRET"), "\(second) read \(first)'s notification: \(lines[1])")
            XCTAssertFalse(lines[3].contains("SECRET"), lines[3])
            XCTAssertTrue(lines[3].contains("seen: hello|bye"), lines[3])
            XCTAssertTrue(lines[2].contains("seen: SECRET-\(first)|again"), "a user's own memory is kept: \(lines[2])")
        }
        XCTAssertEqual(server.stop(), 0)
    }

    /// One user's policy runs at its limits on every notification while that user floods the
    /// server: after its share of time is spent its rules are not run (the built-in behaviour
    /// decides, and the decision says why), and the other users are answered all along, their
    /// rules run. (Their latency under such a flood is measured by hand: docs/service.md.)
    func testAPolicyAtItsLimitsOnEveryNotificationDoesNotStarveOtherUsers() async throws {
        let server = try ServerProcess([
            "--ephemeral", "--policy", ServerProcess.root.appendingPathComponent("policies/work.lua").path,
        ])
        let spin = #"rule("spin", function(n, ctx) local x = 0 while true do x = x + 1 end end)"#
        let put = try await HTTP.send(.PUT, server.base + "/v1/users/hog/policy", body: spin)
        XCTAssertEqual(put.status, 200, put.body)
        async let flooded = Self.flood(server.base, user: "hog", connections: 4, each: 30)
        var others = 0
        for i in 0..<40 {
            let answer = try await HTTP.send(
                .POST, server.base + "/v1/notifications", body: Self.note("o\(i)", user: "u\(i % 4)", body: "hello"))
            XCTAssertEqual(answer.status, 200, answer.body)
            XCTAssertEqual(answer.json?["errors"] as? [String], [], answer.body)
            others += 1
        }
        let hogErrors = try await flooded
        XCTAssertEqual(others, 40)
        XCTAssertEqual(hogErrors.count, 120, "every flood request was answered with one error")
        let overruns = hogErrors.filter { $0.contains("limit") || $0.contains("budget") }.count
        let skipped = hogErrors.filter { $0.contains("not run: this user's rules used their share of time") }.count
        XCTAssertGreaterThan(overruns, 0, "the first ones ran to their limit")
        XCTAssertGreaterThan(skipped, 60, "then the user's share was spent: \(Set(hogErrors))")
        XCTAssertEqual(overruns + skipped, 120, "\(Set(hogErrors))")
        XCTAssertEqual(server.stop(), 0)
    }

    /// `connections` × `each` notifications of `user`, each connection one after another; the
    /// `errors` of every answer.
    static func flood(_ base: String, user: String, connections: Int, each: Int) async throws -> [String] {
        try await withThrowingTaskGroup(of: [String].self) { group in
            for connection in 0..<connections {
                group.addTask {
                    var errors: [String] = []
                    for i in 0..<each {
                        let answer = try await HTTP.send(
                            .POST, base + "/v1/notifications",
                            body: note("\(user)\(connection)-\(i)", user: user, body: "x"))
                        errors += (answer.json?["errors"] as? [String]) ?? ["status \(answer.status)"]
                    }
                    return errors
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    /// The server's policy file changed on disk: taken without a restart; a bad edit is refused
    /// and logged, and the old policy stays.
    func testTheServersPolicyReloadsWhenItsFileChangesAndABadEditIsRefused() async throws {
        let folder = try temporaryFolder("reload")
        let policy = folder.appendingPathComponent("policy.lua")
        try "focus \"One\" { }\n".write(to: policy, atomically: true, encoding: .utf8)
        let server = try ServerProcess(["--ephemeral", "--policy", policy.path])
        func canTurnOn(_ name: String) async throws -> Bool {
            try await HTTP.send(.PUT, server.base + "/v1/users/u/focus", body: #"{"focus":"\#(name)"}"#).status == 200
        }
        let canTurnOnOne = try await canTurnOn("One")
        XCTAssertTrue(canTurnOnOne)
        try "focus \"Two\" { }\n".write(to: policy, atomically: true, encoding: .utf8)
        var reloaded = false
        for _ in 0..<50 where !reloaded {
            try await Task.sleep(for: .milliseconds(100))
            reloaded = try await canTurnOn("Two")
        }
        XCTAssertTrue(reloaded, server.stderr)
        try "focus \"Three\" { calls = \n".write(to: policy, atomically: true, encoding: .utf8)
        var logged = false
        for _ in 0..<50 where !logged {
            try await Task.sleep(for: .milliseconds(100))
            logged = server.stderr.contains("the changed policy was refused")
        }
        XCTAssertTrue(logged, server.stderr)
        let twoStill = try await canTurnOn("Two")
        XCTAssertTrue(twoStill, "the old policy stays")
        XCTAssertEqual(server.stop(), 0)
    }

    func testHealthAndMetrics() async throws {
        let server = try ServerProcess(["--ephemeral", "--policy", "policies/work.lua"])
        let health = try await HTTP.get(server.base + "/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.json?["status"] as? String, "ok")
        let stream = try String(
            contentsOf: ServerProcess.root.appendingPathComponent("examples/stream.jsonl"), encoding: .utf8)
        _ = try await HTTP.send(.POST, server.base + "/v1/notifications", body: stream)
        let metrics = try await HTTP.get(server.base + "/metrics")
        XCTAssertEqual(metrics.status, 200)
        XCTAssertTrue(metrics.headers.first(name: "content-type")?.hasPrefix("text/plain") ?? false)
        // Every decision is counted by its delivery.
        var total = 0
        for line in metrics.lines where line.hasPrefix("hush_decisions_total{") {
            total += Int(line.split(separator: " ").last!)!
        }
        XCTAssertEqual(total, stream.split(separator: "\n").count, metrics.body)
        for name in [
            "hush_decision_seconds_bucket", "hush_rule_errors_total", "hush_budget_overruns_total",
            "hush_webhook_retries_total", "hush_events_total",
        ] {
            XCTAssertTrue(metrics.body.contains(name), "\(name) missing")
        }
        XCTAssertNotNil(metrics.headers.first(name: "x-request-id"))
        let echoed = try await HTTP.get(server.base + "/healthz", headers: [("x-request-id", "abc-123")])
        XCTAssertEqual(echoed.headers.first(name: "x-request-id"), "abc-123")
        XCTAssertEqual(server.stop(), 0)
    }
}
