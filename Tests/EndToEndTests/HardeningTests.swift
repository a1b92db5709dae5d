import Foundation
import XCTest

/// Hostile streams and a hard life for the state file, through the built `hush`: every bad line is
/// reported in place with its number and no other line is lost; a `kill -9` in the middle of a
/// batch loses nothing acknowledged; two writers at once both land; a damaged or newer file is
/// refused with a clear error and left as it is.
final class HardeningTests: XCTestCase {
    var dir: URL!
    var state: String { dir.appendingPathComponent("state.sqlite").path }

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("hush-hardening-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    // MARK: helpers

    func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let url = dir.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    func write(_ text: String, _ name: String) throws -> String { try write(Array(text.utf8), name) }

    func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    /// A notification line; `i` makes the id and (one second apart) the date.
    static func notification(
        _ i: Int, app: String = "com.example.chat", user: String? = nil, prefix: String = "k",
        day: String = "2026-11-24"
    ) -> String {
        let time = String(format: "%02d:%02d:%02d", i / 3600 % 24, i / 60 % 60, i % 60)
        let userKey = user.map { ",\"user\":\"\($0)\"" } ?? ""
        return
            "{\"app\":\"\(app)\",\"id\":\"\(prefix)\(i)\"\(userKey),\"date\":\"\(day)T\(time)Z\",\"payload\":{\"aps\":{\"alert\":{\"title\":\"T\",\"body\":\"message \(i)\"}}}}"
    }

    /// Lines numbered as `hush eval` numbers them (LF, an optional CR before it); the non-blank ones.
    static func nonBlankLineNumbers(_ bytes: [UInt8]) -> [Int] {
        var numbers: [Int] = []
        var number = 0
        for var line in bytes.split(separator: 10, omittingEmptySubsequences: false).dropLast(bytes.last == 10 ? 1 : 0)
        {
            number += 1
            if line.last == 13 { line = line.dropLast() }
            if line.contains(where: { $0 != 32 && $0 != 9 }) { numbers.append(number) }
        }
        return numbers
    }

    /// Starts `hush` with stdout and stderr piped; the caller reads and waits.
    func start(_ arguments: [String], input: Pipe? = nil) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = HushBinary.executable
        process.arguments = arguments
        process.currentDirectoryURL = dir
        var env = ProcessInfo.processInfo.environment
        env["XDG_CONFIG_HOME"] = dir.appendingPathComponent("config-none").path
        env["XDG_STATE_HOME"] = dir.appendingPathComponent("state-home").path
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
        return (process, out, err)
    }

    // MARK: streams

