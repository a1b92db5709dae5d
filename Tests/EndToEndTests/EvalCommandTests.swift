import Foundation
import XCTest

final class EvalCommandTests: XCTestCase {
    let policy = """
        timezone "Europe/Berlin"
        app "com.example.pager" { critical_alerts = true, name = "Pager" }
        contact { handle = "alice@example.com", name = "Alice", aliases = { "+1 617 555 1212" } }
        focus "Work" { people = { "alice@example.com" }, apps = { "com.example.mail" } }
        rule("pages mentioning SEV1 are critical", function(n, ctx)
          if n.app == "com.example.pager" and n.body:find("SEV1") then
            return { level = "critical", reason = "SEV1 page" }
          end
        end)
        """

    func testStreamWithInvalidLinesKeepsOrderAndExitsOne() throws {
        let policyFile = try HushBinary.file(policy, name: "policy", ext: "lua")
        let context = try HushBinary.file("{\"focus\":\"Work\",\"locked\":true}")
        let stream = """
            {"app":"com.example.chat","id":"m1","payload":{"aps":{"alert":{"body":"Lunch?"}}},"communication":{"kind":"message","sender":{"handle":"tel:+16175551212"}}}
            {"app":"com.example.chat","id":"m2","payload":{"aps":{"alert":"hi"}}}
            not json at all
            {"app":"com.example.pager","payload":{"aps":{"alert":"SEV1: db down"}}}

            {"app":"com.example.x","payload":{"aps":{"relevance-score":2}}}
            """
        let run = try HushBinary.run(
            ["eval", "--policy", policyFile.path, "--context", context.path, "--ephemeral"], stdin: stream)
        XCTAssertEqual(run.status, 1, run.stderr)
        let lines = run.objects
        XCTAssertEqual(lines.count, 5)
        XCTAssertEqual(lines[0]["id"] as? String, "m1")
        XCTAssertEqual(lines[0]["breakthrough"] as? String, "person")
        XCTAssertEqual(lines[1]["delivery"] as? String, "silenced")
        XCTAssertEqual(lines[2]["line"] as? Int, 3)
        XCTAssertNotNil(lines[2]["error"] as? String)
        XCTAssertEqual(lines[3]["level"] as? String, "critical")
        XCTAssertEqual(lines[3]["breakthrough"] as? String, "critical")
        XCTAssertEqual(lines[3]["rules"] as? [String], ["pages mentioning SEV1 are critical"])
        XCTAssertEqual(lines[4]["line"] as? Int, 6)
        XCTAssertTrue((lines[4]["error"] as? String ?? "").contains("relevance-score"))
    }

    func testDecisionHasEveryKeyOfTheContract() throws {
        let run = try HushBinary.run(
            ["eval", "--ephemeral"], stdin: "{\"app\":\"a\",\"payload\":{\"aps\":{\"alert\":\"x\"}}}")
        XCTAssertEqual(run.status, 0, run.stderr)
        let d = try XCTUnwrap(run.objects.first)
        for key in [
            "id", "app", "user", "delivery", "level", "requested_level", "focus", "breakthrough", "alert", "badge",
            "announcement", "group", "placeholder", "summary_at", "replaces", "reasons", "rules", "errors",
        ] {
            XCTAssertTrue(d.keys.contains(key), "missing \(key)")
        }
        XCTAssertNil(d["trace"])
        XCTAssertFalse((d["reasons"] as? [String] ?? []).isEmpty)
    }

    func testExplainAddsATraceWithRuleLocations() throws {
        let policyFile = try HushBinary.file(policy, name: "policy", ext: "lua")
        let run = try HushBinary.run(
            ["eval", "--policy", policyFile.path, "--explain"],
            stdin: "{\"app\":\"com.example.pager\",\"payload\":{\"aps\":{\"alert\":\"SEV1\"}}}")
        XCTAssertEqual(run.status, 0, run.stderr)
        let trace = try XCTUnwrap(run.objects.first?["trace"] as? [[String: Any]])
        let ruleStep = try XCTUnwrap(trace.first { $0["rule"] as? String == "pages mentioning SEV1 are critical" })
        XCTAssertEqual(ruleStep["location"] as? String, "\(policyFile.path):5")
        let steps = Set(trace.compactMap { $0["step"] as? String })
        for step in ["expiry", "rules", "authorization", "level", "delivery"] {
            XCTAssertTrue(steps.contains(step), step)
        }
    }

