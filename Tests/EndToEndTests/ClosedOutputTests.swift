import Foundation
import XCTest

/// `hush eval FILE | head -1`: when the reader of stdout goes away, hush stops quietly (as a
/// program killed by SIGPIPE, without a message) after its last commit, and the state holds
/// whole batches: a prefix of the input, never a decision cut in half.
extension HardeningTests {
    /// Runs `hush ARGUMENTS`, reads stdout up to its first line, closes the pipe's read end, and
    /// waits (at most 20 s) for the process to end; returns it, the first line and stderr.
    func runClosingAfterFirstLine(_ arguments: [String]) throws -> (Process, String, String) {
        let (process, out, err) = try start(arguments)
        var received = Data()
        while !received.contains(10) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received.append(chunk)
        }
        // As `head -1` does: the read end goes away with data still unread.
        try out.fileHandleForReading.close()
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let first = String(decoding: received.prefix { $0 != 10 }, as: UTF8.self)
        return (process, first, stderr)
    }

    /// How many of the notifications `k0`, `k1`, … the state holds: each sent again replaces
    /// itself when it was kept. The kept ones must be the first ones, with no gap.
    func keptPrefix(policy: String, upTo count: Int) throws -> Int {
        let again = (0..<count).map {
            Self.notification($0).replacingOccurrences(of: "2026-11-24T", with: "2026-11-25T")
        }
        let rerun = try HushBinary.run([
            "eval", "--policy", policy, "--state", state, try write(again.joined(separator: "\n"), "again.jsonl"),
        ])
        XCTAssertEqual(rerun.status, 0, rerun.stderr)
        let kept = rerun.objects.map { $0["replaces"] is String }
        XCTAssertEqual(kept.count, count)
        let prefix = kept.prefix { $0 }.count
        XCTAssertFalse(kept.dropFirst(prefix).contains(true), "the state holds a notification after a gap")
        return prefix
    }

    /// Runs `hush COMMAND --policy … --state … FILE` on `count` notifications, closing its
    /// stdout after the first line: it must end as SIGPIPE ends a program, say nothing, and
    /// leave in state the first `checked` notifications or fewer (at least the one printed).
    func assertStopsQuietlyWhenStdoutCloses(
        _ command: [String], count: Int, checked: Int, file: StaticString = #filePath, line: UInt = #line
    ) throws -> String {
        let policy = try write("timezone \"UTC\"\napp \"*\" { grouping = \"off\" }\n", "policy.lua")
        let input = try write((0..<count).map { Self.notification($0) }.joined(separator: "\n") + "\n", "in.jsonl")
        let (process, first, stderr) = try runClosingAfterFirstLine(
            command + ["--policy", policy, "--state", state, input])
        XCTAssertEqual(process.terminationReason, .uncaughtSignal, "ends as SIGPIPE would", file: file, line: line)
        XCTAssertEqual(process.terminationStatus, SIGPIPE, file: file, line: line)
        XCTAssertEqual(stderr, "", "no message, no trace", file: file, line: line)
        // The state opens and holds the first decisions: at least the one printed, not all.
        let kept = try keptPrefix(policy: policy, upTo: checked)
        XCTAssertGreaterThanOrEqual(kept, 1, "the printed decision was committed", file: file, line: line)
        XCTAssertLessThan(kept, checked, "hush stopped soon after the reader left", file: file, line: line)
        return first
    }

    /// On a state file, `hush eval` prints a batch (up to 4,000 lines) once two more were decided
    /// behind it, and lets the commit of those in flight finish before it stops: at most 8,000
    /// lines after the one printed are kept, of 50,000.
    func testEvalIntoAClosedPipeStopsQuietlyAndKeepsWholeBatches() throws {
        let first = try assertStopsQuietlyWhenStdoutCloses(["eval"], count: 50_000, checked: 12_001)
        XCTAssertTrue(first.contains("\"id\":\"k0\""), first)
    }

    func testSimulateIntoAClosedPipeStopsQuietly() throws {
        let first = try assertStopsQuietlyWhenStdoutCloses(["simulate", "--json"], count: 3000, checked: 3000)
        XCTAssertTrue(first.contains("\"event\":\"notification\""), first)
    }
}
