import Foundation
import XCTest

/// `hush eval --jobs N`: several threads, the output and state of one.
final class ParallelEvalTests: XCTestCase {
    let users = ["ana", "ben", "cy", "dee", "eli", "fay", "gus"]

    /// examples/stream.jsonl three times over, each line given a user; some lines lose their id
    /// (so one is generated), and invalid lines and blank lines are mixed in.
    func multiUserStream() throws -> String {
        let example = try String(
            contentsOf: HushBinary.root.appendingPathComponent("examples/stream.jsonl"), encoding: .utf8)
        var lines: [String] = []
        for pass in 0..<3 {
            for (i, line) in example.split(separator: "\n").enumerated() {
                let user = users[(i * 3 + pass) % users.count]
                var line = "{\"user\": \"\(user)\", " + line.dropFirst()
                if i % 7 == 3 {
                    line = line.replacingOccurrences(of: #""id": "s\d+", "#, with: "", options: .regularExpression)
                }
                lines.append(line)
                switch (i + pass) % 11 {
                case 2: lines.append("not json")
                case 5: lines.append("{\"user\": \"\(user)\", \"app\": \"\", \"payload\": {}}")
                case 8: lines.append("")
                default: break
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The run's random prefix of generated ids, made the same for every run.
    func normalized(_ output: String) -> String {
        output.replacingOccurrences(of: #"hush-[0-9a-f]+-"#, with: "hush-RUN-", options: .regularExpression)
    }

    func eval(_ stream: String, jobs: Int, _ extra: [String], environment: [String: String] = [:]) throws
        -> HushBinary.Run
    {
        try HushBinary.run(
            ["eval", "--jobs", "\(jobs)", "--policy", "policies/work.lua", "--context", "examples/context.json"]
                + extra, stdin: stream, environment: environment)
    }

    func testSeveralJobsPrintWhatOnePrints() throws {
        let stream = try multiUserStream()
        for explain in [false, true] {
            let extra = ["--ephemeral"] + (explain ? ["--explain"] : [])
            let one = try eval(stream, jobs: 1, extra)
            XCTAssertEqual(one.status, 1, one.stderr)
            XCTAssertTrue(one.stdout.contains("\"error\""))
            XCTAssertTrue(one.stdout.contains("hush-"))
            XCTAssertEqual(Set(one.objects.compactMap { $0["user"] as? String }).count, users.count)
            for jobs in [2, 3] {
                let several = try eval(stream, jobs: jobs, extra)
                XCTAssertEqual(several.status, one.status, several.stderr)
                XCTAssertEqual(
                    normalized(several.stdout), normalized(one.stdout), "--jobs \(jobs), explain: \(explain)")
            }
        }
    }

    func testGeneratedIDsStayUniqueAcrossJobs() throws {
        let stream = (0..<40).map { "{\"user\":\"u\($0 % 9)\",\"app\":\"a\",\"payload\":{\"aps\":{\"alert\":\"x\"}}}" }
            .joined(separator: "\n")
        let run = try eval(stream, jobs: 3, ["--ephemeral"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let ids = run.objects.compactMap { $0["id"] as? String }
        XCTAssertEqual(ids.count, 40)
        XCTAssertEqual(Set(ids).count, 40)
        XCTAssertTrue(ids.last?.hasSuffix("-40") ?? false, ids.last ?? "")
    }

    /// On a SQLite file, `--jobs 2` writes behind on one deciding thread (WriteBehindTests); with
    /// `HUSH_WRITE_BEHIND=0` it decides on two, each with a connection of its own, tested here.
    func testStateAfterSeveralJobsIsTheStateAfterOne() throws {
        let stream = try multiUserStream()
        let ordinary = ["HUSH_WRITE_BEHIND": "0"]
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hush-jobs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let one = folder.appendingPathComponent("one.sqlite").path
        let two = folder.appendingPathComponent("two.sqlite").path
        let first = try eval(stream, jobs: 1, ["--state", one])
        let firstByTwo = try eval(stream, jobs: 2, ["--state", two], environment: ordinary)
        XCTAssertEqual(firstByTwo.status, first.status, firstByTwo.stderr)
        XCTAssertEqual(normalized(firstByTwo.stdout), normalized(first.stdout))
        for user in users {
            let status =
                ["status", "--json", "--policy", "policies/work.lua", "--user", user]
                + ["--now", "2026-11-30T12:00:00+01:00", "--state"]
            let afterOne = try HushBinary.run(status + [one])
            let afterTwo = try HushBinary.run(status + [two])
            XCTAssertEqual(afterOne.status, 0, afterOne.stderr)
            XCTAssertEqual(afterTwo.stdout, afterOne.stdout, user)
        }
        // A second pass over the same stream meets what the first remembered (replacements, groups).
        let second = try eval(stream, jobs: 1, ["--state", one])
        let secondByTwo = try eval(stream, jobs: 2, ["--state", two], environment: ordinary)
        XCTAssertNotEqual(normalized(second.stdout), normalized(first.stdout))
        XCTAssertEqual(normalized(secondByTwo.stdout), normalized(second.stdout))
    }

    func testJobsMustBeOneOrMore() throws {
        for jobs in ["0", "-2"] {
            let run = try HushBinary.run(["eval", "--ephemeral", "--jobs=\(jobs)"], stdin: "")
            XCTAssertEqual(run.status, 2)
            XCTAssertTrue(run.stderr.contains("--jobs"), run.stderr)
            XCTAssertTrue(run.stdout.isEmpty)
        }
    }
}