    func testBrokenPolicyExitsTwoAndEvaluatesNothing() throws {
        let broken = try HushBinary.file(
            "focus \"Work\" {\n  peeple = { \"a@b.c\" },\n}\napp \"x\" { delivery = \"loud\" }\n", name: "broken",
            ext: "lua")
        let run = try HushBinary.run(["eval", "--policy", broken.path], stdin: "{\"app\":\"a\",\"payload\":{}}")
        XCTAssertEqual(run.status, 2)
        XCTAssertEqual(run.stdout, "")
        XCTAssertTrue(
            run.stderr.contains("\(broken.path):2: focus \"Work\": unknown setting 'peeple' (did you mean 'people'?)"),
            run.stderr)
        XCTAssertTrue(run.stderr.contains("\(broken.path):4:"), run.stderr)
        let syntax = try HushBinary.file("app \"x\" {\n  summary = true,,\n}\n", name: "syntax", ext: "lua")
        let run2 = try HushBinary.run(["eval", "--policy", syntax.path], stdin: "{}")
        XCTAssertEqual(run2.status, 2)
        XCTAssertTrue(run2.stderr.contains("\(syntax.path):2:"), run2.stderr)
    }

    func testUsageErrorsExitTwo() throws {
        XCTAssertEqual(try HushBinary.run(["eval", "--state", "/tmp/x.sqlite", "--ephemeral"], stdin: "").status, 2)
        XCTAssertEqual(try HushBinary.run(["eval", "--no-such-flag"], stdin: "").status, 2)
        XCTAssertEqual(try HushBinary.run(["eval", "/no/such/file.jsonl"]).status, 2)
    }

    func testSingleMultiLineObjectAndInputFile() throws {
        let pretty = """
            {
              "app": "com.example.news",
              "payload": { "aps": { "alert": { "title": "Hi" }, "interruption-level": "passive" } }
            }
            """
        let file = try HushBinary.file(pretty)
        let run = try HushBinary.run(["eval", file.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.lines.count, 1)
        XCTAssertEqual(run.objects.first?["delivery"] as? String, "quiet")
    }

    /// An input larger than the 1 MB chunk INPUT is read in: every line is decided, in order, and an
    /// invalid line past a chunk boundary keeps its number.
    func testInputLargerThanOneChunkKeepsOrderAndLineNumbers() throws {
        let padding = String(repeating: "lorem ipsum ", count: 30)
        var lines: [String] = []
        for i in 1...4000 {
            lines.append(
                i == 3500
                    ? "{\"app\": broken"
                    : "{\"id\": \"n\(i)\", \"app\": \"com.example.chat\", \"payload\": {\"aps\": {\"alert\": \"\(padding)\"}}}"
            )
        }
        let file = try HushBinary.file(lines.joined(separator: "\r\n") + "\n")
        let run = try HushBinary.run(["eval", "--ephemeral", file.path])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(run.lines.count, 4000)
        for (i, object) in run.objects.enumerated() where i % 97 == 0 || i == 3499 || i == 3999 {
            if i == 3499 {
                XCTAssertEqual(object["line"] as? Int, 3500)
            } else {
                XCTAssertEqual(object["id"] as? String, "n\(i + 1)")
            }
        }
    }

    func testUserPolicyFromXDGConfig() throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("hush-xdg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: config.appendingPathComponent("hush"), withIntermediateDirectories: true)
        try "app \"a\" { authorization = \"denied\" }".write(
            to: config.appendingPathComponent("hush/policy.lua"), atomically: true, encoding: .utf8)
        let run = try HushBinary.run(
            ["eval"], stdin: "{\"app\":\"a\",\"payload\":{\"aps\":{\"alert\":\"x\"}}}",
            environment: ["XDG_CONFIG_HOME": config.path])
        XCTAssertEqual(run.objects.first?["delivery"] as? String, "dropped")
    }

    func testBundledExampleStreamDecidesEveryLine() throws {
        let stream = HushBinary.root.appendingPathComponent("examples/stream.jsonl")
        guard FileManager.default.fileExists(atPath: stream.path) else {
            throw XCTSkip("examples/stream.jsonl not present yet")
        }
        let run = try HushBinary.run([
            "eval", "--ephemeral", "--policy", "policies/default.lua", "--context", "examples/context.json",
            stream.path,
        ])
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout.prefix(2000))
        let inputLines = try String(contentsOf: stream, encoding: .utf8).split(separator: "\n").filter {
            !$0.allSatisfy(\.isWhitespace)
        }
        XCTAssertEqual(run.objects.count, inputLines.count)
        XCTAssertTrue(run.objects.allSatisfy { !($0["reasons"] as? [String] ?? []).isEmpty })
    }