    func testBadLinesAreReportedInPlaceAndNoOtherLineIsLost() throws {
        let tenMB = 10 << 20
        var stream: [UInt8] = []
        func line(_ text: String, crlf: Bool = false) { stream += Array(text.utf8) + (crlf ? [13, 10] : [10]) }
        line(Self.notification(1))  // 1 ok
        line(#"{"app":"com.example.chat","id":"broken","payload":{"aps":"#)  // 2 malformed
        stream +=
            Array(#"{"app":"com.example.chat","id":"utf8","payload":{"aps":{"alert":"caf"#.utf8)
            + [0xC3, 0x28] + Array(#"é"}}}"#.utf8) + [10]  // 3 invalid UTF-8 in a string
        line("")  // 4 blank
        line(Self.notification(5), crlf: true)  // 5 ok, CRLF
        line(" \t ", crlf: true)  // 6 blank (spaces, CRLF)
        // 7: valid JSON, 10 MB: a payload APNs would refuse.
        stream +=
            Array(#"{"app":"com.example.chat","id":"huge","payload":{"aps":{"alert":"big"},"blob":""#.utf8)
            + [UInt8](repeating: UInt8(ascii: "a"), count: tenMB) + Array(#""}}"#.utf8) + [10]
        line(Self.notification(8))  // 8 ok
        // 9: 10 MB that never closes its string.
        stream +=
            Array(#"{"app":"com.example.chat","payload":{"x":""#.utf8)
            + [UInt8](repeating: UInt8(ascii: "b"), count: tenMB) + [10]
        line(#"{"app":"com.example.chat","id":"k10","payload":{"aps":{"alert":"é ünïcødé 😀"}}}"#)  // 10 ok
        // 11: a NUL byte
        stream += Array(#"{"app":"com.example.chat","#.utf8) + [0] + Array(#""payload":{}}"#.utf8) + [10]
        stream += Array(Self.notification(12).utf8)  // 12 ok, no final newline

        let input = try write(stream, "stream.jsonl")
        let run = try HushBinary.run(["eval", "--ephemeral", input])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertLessThan(run.stdout.utf8.count, 64 << 10, "an error never echoes the line it is about")
        let objects = run.objects
        XCTAssertEqual(run.lines.count, 10, "one output line per non-blank input line")
        let shape = objects.map { o in (o["line"] as? Int).map { "error@\($0)" } ?? (o["id"] as? String ?? "?") }
        XCTAssertEqual(shape, ["k1", "error@2", "error@3", "k5", "error@7", "k8", "error@9", "k10", "error@11", "k12"])
        func error(_ line: Int) -> String { objects.first { $0["line"] as? Int == line }?["error"] as? String ?? "" }
        XCTAssertTrue(error(3).localizedCaseInsensitiveContains("UTF-8"), error(3))
        XCTAssertTrue(error(7).contains("payload"), error(7))
        XCTAssertTrue(error(7).contains("4096"), error(7))
        XCTAssertFalse(error(9).isEmpty)
        XCTAssertEqual(objects.first { $0["id"] as? String == "k10" }?["delivery"] as? String, "alert")
    }

    func testDeeplyNestedPayloadsReachTheRulesSafely() throws {
        // Found while fuzzing: building `n.payload` for a rule overflowed Lua's stack at about 20
        // levels and corrupted the heap (`hush eval` aborted in malloc). See PolicyFuzzRegressionTests.
        let policy = try write(
            """
            rule("walk", function(n, ctx)
              local t, d = n.payload.d, 0
              while type(t) == "table" do t = t.a; d = d + 1 end
              return { relevance = 0.5, reason = "depth " .. d }
            end)
            """, "walk.lua")
        let lines = [10, 30, 63, 64, 200].map { depth in
            #"{"app":"com.example.chat","id":"d\#(depth)","payload":{"aps":{"alert":"x"},"d":"#
                + String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth) + "}}"
        }
        let input = try write(
            Array(repeating: lines.joined(separator: "\n"), count: 4).joined(separator: "\n"), "deep.jsonl")
        let run = try HushBinary.run(["eval", "--ephemeral", "--policy", policy, input])
        XCTAssertEqual(run.status, 0, run.stderr)
        let reasons = run.objects.map {
            ($0["reasons"] as? [String] ?? []).first { $0.hasPrefix("rule 'walk': ") } ?? "?"
        }
        let expected = ["depth 10", "depth 30", "depth 63", "depth 63", "depth 63"].map { "rule 'walk': \($0)" }
        XCTAssertEqual(reasons, Array(repeating: expected, count: 4).flatMap { $0 })
    }

    func testEmptyAndBlankFilesDecideNothing() throws {
        for (name, content) in [("empty", [UInt8]()), ("blank", Array("\n\r\n  \n\t\r\n".utf8))] {
            let run = try HushBinary.run(["eval", "--ephemeral", try write(content, name)])
            XCTAssertEqual(run.status, 0, "\(name): \(run.stderr)")
            XCTAssertEqual(run.stdout, "", name)
            XCTAssertEqual(run.stderr, "", name)
        }
    }

    func testAFileThatIsNotJSONIsReportedLineByLine() throws {
        // A PNG: signature (with its CR LF and a lone LF), an IHDR chunk with NULs, then some text.
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += [0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1F, 0x15, 0xC4, 0x89]
        png += Array("\ntEXtComment\0made by hand\n\n{ not json either\n\u{7F}ELF\n".utf8)
        let expected = Self.nonBlankLineNumbers(png)
        XCTAssertEqual(expected, [1, 2, 3, 4, 6, 7])
        let run = try HushBinary.run(["eval", "--ephemeral", try write(png, "image.png")])
        XCTAssertEqual(run.status, 1, run.stderr)
        let objects = run.objects
        XCTAssertEqual(run.lines.count, expected.count, run.stdout)
        XCTAssertEqual(objects.compactMap { $0["line"] as? Int }, expected)
        XCTAssertTrue(objects.allSatisfy { !($0["error"] as? String ?? "").isEmpty })

        // donate reads the same way.
        let donate = try HushBinary.run(["donate", "--ephemeral", try write(png, "image2.png")])
        XCTAssertEqual(donate.status, 1, donate.stderr)
        XCTAssertEqual(donate.objects.compactMap { $0["line"] as? Int }, expected)
        XCTAssertTrue(donate.stderr.contains("donated 0 interactions"), donate.stderr)
    }

    /// Fed line by line through a pipe, `hush eval` answers each line before the next arrives:
    /// batching commits never hold a decision back while the input waits.
    func testAPipeFedLineByLineGetsEachDecisionAtOnce() throws {
        let input = Pipe()
        let (process, out, _) = try start(["eval", "--state", state], input: input)
        defer { if process.isRunning { process.terminate() } }

        // Read on another thread, so a decision held back fails the test instead of hanging it.
        let received = LockedData()
        out.fileHandleForReading.readabilityHandler = { handle in received.append(handle.availableData) }
        defer { out.fileHandleForReading.readabilityHandler = nil }
        for i in 0..<3 {
            input.fileHandleForWriting.write(Data((Self.notification(i) + "\n").utf8))
            let deadline = Date().addingTimeInterval(20)
            while received.lines < i + 1 && Date() < deadline { usleep(5_000) }
            XCTAssertEqual(received.lines, i + 1, "decision \(i + 1) came before the next line was sent")
        }
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        // Each one was remembered: sent again, each replaces itself.
        let again = try write((0..<3).map { Self.notification($0) }.joined(separator: "\n"), "again.jsonl")
        let rerun = try HushBinary.run(["eval", "--state", state, again])
        XCTAssertEqual(rerun.status, 0, rerun.stderr)
        XCTAssertEqual(rerun.objects.map { $0["replaces"] as? String }, ["k0", "k1", "k2"])
    }

    // MARK: state: kill -9

    func testKillDuringEvalLosesNothingAcknowledged() throws {
        let policy = try write("timezone \"UTC\"\napp \"*\" { grouping = \"off\" }\n", "policy.lua")
        // Enough lines that hush is still deciding when the first ones come out (they are
        // printed a batch at a time, after each batch commits).
        let count = 200_000
        let input = try write((0..<count).map { Self.notification($0) }.joined(separator: "\n") + "\n", "big.jsonl")

        // Each printed decision is acknowledged: it is printed after its transaction committed.
        let (process, out, _) = try start(["eval", "--policy", policy, "--state", state, input])
        var received = Data()
        let wanted = 1500
        while received.count(of: 10) < wanted {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received.append(chunk)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertEqual(
            process.terminationReason, .uncaughtSignal, "hush must still have been running when it was killed")
        let complete = received.lastIndex(of: 10).map { received.prefix(through: $0) } ?? Data()
        let acknowledged = String(decoding: complete, as: UTF8.self).split(separator: "\n").map { line -> String in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["id"] as? String ?? "?"
        }
        XCTAssertGreaterThanOrEqual(acknowledged.count, wanted)
        XCTAssertLessThan(acknowledged.count, count)
        XCTAssertEqual(acknowledged, (0..<acknowledged.count).map { "k\($0)" }, "decisions come in input order")

        // The store opens cleanly...
        let status = try HushBinary.run([
            "status", "--json", "--policy", policy, "--state", state, "--now", "2026-11-24T23:00:00Z",
        ])
        XCTAssertEqual(status.status, 0, status.stderr)
        // ...and holds every acknowledged notification: sent again, each replaces itself.
        let again = (0..<acknowledged.count).map {
            Self.notification($0).replacingOccurrences(of: "2026-11-24T", with: "2026-11-25T")
        }
        let rerun = try HushBinary.run([
            "eval", "--policy", policy, "--state", state, try write(again.joined(separator: "\n"), "again.jsonl"),
        ])
        XCTAssertEqual(rerun.status, 0, rerun.stderr)
        let replaces = rerun.objects.map { $0["replaces"] as? String ?? "nothing" }
        XCTAssertEqual(replaces.count, acknowledged.count)
        let lost = zip(acknowledged, replaces).filter { $0 != $1 }.map(\.0)
        XCTAssertEqual(lost, [], "acknowledged decisions whose notification the store lost")
    }

    /// Counts the outgoing messages to `handle` that `hush suggest` sees.
    func donatedMessages(to handle: String, policy: String) throws -> Int {
        let run = try HushBinary.run([
            "suggest", "--json", "--limit", "5", "--policy", policy, "--state", state, "--now", "2026-11-25T00:00:00Z",
        ])
        XCTAssertEqual(run.status, 0, run.stderr)
        let array = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]] ?? []
        return array.first { $0["handle"] as? String == handle }?["messages"] as? Int ?? 0
    }

    func testKillDuringDonateKeepsWholeBatchesAndTheStoreOpens() throws {
        let policy = try write("timezone \"UTC\"\n", "policy.lua")
        let count = 50_000
        let line =
            #"{"date":"2026-11-24T10:00:00Z","direction":"outgoing","kind":"message","app":"chat","people":[{"handle":"pat@example.com"}]}"#
        let input = try write(Array(repeating: line, count: count).joined(separator: "\n") + "\n", "interactions.jsonl")

        let (process, _, err) = try start(["donate", "--state", state, input])
        // Kill once the first batches are in the write-ahead log, well before the end.
        let wal = state + "-wal"
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, process.isRunning,
            ((try? FileManager.default.attributesOfItem(atPath: wal))?[.size] as? Int ?? 0) < 200_000
        {
            usleep(2_000)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertEqual(
            process.terminationReason, .uncaughtSignal, "donate must still have been running when it was killed")
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertFalse(stderr.contains("donated"), "nothing was acknowledged: \(stderr)")

        // The store opens, holding whole batches of 1000 only (one transaction each).
        let kept = try donatedMessages(to: "pat@example.com", policy: policy)
        XCTAssertEqual(kept % 1000, 0, "a batch was cut in half: \(kept)")
        XCTAssertLessThan(kept, count)

        // Running it again works and adds everything.
        let rerun = try HushBinary.run(["donate", "--state", state, input])
        XCTAssertEqual(rerun.status, 0, rerun.stderr)
        XCTAssertTrue(rerun.stderr.contains("donated \(count) interactions"), rerun.stderr)
        XCTAssertEqual(try donatedMessages(to: "pat@example.com", policy: policy), kept + count)
    }

    // MARK: state: two writers

    func testTwoProcessesWritingAtOnceBothLand() throws {
        let policy = try write(
            """
            timezone "UTC"
            app "com.example.news" { summary = true }
            summary { at = { "18:00" } }
            """, "policy.lua")
        let perUser = 1500
        var inputs: [String] = []
        for user in ["u1", "u2"] {
            let lines = (0..<perUser).map {
                Self.notification($0, app: "com.example.news", user: user, prefix: "\(user)-n")
            }
            inputs.append(try write(lines.joined(separator: "\n"), "\(user).jsonl"))
        }
        let runs = try inputs.map { try start(["eval", "--policy", policy, "--state", state, $0]) }
        var outputs: [String] = []
        for (process, out, err) in runs {
            let stdout = out.fileHandleForReading.readDataToEndOfFile()
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0, stderr)
            outputs.append(String(decoding: stdout, as: UTF8.self))
        }
        for (user, output) in zip(["u1", "u2"], outputs) {
            let lines = output.split(separator: "\n")
            XCTAssertEqual(lines.count, perUser, user)
            XCTAssertTrue(lines.allSatisfy { $0.contains("\"delivery\":\"summary\"") }, user)
            let status = try HushBinary.run([
                "status", "--json", "--user", user, "--policy", policy, "--state", state,
                "--now", "2026-11-24T12:00:00Z",
            ])
            XCTAssertEqual(status.status, 0, status.stderr)
            XCTAssertEqual(status.objects.first?["pending_summary"] as? Int, perUser, "\(user): \(status.stdout)")
        }
    }

    // MARK: state: damaged and newer files

    /// Every command that opens the state refuses `path` with exit 2 and a message naming the file,
    /// prints nothing on stdout, and leaves the file's bytes as they were.
    func assertRefused(_ path: String, saying expected: String, file: StaticString = #filePath, line: UInt = #line)
        throws
    {
        let before = try bytes(path)
        let input = try write(Self.notification(1) + "\n", "one-\(UUID().uuidString).jsonl")
        let commands: [[String]] = [
            ["eval", "--state", path, input],
            ["donate", "--state", path, input],
            ["status", "--json", "--state", path],
            // The default policy declares no focus: --force gets past the name to the state.
            ["focus", "on", "Work", "--force", "--state", path],
        ]
        for arguments in commands {
            let run = try HushBinary.run(arguments)
            XCTAssertEqual(run.status, 2, "\(arguments[0]): \(run.stdout) \(run.stderr)", file: file, line: line)
            XCTAssertEqual(run.stdout, "", arguments[0], file: file, line: line)
            XCTAssertTrue(run.stderr.contains(path), "\(arguments[0]): \(run.stderr)", file: file, line: line)
            XCTAssertTrue(run.stderr.contains(expected), "\(arguments[0]): \(run.stderr)", file: file, line: line)
            XCTAssertEqual(try bytes(path), before, "\(arguments[0]) changed the file", file: file, line: line)
        }
    }

    /// A real state file with a few notifications in it, checkpointed into the main file.
    func makeStateFile() throws -> String {
        let input = try write((0..<20).map { Self.notification($0) }.joined(separator: "\n"), "seed.jsonl")
        let run = try HushBinary.run(["eval", "--state", state, input])
        XCTAssertEqual(run.status, 0, run.stderr)
        let wal = (try? FileManager.default.attributesOfItem(atPath: state + "-wal"))?[.size] as? Int ?? 0
        XCTAssertEqual(wal, 0, "hush checkpoints its write-ahead log when it closes the store")
        return state
    }

    func testAFileThatIsNotADatabaseIsRefusedAndLeftAlone() throws {
        let path = try write(String(repeating: "these are my notes, not a database\n", count: 200), "notes.sqlite")
        try assertRefused(path, saying: "is not a Hush state file")
    }

    func testADamagedStateFileIsRefusedAndLeftAlone() throws {
        let path = try makeStateFile()
        var data = try bytes(path)
        // Keep SQLite's 100-byte header; overwrite the rest of the first page (the schema) and more.
        data.replaceSubrange(
            100..<min(data.count, 6000), with: [UInt8](repeating: 0xA5, count: min(data.count, 6000) - 100))
        try data.write(to: URL(fileURLWithPath: path))
        try assertRefused(path, saying: "is not a Hush state file")
    }

    func testDamageDeepInTheFileIsReportedNotHidden() throws {
        let policy = try write(
            """
            timezone "UTC"
            app "com.example.news" { summary = true }
            summary { at = { "18:00" } }
            """, "policy.lua")
        let queued = (0..<3000).map { Self.notification(36_000 + $0, app: "com.example.news", prefix: "n") }
        let fill = try HushBinary.run([
            "eval", "--policy", policy, "--state", state, try write(queued.joined(separator: "\n"), "news.jsonl"),
        ])
        XCTAssertEqual(fill.status, 0, fill.stderr)
        var data = try bytes(state)
        XCTAssertGreaterThan(data.count, 100_000)
        // The schema (page 1) intact; the middle half of the file, where the queue's pages are, not.
        data.replaceSubrange(
            data.count / 4..<data.count * 3 / 4,
            with: [UInt8](repeating: 0xA5, count: data.count * 3 / 4 - data.count / 4))
        try data.write(to: URL(fileURLWithPath: state))

        // status only reads: it must not report "nothing waiting".
        let status = try HushBinary.run([
            "status", "--json", "--policy", policy, "--state", state, "--now", "2026-11-24T12:00:00Z",
        ])
        XCTAssertEqual(status.status, 2, status.stdout)
        XCTAssertEqual(status.stdout, "")
        XCTAssertTrue(status.stderr.contains(state) && status.stderr.contains("malformed"), status.stderr)
        XCTAssertEqual(try bytes(state), data)

        // At 18:30 the queued summary is due: delivering it reads the damaged pages. eval reports
        // that in place of the line it could not decide, and records nothing (the transaction is
        // rolled back). (A write that only touches intact pages is not stopped: SQLite finds damage
        // where it reads; `sqlite3 FILE 'pragma integrity_check'` checks the whole file.)
        let eval = try HushBinary.run([
            "eval", "--policy", policy, "--state", state,
            try write(Self.notification(66_600, app: "com.example.news", prefix: "late"), "late.jsonl"),
        ])
        XCTAssertEqual(eval.status, 1, eval.stderr)
        XCTAssertEqual(eval.objects.first?["line"] as? Int, 1, eval.stdout)
        XCTAssertTrue((eval.objects.first?["error"] as? String ?? "").contains(state), eval.stdout)
        XCTAssertEqual(try bytes(state), data, "the damaged file is left as it was")
    }

    func testATruncatedStateFileIsRefusedAndLeftAlone() throws {
        let path = try makeStateFile()
        let data = try bytes(path)
        try data.prefix(50).write(to: URL(fileURLWithPath: path))
        try assertRefused(path, saying: "is not a Hush state file")
    }

    func testAStateFileFromANewerHushIsRefusedAndLeftAlone() throws {
        let path = try makeStateFile()
        var data = try bytes(path)
        // PRAGMA user_version lives at offset 60 of the header, big-endian.
        data.replaceSubrange(60..<64, with: [0, 0, 0, 99])
        try data.write(to: URL(fileURLWithPath: path))
        try assertRefused(path, saying: "newer Hush (schema 99)")
    }
}

private extension Data {
    func count(of byte: UInt8) -> Int { reduce(0) { $0 + ($1 == byte ? 1 : 0) } }
}

/// Bytes appended from a reading thread.
final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ more: Data) { lock.lock(); data.append(more); lock.unlock() }
    var lines: Int { lock.lock(); defer { lock.unlock() }; return data.count(of: 10) }
}
