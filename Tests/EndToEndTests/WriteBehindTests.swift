import Foundation
import XCTest

/// `hush eval` on a state file commits each batch behind the decisions of the next
/// (docs/reference.md, "Write-behind"): what it prints and what it remembers must be what the
/// ordinary way (`HUSH_WRITE_BEHIND=0`) prints and remembers, also when another process changes the
/// file meanwhile.
final class WriteBehindTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hush-behind-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private let users = ["ana", "ben", "cy", "dee", "eli"]

    /// examples/stream.jsonl over and over (several batches of 1,000 lines), each line given a
    /// user and an id of its pass; every fifth pass repeats the ids of the one before (replacements),
    /// and a few lines are invalid.
    private func stream(passes: Int, users: [String]? = nil) throws -> [String] {
        let users = users ?? self.users
        let example = try String(
            contentsOf: HushBinary.root.appendingPathComponent("examples/stream.jsonl"), encoding: .utf8
        ).split(separator: "\n")
        var lines: [String] = []
        for pass in 0..<passes {
            let idPass = pass % 5 == 4 ? pass - 1 : pass
            for (i, line) in example.enumerated() {
                let user = users[(i + pass) % users.count]
                let withID = line.replacingOccurrences(
                    of: #""id": ?"([^"]+)""#, with: "\"id\": \"$1-\(idPass)\"", options: .regularExpression)
                lines.append("{\"user\": \"\(user)\", " + withID.dropFirst())
                if (i + pass) % 97 == 5 { lines.append("not json") }
            }
        }
        return lines
    }

    private func eval(_ arguments: [String], stdin: String, writeBehind: Bool, from file: URL? = nil) throws
        -> HushBinary.Run
    {
        try HushBinary.run(
            ["eval", "--policy", "policies/work.lua", "--context", "examples/context.json"] + arguments,
            stdin: stdin, environment: writeBehind ? [:] : ["HUSH_WRITE_BEHIND": "0"], standardInput: file)
    }

    private func normalized(_ output: String) -> String {
        output.replacingOccurrences(of: #"hush-[0-9a-f]+-"#, with: "hush-RUN-", options: .regularExpression)
    }

    /// The writer's connection is closed before the store's, so the store's, the last to close,
    /// checkpoints the log into the file and deletes it: no `-wal` file is left at any exit. (It
    /// was left about one exit in two when the writer closed last, on its own thread.)
    func testNoLogIsLeftBehindAtExit() throws {
        let state = folder.appendingPathComponent("state.sqlite").path
        for run in 0..<24 {
            if run % 3 == 0 {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: state + suffix) }
            }
            // Output to /dev/null, as a pipe read by the test slows the end enough to hide it.
            let process = Process()
            process.executableURL = HushBinary.executable
            process.arguments = ["eval", "--state", state, "examples/stream.jsonl"]
            process.currentDirectoryURL = HushBinary.root
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0)
            XCTAssertFalse(FileManager.default.fileExists(atPath: state + "-wal"), "a log was left after run \(run)")
        }
    }

    func testWritingBehindPrintsAndRemembersWhatTheOrdinaryWayDoes() throws {
        let lines = try stream(passes: 90)
        XCTAssertGreaterThan(lines.count, 3_500)
        let file = folder.appendingPathComponent("stream.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        let tail = folder.appendingPathComponent("tail.jsonl")
        try (lines.suffix(2_500).joined(separator: "\n") + "\n").write(to: tail, atomically: true, encoding: .utf8)
        var outputs: [Bool: [String]] = [:]
        for writeBehind in [true, false] {
            let state = folder.appendingPathComponent("state-\(writeBehind).sqlite").path
            var printed: [String] = []
            // The stream from a file (no waiting: batches overlap), then again from standard input,
            // decided against what the first run remembered.
            let first = try eval(["--state", state, file.path], stdin: "", writeBehind: writeBehind)
            XCTAssertEqual(first.status, 1, first.stderr)
            XCTAssertEqual(first.lines.count, lines.count)
            printed.append(normalized(first.stdout))
            let second = try eval(["--state", state], stdin: "", writeBehind: writeBehind, from: tail)
            XCTAssertEqual(second.status, 1, second.stderr)
            printed.append(normalized(second.stdout))
            for user in users {
                let status = try HushBinary.run([
                    "status", "--user", user, "--state", state, "--policy", "policies/work.lua",
                    "--now", "2026-11-30T00:00:00Z", "--json",
                ])
                XCTAssertEqual(status.status, 0, status.stderr)
                printed.append(status.stdout)
            }
            outputs[writeBehind] = printed
        }
        XCTAssertEqual(outputs[true]!.count, outputs[false]!.count)
        for (behind, ordinary) in zip(outputs[true]!, outputs[false]!) { XCTAssertEqual(behind, ordinary) }
        // The runs decided something worth comparing: replacements, summaries waiting.
        XCTAssertTrue(outputs[true]![1].contains("\"replaces\":\""))
    }

    /// Both ways, on a fresh state file: each run's standard output, then its error output.
    private func bothWays(_ arguments: [String], policy: String, lines: [String], before: [String] = [])
        throws -> [Bool: [String]]
    {
        let policyFile = folder.appendingPathComponent("policy-\(UUID().uuidString).lua")
        try policy.write(to: policyFile, atomically: true, encoding: .utf8)
        let input = folder.appendingPathComponent("input-\(UUID().uuidString).jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
        var outputs: [Bool: [String]] = [:]
        for writeBehind in [true, false] {
            let state = folder.appendingPathComponent("\(UUID().uuidString).sqlite").path
            if !before.isEmpty {
                let donated = try HushBinary.run(["donate", "--state", state], stdin: before.joined(separator: "\n"))
                XCTAssertEqual(donated.status, 0, donated.stderr)
            }
            let run = try HushBinary.run(
                ["eval", "--state", state, "--policy", policyFile.path] + arguments + [input.path],
                environment: writeBehind ? [:] : ["HUSH_WRITE_BEHIND": "0"])
            outputs[writeBehind] = [run.stdout, run.stderr]
        }
        XCTAssertEqual(outputs[true], outputs[false])
        return outputs
    }

    /// The first apply of a user prunes their interactions older than 90 days: a rule asking for
    /// 120 days on the next line must not see the pruned one, though its delete is not committed yet.
    func testInteractionsPrunedInTheBatchBeingDecidedAreNotReadBack() throws {
        let policy = """
            rule("count interactions", function(n, ctx)
              return { delivery = "quiet", reason = "interactions=" .. hush.interactions { days = 120 } }
            end)
            """
        let people = #""people":[{"handle":"maya@example.net"}]"#
        let donations = ["2026-08-10T12:00:00Z", "2026-11-20T12:00:00Z"].map {
            #"{"user":"u","date":"\#($0)","direction":"outgoing","kind":"message","app":"com.example.chat",\#(people)}"#
        }
        let lines = (0..<6).map {
            #"{"user":"u","app":"com.example.chat","id":"n\#($0)","date":"2026-11-24T10:0\#($0):00Z","payload":{"aps":{"alert":"hi"}}}"#
        }
        let outputs = try bothWays([], policy: policy, lines: lines, before: donations)
        let counts = outputs[true]![0].split(separator: "\n").map { $0.contains("interactions=2") ? 2 : 1 }
        XCTAssertEqual(counts, [2, 1, 1, 1, 1, 1], outputs[true]![0])
    }

    /// Three batches of 4,000 lines: a user's arrival in the first, a write of theirs that is no
    /// arrival (a withdrawal) in the second, and a read of their arrivals in the third, when both
    /// may be committed. The arrival is counted once (it was counted twice when the second batch
    /// left no mark of the user among the batches in flight).
    func testAnArrivalIsCountedOnceWhateverTheBatchesInFlightWrote() throws {
        let policy = """
            rule("recent", function(n, ctx)
              if n.id == "trigger" then
                return { delivery = "quiet", reason = "recent=" .. hush.recent { minutes = 600 } }
              end
            end)
            """
        func line(_ user: String, _ id: String, withdraw: Bool = false) -> String {
            let withdrawal = withdraw ? #""withdraw":true,"# : ""
            return #"{"user":"\#(user)","app":"com.example.chat","id":"\#(id)",\#(withdrawal)"#
                + #""date":"2026-11-24T10:00:00Z","payload":{"aps":{"alert":"hi"}}}"#
        }
        var lines = [line("u", "x1")]
        lines += (1..<4_000).map { line("f\($0 % 50)", "a\($0)") }
        lines += [line("u", "x1", withdraw: true)]
        lines += (1..<4_000).map { line("f\($0 % 50)", "b\($0)") }
        lines += (1..<4_000).map { line("f\($0 % 50)", "c\($0)") }
        lines += [line("u", "trigger")]
        let outputs = try bothWays([], policy: policy, lines: lines)
        let last = try XCTUnwrap(outputs[true]![0].split(separator: "\n").last)
        XCTAssertTrue(last.contains("recent=1"), String(last))
    }

    /// A policy counting in its own Lua globals sees each line once: a rule that asks for
    /// `hush.recent` now and then (its arrivals not in memory, their writes pending) does not make
    /// the batch be decided again.
    func testAPolicyCountingInItsGlobalsSeesEachLineOnce() throws {
        let policy = """
            seen = 0
            rule("count", function(n, ctx)
              seen = seen + 1
              local recent = n.id:sub(1, 1) == "t" and hush.recent { minutes = 5 } or -1
              return { delivery = "quiet", reason = "seen=" .. seen .. " recent=" .. recent }
            end)
            """
        let lines = (0..<9_000).map { i in
            let id = i % 2_900 == 2_899 ? "t\(i)" : "n\(i)"
            let date = String(format: "2026-11-20T%02d:%02d:%02dZ", i / 3600, i / 60 % 60, i % 60)
            return #"{"user":"a","app":"com.example.chat","id":"\#(id)","date":"\#(date)","#
                + #""payload":{"aps":{"alert":"hi"}}}"#
        }
        let outputs = try bothWays([], policy: policy, lines: lines)
        let printed = outputs[true]![0].split(separator: "\n")
        XCTAssertEqual(printed.count, 9_000)
        XCTAssertTrue(printed.last?.contains("seen=9000 ") ?? false, String(printed.last ?? ""))
        XCTAssertTrue(printed[2_899].contains("recent=300"), String(printed[2_899]))
    }

    /// Another process turns a focus on between two batches: the batch decided after it must see
    /// it (its commit finds the file changed, and it is decided again the ordinary way).
    func testAFocusTurnedOnByAnotherProcessMidStreamIsSeen() throws {
        let lines = try stream(passes: 40, users: ["ana"])
        let before = Array(lines.prefix(1_500))
        let after = Array(lines.dropFirst(1_500).prefix(600))
        var outputs: [Bool: [String]] = [:]
        for writeBehind in [true, false] {
            let state = folder.appendingPathComponent("focus-\(writeBehind).sqlite").path
            let run = try StagedRun(
                ["eval", "--state", state, "--policy", "policies/work.lua", "--context", "examples/context.json"],
                environment: writeBehind ? [:] : ["HUSH_WRITE_BEHIND": "0"])
            run.send(before)
            let first = try run.read(lines: before.count)
            let focus = try HushBinary.run([
                "focus", "on", "Sleep", "--force", "--user", "ana", "--state", state, "--policy", "policies/work.lua",
                "--now", "2020-01-01T00:00:00Z",
            ])
            XCTAssertEqual(focus.status, 0, focus.stderr)
            run.send(after)
            let second = try run.finish()
            XCTAssertEqual(second.count, after.count)
            XCTAssertFalse(first.contains { $0.contains("\"focus\":\"Sleep\"") })
            XCTAssertTrue(
                second.filter { $0.hasPrefix("{\"id\"") }.allSatisfy { $0.contains("\"focus\":\"Sleep\"") },
                second.first ?? "")
            outputs[writeBehind] = first + second
        }
        XCTAssertEqual(outputs[true], outputs[false])
    }

    /// `--jobs 2` on a SQLite file writes behind on one deciding thread (with a thread reading ahead,
    /// `hush-read`), as `--jobs 1` does: two deciding threads there took 2.3 times as long.
    /// `HUSH_WRITE_BEHIND=0` keeps `--jobs 2` on two (`hush-eval-0`, `hush-eval-1`).
    func testSeveralJobsOnASQLiteFileWriteBehindOnOneDecidingThread() throws {
        let lines = try stream(passes: 2)
        for writeBehind in [true, false] {
            let state = folder.appendingPathComponent("jobs-\(writeBehind).sqlite").path
            let run = try StagedRun(
                ["eval", "--jobs", "2", "--state", state, "--policy", "policies/work.lua"]
                    + ["--context", "examples/context.json"],
                environment: writeBehind ? [:] : ["HUSH_WRITE_BEHIND": "0"])
            run.send(Array(lines.prefix(5)))
            XCTAssertEqual(try run.read(lines: 5).count, 5)
            // Waiting for more input now, with every thread it runs started.
            let names = try threadNames(run.process)
            XCTAssertEqual(names.contains("hush-read"), writeBehind, "\(names)")
            XCTAssertEqual(names.filter { $0.hasPrefix("hush-eval-") }.count, writeBehind ? 0 : 2, "\(names)")
            run.send(Array(lines.dropFirst(5)))
            let rest = try run.finish()
            XCTAssertEqual(rest.count, lines.count - 5)
            XCTAssertEqual(run.process.terminationStatus, 1)  // the lines that are not JSON
        }
    }
}

/// `hush eval --ephemeral` without `--jobs` decides on as many threads as the cores it may run on:
/// under `taskset -c 0`, one (no `hush-eval-N` thread), where Foundation's count of the machine's
/// cores started two that took turns on the one core.
final class DefaultJobsTests: XCTestCase {
    private func threadNamesOfARun(launcher: [String]) throws -> [String] {
        let lines = try String(
            contentsOf: HushBinary.root.appendingPathComponent("examples/stream.jsonl"), encoding: .utf8
        ).split(separator: "\n").map(String.init)
        let run = try StagedRun(
            ["eval", "--ephemeral", "--policy", "policies/work.lua", "--context", "examples/context.json"],
            environment: [:], launcher: launcher)
        run.send(Array(lines.prefix(3)))
        XCTAssertEqual(try run.read(lines: 3).count, 3)
        // Waiting for more input now, with every thread it runs started.
        let names = try threadNames(run.process)
        run.send(Array(lines.dropFirst(3)))
        XCTAssertEqual(try run.finish().count, lines.count - 3)
        return names
    }

    func testOneAllowedCoreDecidesOnOneThread() throws {
        let taskset = "/usr/bin/taskset"
        guard FileManager.default.isExecutableFile(atPath: taskset) else {
            throw XCTSkip("taskset (util-linux) is not installed")
        }
        let names = try threadNamesOfARun(launcher: [taskset, "-c", "0"])
        XCTAssertEqual(names.filter { $0.hasPrefix("hush-eval-") }.count, 0, "\(names)")
        // The same run on the cores it may use (more than one here) decides on each of them.
        let cores = AvailableCoresForTests.count
        guard cores > 1 else { return }
        // As many as it may use: fewer than its CPUs only under a CPU quota.
        let all = try threadNamesOfARun(launcher: [])
        XCTAssertTrue((2...cores).contains(all.filter { $0.hasPrefix("hush-eval-") }.count), "\(all)")
    }
}

/// The names of a running process's threads, as the system shows them (`startThread(named:)`).
private func threadNames(_ process: Process) throws -> [String] {
    let tasks = "/proc/\(process.processIdentifier)/task"
    return try FileManager.default.contentsOfDirectory(atPath: tasks).map {
        try String(contentsOfFile: "\(tasks)/\($0)/comm", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// The CPUs this test process may run on, read as `hush` reads them (`/proc/self/status`).
private enum AvailableCoresForTests {
    static var count: Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) else {
            return 1
        }
        return line.dropFirst("Cpus_allowed_list:".count).split(separator: ",").reduce(0) { sum, range in
            let bounds = range.trimmingCharacters(in: .whitespaces).split(separator: "-").compactMap { Int($0) }
            return sum + (bounds.count == 2 ? bounds[1] - bounds[0] + 1 : 1)
        }
    }
}

/// `hush` with its standard input fed in stages, its output read as it comes.
private final class StagedRun {
    let process = Process()
    let input = Pipe()
    let output = Pipe()
    private var buffer = Data()

    /// `launcher`: a program and its arguments that run `hush` (`taskset -c 0`).
    init(_ arguments: [String], environment: [String: String], launcher: [String] = []) throws {
        if let program = launcher.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = launcher.dropFirst() + [HushBinary.executable.path] + arguments
        } else {
            process.executableURL = HushBinary.executable
            process.arguments = arguments
        }
        process.currentDirectoryURL = HushBinary.root
        var env = ProcessInfo.processInfo.environment
        env["XDG_CONFIG_HOME"] = FileManager.default.temporaryDirectory.appendingPathComponent("hush-e2e-none").path
        for (k, v) in environment { env[k] = v }
        process.environment = env
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Writes `lines` from a thread of its own: a pipe holds 64 KiB, and `hush` stops reading
    /// while nobody reads what it prints.
    func send(_ lines: [String]) {
        let data = Data((lines.joined(separator: "\n") + "\n").utf8)
        let handle = input.fileHandleForWriting
        let sent = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            handle.write(data)
            sent.signal()
        }
        pending.append(sent)
    }

    private var pending: [DispatchSemaphore] = []

    /// The next `count` lines printed (waits for them, 60 s at most).
    func read(lines count: Int) throws -> [String] {
        let deadline = Date().addingTimeInterval(60)
        while buffer.filter({ $0 == 10 }).count < count {
            guard Date() < deadline else { throw CocoaError(.fileReadUnknown) }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
        }
        var lines: [String] = []
        while lines.count < count, let newline = buffer.firstIndex(of: 10) {
            lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
            buffer = Data(buffer[(newline + 1)...])
        }
        return lines
    }

    /// Closes the input and returns the rest of the output.
    func finish() throws -> [String] {
        // Read while the last lines are written, then close.
        let rest = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var tail = Data()
        let reader = output.fileHandleForReading
        Thread.detachNewThread {
            tail = reader.readDataToEndOfFile()
            rest.signal()
        }
        for sent in pending { sent.wait() }
        try input.fileHandleForWriting.close()
        rest.wait()
        buffer.append(tail)
        process.waitUntilExit()
        return String(decoding: buffer, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