    /// `--ephemeral` keeps what was delivered `--retention` days, as a state file does (it kept 7
    /// whatever `--retention` said): one message a day in one thread, the last decision's group
    /// counts those still kept.
    func testEphemeralKeepsTheRetentionAStateFileKeeps() throws {
        let stream = ["a": 1, "b": 3, "c": 5].sorted { $0.key < $1.key }.map { id, day in
            #"{"user":"u","app":"com.example.chat","id":"\#(id)","date":"2026-01-0\#(day)T10:00:00Z","#
                + #""payload":{"aps":{"alert":{"title":"Bob","body":"hi"},"thread-id":"t"}}}"#
        }.joined(separator: "\n")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hush-retention-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func lastGroupCount(_ arguments: [String]) throws -> Int? {
            let run = try HushBinary.run(["eval", "--policy", "policies/work.lua"] + arguments, stdin: stream)
            XCTAssertEqual(run.status, 0, run.stderr)
            return (run.objects.last?["group"] as? [String: Any])?["count"] as? Int
        }
        for days in ["1", "7"] {
            let file = folder.appendingPathComponent("state-\(days).sqlite").path
            let inFile = try lastGroupCount(["--retention", days, "--state", file])
            XCTAssertEqual(try lastGroupCount(["--retention", days, "--ephemeral"]), inFile, "--retention \(days)")
            XCTAssertEqual(inFile, days == "1" ? 2 : 3)
        }
    }

    /// `$HUSH_RETENTION_DAYS` that is not a number of days above 0 is refused, naming it (it was
    /// taken for 7 when not a number); `--retention` given on the command line wins over it.
    func testABadRetentionInTheEnvironmentIsRefusedNamingIt() throws {
        let line = #"{"app":"com.example.chat","id":"a","payload":{"aps":{"alert":"hi"}}}"#
        for value in ["abc", "0", "-1"] {
            let run = try HushBinary.run(
                ["eval", "--ephemeral"], stdin: line, environment: ["HUSH_RETENTION_DAYS": value])
            XCTAssertEqual(run.status, 2, value)
            XCTAssertTrue(run.stderr.contains("$HUSH_RETENTION_DAYS"), run.stderr)
            XCTAssertTrue(run.stderr.contains("\"\(value)\""), run.stderr)
            XCTAssertTrue(run.stdout.isEmpty)
        }
        let given = try HushBinary.run(
            ["eval", "--ephemeral", "--retention", "2"], stdin: line, environment: ["HUSH_RETENTION_DAYS": "abc"])
        XCTAssertEqual(given.status, 0, given.stderr)
        let valid = try HushBinary.run(
            ["eval", "--ephemeral"], stdin: line, environment: ["HUSH_RETENTION_DAYS": "2.5"])
        XCTAssertEqual(valid.status, 0, valid.stderr)
    }
}
