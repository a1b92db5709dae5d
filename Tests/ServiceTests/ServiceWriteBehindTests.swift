import Foundation
import NIOHTTP1
import XCTest

/// On a SQLite file the server decides a batch from memory while the one before commits
/// (`ServiceCore+WriteBehind.swift`). Another process writing the same file meanwhile must not be
/// missed: the batch decided on what memory held is decided again from the file.
final class ServiceWriteBehindTests: XCTestCase {
    /// A notification for `user`, on Saturday evening (outside Work's schedule).
    private static func note(_ id: String, user: String, minute: Int, second: Int) -> String {
        let at = String(format: "2026-11-28T21:%02d:%02d+01:00", minute, second)
        return #"{"user":"\#(user)","app":"com.example.chat","id":"\#(id)","date":"\#(at)","#
            + #""payload":{"aps":{"alert":{"title":"Bob","body":"dinner?"},"thread-id":"bob"}}}"#
    }

    /// Turns Work on by hand for `user` at 21:10, from another process.
    private static func focusOnByHand(_ state: String, user: String) throws {
        let run = try HushCommandLine.run([
            "focus", "on", "Work", "--user", user, "--policy", "policies/work.lua", "--state", state,
            "--now", "2026-11-28T21:10:00+01:00",
        ])
        XCTAssertEqual(run.status, 0, run.stderr)
    }

    func testAFocusTurnedOnByAnotherProcessIsSeenByTheNextDecision() async throws {
        let folder = try temporaryFolder("write-behind")
        let state = folder.appendingPathComponent("served.sqlite").path
        let reference = folder.appendingPathComponent("reference.sqlite").path
        // 13 users, 20 notifications each per request: batches large enough to be written
        // behind (`StateWorker.fewestLinesWrittenBehind`). Two requests before the focus
        // (minutes 1-2), two after (11-12); every user in each, so the user the other process
        // changes is in memory when the next batch is decided.
        let users = ["x", "y"] + (0..<11).map { "f\($0)" }
        func request(_ r: Int, minute: Int) -> [String] {
            (0..<20).flatMap { k in users.map { Self.note("\($0)-\(r)-\(k)", user: $0, minute: minute, second: k) } }
        }
        let before = [request(0, minute: 1), request(1, minute: 2)]
        let after = [request(2, minute: 11), request(3, minute: 12)]
        XCTAssertGreaterThanOrEqual(before[0].count, 256)

        let server = try ServerProcess(["--policy", "policies/work.lua", "--state", state])
        var answered: [String] = []
        for (i, lines) in (before + after).enumerated() {
            if i == before.count { try Self.focusOnByHand(state, user: "x") }
            let answer = try await HTTP.send(
                .POST, server.base + "/v1/notifications", body: lines.joined(separator: "\n"),
                headers: [("Content-Type", "application/x-ndjson")])
            XCTAssertEqual(answer.status, 200, answer.body)
            answered += answer.lines
        }
        XCTAssertEqual(server.stop(), 0, server.stderr)

        // The same, one `hush eval` before the focus and one after, on a file of its own.
        var expected: [String] = []
        for (i, part) in [before, after].enumerated() {
            if i == 1 { try Self.focusOnByHand(reference, user: "x") }
            let run = try HushCommandLine.run(
                ["eval", "--policy", "policies/work.lua", "--state", reference],
                stdin: part.flatMap { $0 }.joined(separator: "\n") + "\n")
            XCTAssertEqual(run.status, 0, run.stderr)
            expected += run.stdout.split(separator: "\n").map(String.init)
        }
        XCTAssertEqual(answered.count, 4 * 20 * users.count)
        if let i = answered.indices.first(where: { $0 >= expected.count || answered[$0] != expected[$0] }) {
            let reference = i < expected.count ? expected[i] : "(none)"
            XCTFail("decision \(i + 1) differs from hush eval's:\n\(answered[i])\n\(reference)")
        }
        // x's notifications after the focus are silenced by it, y's are not.
        let decisions = answered.map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        for (i, decision) in decisions.enumerated() where i >= before.joined().count {
            let reasons = (decision?["reasons"] as? [String] ?? []).joined(separator: "; ")
            if decision?["user"] as? String == "x" {
                XCTAssertEqual(decision?["delivery"] as? String, "silenced", reasons)
                XCTAssertTrue(reasons.contains("Focus Work is on by hand"), reasons)
            } else {
                XCTAssertNotEqual(decision?["delivery"] as? String, "silenced", reasons)
            }
        }

        // And the file holds every decision answered: each id, sent again, replaces itself.
        let again = try ServerProcess(["--policy", "policies/work.lua", "--state", state])
        let resent = try await HTTP.send(
            .POST, again.base + "/v1/notifications", body: (before + after).flatMap { $0 }.joined(separator: "\n"),
            headers: [("Content-Type", "application/x-ndjson")])
        XCTAssertEqual(resent.status, 200, resent.body)
        let replaced = resent.lines.map { line -> String? in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["replaces"] as? String
        }
        XCTAssertEqual(replaced, decisions.map { $0?["id"] as? String })
        XCTAssertEqual(again.stop(), 0, again.stderr)
    }

