import Foundation
import XCTest

/// What the argument parser gives every command: the version, times checked as arguments, shell
/// completions (docs/cli.md).
final class CommandLineTests: XCTestCase {
    func testVersion() throws {
        let run = try HushBinary.run(["--version"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.range(of: #"^\d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil, run.stdout)
    }

    /// The executable allocates with mimalloc, not glibc's malloc (Package.swift): mimalloc says
    /// so when asked to be verbose; glibc ignores the variable.
    func testTheExecutableAllocatesWithMimalloc() throws {
        #if os(Linux)
            let run = try HushBinary.run(["--version"], environment: ["MIMALLOC_VERBOSE": "1"])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertTrue(run.stderr.contains("mimalloc: process init"), run.stderr)
        #else
            throw XCTSkip("the executable links mimalloc on Linux only")
        #endif
    }

    func testABadTimeIsAUsageErrorNamingTheOption() throws {
        let cases: [([String], String)] = [
            (["status", "--ephemeral", "--now", "tomorrow"], "--now"),
            (["suggest", "--ephemeral", "--now", "2026-13-01"], "--now"),
            (["focus", "on", "Work", "--ephemeral", "--policy", "policies/work.lua", "--until", "soon"], "--until"),
            (["focus", "off", "--ephemeral", "--until", "25:00"], "--until"),
            (["simulate", "--ephemeral", "--until", "18:00", "examples/stream.jsonl"], "--until"),
        ]
        for (arguments, option) in cases {
            let run = try HushBinary.run(arguments)
            XCTAssertEqual(run.status, 2, arguments.joined(separator: " "))
            XCTAssertTrue(run.stderr.contains("is invalid for '\(option) <time>'"), run.stderr)
            XCTAssertTrue(run.stdout.isEmpty, run.stdout)
        }
    }

    func testFocusUntilTakesAClockTimeOrADurationFromNow() throws {
        let now = "2026-03-02T10:00:00+01:00"
        for (until, end) in [
            ("90m", "2026-03-02T11:30:00+01:00"), ("08:00", "2026-03-03T08:00:00+01:00"),
            ("2026-03-02T12:00:00+01:00", "2026-03-02T12:00:00+01:00"),
        ] {
            let run = try HushBinary.run([
                "focus", "on", "Work", "--ephemeral", "--policy", "policies/work.lua",
                "--now", now, "--until", until,
            ])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(run.stdout, "Focus Work is on until \(end)\n")
        }
    }

    func testCompletionScriptsGenerate() throws {
        for (shell, marker) in [
            ("bash", "complete -o filenames -F _hush hush"), ("zsh", "#compdef hush"), ("fish", "complete -c 'hush'"),
        ] {
            let run = try HushBinary.run(["--generate-completion-script", shell])
            XCTAssertEqual(run.status, 0, "\(shell): \(run.stderr)")
            XCTAssertTrue(run.stdout.contains(marker), "\(shell) script lacks \(marker)")
            for subcommand in ["eval", "simulate", "bench", "suggest"] {
                XCTAssertTrue(run.stdout.contains(subcommand), "\(shell) script lacks \(subcommand)")
            }
        }
    }

    func testBenchTimesAPolicyOnAStream() throws {
        let run = try HushBinary.run([
            "bench", "--policy", "policies/work.lua", "--context", "examples/context.json",
            "--passes", "1", "examples/stream.jsonl",
        ])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.hasPrefix("hush bench: "), run.stdout)
        for figure in ["policy load", "decisions/s", "latency p50 / p99"] {
            XCTAssertTrue(run.stdout.contains(figure), run.stdout)
        }
    }

    func testBenchStopsAtALineThatIsNotANotification() throws {
        let stream = try HushBinary.file("{\"app\":\"x\",\"payload\":{}}\n{\"app\": 3}\n", ext: "jsonl")
        let run = try HushBinary.run(["bench", "--passes", "1", stream.path])
        XCTAssertEqual(run.status, 2)
        XCTAssertTrue(run.stderr.contains("\(stream.path):2: app: must be a non-empty string, got 3"), run.stderr)
    }
}
