import Foundation
import XCTest

/// A policy with memory, on a stream of several people's notifications, through the built `hush`:
/// what its rules keep for one user never reaches another user's decision (issue 17).
final class UserIsolationTests: XCTestCase {
    var dir: URL!
    var policy: String { dir.appendingPathComponent("remember.lua").path }
    var stream: String { dir.appendingPathComponent("stream.jsonl").path }

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("hush-isolation-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        // Ordinary memory: an upvalue and a global, both read back into the reason.
        try """
        local seen = {}
        count = 0
        rule("remember", function(n, ctx)
          seen[#seen + 1] = n.body
          count = count + 1
          return { level = "passive", reason = "seen: " .. table.concat(seen, "|") .. " (" .. count .. ")" }
        end)
        """.write(toFile: policy, atomically: true, encoding: .utf8)
        let lines = [("u1", "SECRET-U1"), ("u2", "hello"), ("u1", "again"), ("u2", "bye"), ("u3", "third")].enumerated()
            .map { i, entry in
                "{\"app\":\"a\",\"id\":\"n\(i)\",\"user\":\"\(entry.0)\",\"date\":\"2026-11-24T10:0\(i):00Z\",\"payload\":{\"aps\":{\"alert\":{\"body\":\"\(entry.1)\"}}}}"
            }
        try (lines.joined(separator: "\n") + "\n").write(toFile: stream, atomically: true, encoding: .utf8)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: dir)
    }

    private static let expected = [
        "rule 'remember': seen: SECRET-U1 (1)", "rule 'remember': seen: hello (1)",
        "rule 'remember': seen: SECRET-U1|again (2)", "rule 'remember': seen: hello|bye (2)",
        "rule 'remember': seen: third (1)",
    ]

    private func firstReasons(_ decisions: [[String: Any]]) -> [String] {
        decisions.map { (($0["decision"] as? [String: Any] ?? $0)["reasons"] as? [String])?.first ?? "" }
    }

    func testEvalKeepsEachUsersMemoryApart() throws {
        for state in [["--ephemeral"], ["--state", dir.appendingPathComponent("state.sqlite").path]] {
            let run = try HushBinary.run(["eval", "--policy", policy] + state + [stream])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(firstReasons(run.objects), Self.expected, "\(state)")
        }
    }

    func testSimulateKeepsEachUsersMemoryApart() throws {
        let run = try HushBinary.run(["simulate", "--json", "--policy", policy, stream])
        XCTAssertEqual(run.status, 0, run.stderr)
        let decisions = run.objects.filter { $0["event"] as? String == "notification" }
        XCTAssertEqual(firstReasons(decisions), Self.expected)
    }
}