    /// Four clients at once, each with users of its own, in batches large enough to be written
    /// behind (so that batches are decided while others commit): each client's answers are what
    /// `hush eval` prints for its lines, on a file of its own. The server's clock stands at the
    /// week's start, so nothing falls due between requests by the wall clock.
    func testClientsAtOnceGetWhatHushEvalPrintsForTheirLines() async throws {
        let folder = try temporaryFolder("write-behind-clients")
        let stream = folder.appendingPathComponent("week.jsonl").path
        let generate = Process()
        generate.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        generate.arguments = [
            "python3", ServerProcess.root.appendingPathComponent("Benchmarks/generate.py").path, "--users", "12",
            "--per-user", "150", "--seed", "3", "--out", stream,
        ]
        try generate.run()
        generate.waitUntilExit()
        XCTAssertEqual(generate.terminationStatus, 0)
        let lines = try String(contentsOfFile: stream, encoding: .utf8).split(separator: "\n").map(String.init)
        var groups = [[String]](repeating: [], count: 4)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let user = try XCTUnwrap(object?["user"] as? String)
            groups[try XCTUnwrap(Int(user.dropFirst())) % 4].append(line)
        }
        XCTAssertEqual(groups.map(\.count), [450, 450, 450, 450])

        let policy = ["--policy", "Benchmarks/standard.lua", "--context", "Benchmarks/context.json"]
        let server = try ServerProcess(
            policy + [
                "--state", folder.appendingPathComponent("served.sqlite").path,
                "--clock", "2024-11-25T00:00:00+01:00", "--speed", "0.000001",
            ])
        let base = server.base
        let answered = try await withThrowingTaskGroup(of: (Int, [String]).self) { tasks in
            for (g, group) in groups.enumerated() {
                tasks.addTask {
                    var answers: [String] = []
                    for start in stride(from: 0, to: group.count, by: 300) {
                        let answer = try await HTTP.send(
                            .POST, base + "/v1/notifications",
                            body: group[start..<min(start + 300, group.count)].joined(separator: "\n"),
                            headers: [("Content-Type", "application/x-ndjson")])
                        guard answer.status == 200 else { throw HTTPStatusError(status: answer.status) }
                        answers += answer.lines
                    }
                    return (g, answers)
                }
            }
            var all = [[String]](repeating: [], count: 4)
            for try await (g, answers) in tasks { all[g] = answers }
            return all
        }
        XCTAssertEqual(server.stop(), 0, server.stderr)

        for (g, group) in groups.enumerated() {
            let run = try HushCommandLine.run(
                ["eval"] + policy + ["--state", folder.appendingPathComponent("reference-\(g).sqlite").path],
                stdin: group.joined(separator: "\n") + "\n")
            XCTAssertEqual(run.status, 0, run.stderr)
            let expected = run.stdout.split(separator: "\n").map(String.init)
            XCTAssertEqual(answered[g].count, group.count)
            if let i = answered[g].indices.first(where: { $0 >= expected.count || answered[g][$0] != expected[$0] }) {
                XCTFail("client \(g), decision \(i + 1) differs from hush eval's:\n\(answered[g][i])")
            }
        }
    }
}

private struct HTTPStatusError: Error {
    var status: Int
}
