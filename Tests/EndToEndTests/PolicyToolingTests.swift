import Foundation
import XCTest

/// `hush check`, `hush test`, the example policies and the outcomes table, as a user runs them.
final class PolicyToolingTests: XCTestCase {
    func testCheckReportsEveryProblemWithLineAndWord() throws {
        let broken = try HushBinary.file("""
            timezone "Europe/Berln"
            app "com.example.news" { sumary = true, delivery = "loud" }
            focus "Work" {
              schedule = { days = "mon-fry", from = "9:00", to = "17:30" },
              calls = "evryone",
            }
            focus "Work" { }
            rule("no function", 42)
            summary { at = { "25:00" } }
            """, name: "broken", ext: "lua")
        let run = try HushBinary.run(["check", broken.path])
        XCTAssertEqual(run.status, 1)
        let p = broken.path
        for expected in [
            "\(p):1: timezone: unknown time zone \"Europe/Berln\" (did you mean \"Europe/Berlin\"?)",
            "\(p):2: app \"com.example.news\": unknown setting 'sumary' (did you mean 'summary'?)",
            "\(p):2: app \"com.example.news\": 'delivery' must be one of prominent, quiet, got \"loud\"",
            "\(p):4: focus \"Work\" schedule: 'days' has \"mon-fry\"",
            "\(p):4: focus \"Work\" schedule: 'from' must be a 24-hour time \"HH:MM\" such as \"09:00\", got \"9:00\"",
            "\(p):5: focus \"Work\": 'calls' must be one of everyone, allowed, favorites, contacts, nobody, got \"evryone\" (did you mean 'everyone'?)",
            "\(p):7: focus \"Work\" is declared twice (first at \(p):3)",
            "\(p):8: rule \"no function\" is not a function",
            "\(p):9: summary: 'at' has \"25:00\"",
        ] {
            XCTAssertTrue(run.stdout.contains(expected), "missing: \(expected)\n\(run.stdout)")
        }
        XCTAssertTrue(run.stdout.hasSuffix("9 problems\n"), run.stdout)
    }

    func testCheckSyntaxAndRuntimeErrorsAndCleanPolicy() throws {
        let syntax = try HushBinary.file("app \"x\" {\n  summary = true\n", name: "syntax", ext: "lua")
        let run = try HushBinary.run(["check", syntax.path])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stdout.contains("\(syntax.path):3: syntax error:"), run.stdout)
        let typo = try HushBinary.file("\n\nfocuss \"Work\" { }\n", name: "typo", ext: "lua")
        let run2 = try HushBinary.run(["check", typo.path])
        XCTAssertTrue(run2.stdout.contains("\(typo.path):3: attempt to call a nil value (global 'focuss') (did you mean 'focus'?)"), run2.stdout)
        let clean = try HushBinary.run(["check", "policies"])
        XCTAssertEqual(clean.status, 0, clean.stdout)
        XCTAssertEqual(try HushBinary.run(["check", "/no/such.lua"]).status, 2)
    }

    func testExamplePoliciesPassTheirTests() throws {
        let run = try HushBinary.run(["test", "policies"])
        XCTAssertEqual(run.status, 0, run.stdout)
        let last = try XCTUnwrap(run.lines.last)
        XCTAssertTrue(last.hasSuffix(" passed, 0 failed"), last)
        XCTAssertGreaterThanOrEqual(Int(last.split(separator: " ").first ?? "") ?? 0, 30)
    }

    func testHushTestReportsFailuresWithPlaceExpectedAndGot() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hush-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try "focus \"Work\" { apps = { \"com.example.mail\" } }\n".write(to: dir.appendingPathComponent("mine.lua"), atomically: true, encoding: .utf8)
        try """
            test("mail gets through", {
              context = { focus = "Work" },
              notification = { app = "com.example.mail", payload = { aps = { alert = "hi" } } },
              expect = { delivery = "alert", breakthrough = "app", rules = {} },
            })

            test("chat gets through too (wrong on purpose)", {
              context = { focus = "Work" },
              notification = { app = "com.example.chat", payload = { aps = { alert = "hi" } } },
              expect = { delivery = "alert", breakthrough = null },
            })
            """.write(to: dir.appendingPathComponent("mine_test.lua"), atomically: true, encoding: .utf8)
        let run = try HushBinary.run(["test", dir.path])
        XCTAssertEqual(run.status, 1)
        let file = dir.appendingPathComponent("mine_test.lua").path
        XCTAssertTrue(run.stdout.contains("\(file):7: FAIL \"chat gets through too (wrong on purpose)\""), run.stdout)
        XCTAssertTrue(run.stdout.contains("delivery: expected \"alert\", got \"silenced\""), run.stdout)
        XCTAssertEqual(run.lines.last, "1 passed, 1 failed")
    }

    /// A directory with `mine.lua` (Work lets mail through) and the given test files.
    func testDirectory(_ tests: [String: String]) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hush-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try "focus \"Work\" { apps = { \"com.example.mail\" } }\n".write(to: dir.appendingPathComponent("mine.lua"), atomically: true, encoding: .utf8)
        for (name, text) in tests {
            try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        return dir
    }

    func testFailuresListFieldsInTheDecisionsOrder() throws {
        // Listed out of order on purpose; every value is wrong.
        let dir = try testDirectory(["mine_test.lua": """
            test("everything is wrong", {
              context = { focus = "Work", now = "2026-11-24T10:00:00+01:00" },
              notification = { app = "com.example.chat", payload = { aps = { alert = "hi" } } },
              expect = { replaces = "r", summary_at = "2026-11-24T18:00:00+01:00", placeholder = "p",
                         group = { summary = "s", count = 5, id = "g" }, announcement = "a", badge = 3,
                         breakthrough = "app", focus = "Sleep", requested_level = "passive", level = "critical",
                         delivery = "quiet", rules = { "r" } },
            })
            """])
        let first = try HushBinary.run(["test", dir.path])
        XCTAssertEqual(first.status, 1)
        let fields = first.lines.filter { $0.hasPrefix("    ") }.map { String($0.dropFirst(4).prefix { $0 != ":" }) }
        XCTAssertEqual(fields, ["delivery", "level", "requested_level", "focus", "breakthrough", "badge", "announcement",
                                "group.id", "group.count", "group.summary", "placeholder", "summary_at", "replaces", "rules",
                                "reasons"], first.stdout)
        for _ in 0..<3 {
            let again = try HushBinary.run(["test", dir.path])
            XCTAssertEqual(again.stdout, first.stdout)
        }
    }

    func testOutcomesTableIsWhatTheScriptPrints() throws {
        let script = HushBinary.root.appendingPathComponent("scripts/outcomes.sh")
        let table = HushBinary.root.appendingPathComponent("examples/outcomes.md")
        guard FileManager.default.fileExists(atPath: script.path) else { throw XCTSkip("no outcomes script") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script.path, HushBinary.executable.path]
        process.currentDirectoryURL = HushBinary.root
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let committed = try String(contentsOf: table, encoding: .utf8)
        XCTAssertEqual(String(decoding: data, as: UTF8.self), committed,
                       "examples/outcomes.md drifted from the engine: regenerate with scripts/outcomes.sh .build/debug/hush > examples/outcomes.md")
    }
}
