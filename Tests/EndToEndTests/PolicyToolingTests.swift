import Foundation
import XCTest

/// `hush check`, `hush test`, the example policies and the outcomes table, as a user runs them.
final class PolicyToolingTests: XCTestCase {
    func testCheckReportsEveryProblemWithLineAndWord() throws {
        let broken = try HushBinary.file(
            """
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
        XCTAssertTrue(
            run2.stdout.contains(
                "\(typo.path):3: attempt to call a nil value (global 'focuss') (did you mean 'focus'?)"), run2.stdout)
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
        try "focus \"Work\" { apps = { \"com.example.mail\" } }\n".write(
            to: dir.appendingPathComponent("mine.lua"), atomically: true, encoding: .utf8)
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
        try "focus \"Work\" { apps = { \"com.example.mail\" } }\n".write(
            to: dir.appendingPathComponent("mine.lua"), atomically: true, encoding: .utf8)
        for (name, text) in tests {
            try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        return dir
    }

    /// One malformed test in each way, between two good ones: line numbers matter below.
    static let malformedTests = """
        local function mail(who) return { app = "com.example.mail", payload = { aps = { alert = who.name } } } end
        local chat = { app = "com.example.chat", payload = { aps = { alert = "hi" } } }
        test("mail gets through", { context = { focus = "Work" }, notification = mail({ name = "Al" }), expect = { delivery = "alert" } })
        test("a misspelt decision field", { context = { focus = "Work" }, notification = chat, expect = { delievry = "silenced" } })
        test("a misspelt alert field", { notification = chat, expect = { alert = { sond = true } } })
        test("a test function that errors", function()
          return { notification = mail(nil), expect = { delivery = "alert" } }
        end)
        test("an unknown context key", { context = { focsu = "Work" }, notification = chat, expect = { delivery = "alert" } })
        test("an undeclared focus", { context = { focus = "Wrok" }, notification = chat, expect = { delivery = "silenced" } })
        test("an unknown test key", { notification = chat, expect = { delivery = "alert" }, expects = {} })
        test("chat is silenced", { context = { focus = "Work" }, notification = chat, expect = { delivery = "silenced" } })
        """

    func testHushTestRunsEveryTestWhenSomeAreMalformed() throws {
        let dir = try testDirectory(["mine_test.lua": Self.malformedTests])
        let run = try HushBinary.run(["test", "-v", dir.path])
        XCTAssertEqual(run.status, 1)
        let file = dir.appendingPathComponent("mine_test.lua").path
        for expected in [
            "\(file):3: ok \"mail gets through\"",
            "\(file):4: FAIL \"a misspelt decision field\"\n    expect.delievry: not a decision field (did you mean 'delivery'?)",
            "\(file):5: FAIL \"a misspelt alert field\"\n    expect.alert.sond: not a field of alert (did you mean 'sound'?)",
            "\(file):6: FAIL \"a test function that errors\"\n    \(file):1: attempt to index a nil value (local 'who')",
            "\(file):9: FAIL \"an unknown context key\"\n    context.focsu: unknown context key (did you mean 'focus'?)",
            "\(file):10: FAIL \"an undeclared focus\"\n    context.focus: the policy declares no focus named \"Wrok\" (did you mean \"Work\"?)",
            "\(file):11: FAIL \"an unknown test key\"\n    unknown key 'expects' (did you mean 'expect'?)",
            "\(file):12: ok \"chat is silenced\"",
        ] {
            XCTAssertTrue(run.stdout.contains(expected), "missing: \(expected)\n\(run.stdout)")
        }
        XCTAssertEqual(run.lines.last, "2 passed, 6 failed")
    }

    func testHushTestRunsTheTestsBeforeAnErrorOutsideAnyTest() throws {
        let dir = try testDirectory([
            "mine_test.lua": """
            local chat = { app = "com.example.chat", payload = { aps = { alert = "hi" } } }
            test("chat is silenced", { context = { focus = "Work" }, notification = chat, expect = { delivery = "silenced" } })
            local broken = nil
            test("never declared", { notification = broken.notification, expect = { delivery = "alert" } })
            test("never declared either", { notification = chat, expect = { delivery = "alert" } })
            """
        ])
        let run = try HushBinary.run(["test", dir.path])
        XCTAssertEqual(run.status, 1)
        let file = dir.appendingPathComponent("mine_test.lua").path
        XCTAssertTrue(
            run.stdout.contains(
                "\(file):4: attempt to index a nil value (local 'broken'); the tests after it did not run"), run.stdout)
        XCTAssertEqual(run.lines.last, "1 passed, 1 failed")
    }

    func testCheckFindsWhatHushTestWouldReject() throws {
        let dir = try testDirectory(["mine_test.lua": Self.malformedTests])
        let file = dir.appendingPathComponent("mine_test.lua").path
        let run = try HushBinary.run(["check", file])
        XCTAssertEqual(run.status, 1, run.stdout)
        for expected in [
            "\(file):4: test \"a misspelt decision field\": expect.delievry: not a decision field (did you mean 'delivery'?)",
            "\(file):5: test \"a misspelt alert field\": expect.alert.sond: not a field of alert (did you mean 'sound'?)",
            "\(file):6: test \"a test function that errors\": \(file):1: attempt to index a nil value (local 'who')",
            "\(file):9: test \"an unknown context key\": context.focsu: unknown context key (did you mean 'focus'?)",
            "\(file):10: test \"an undeclared focus\": context.focus: the policy declares no focus named \"Wrok\" (did you mean \"Work\"?)",
            "\(file):11: test \"an unknown test key\": unknown key 'expects' (did you mean 'expect'?)",
        ] {
            XCTAssertTrue(run.stdout.contains(expected), "missing: \(expected)\n\(run.stdout)")
        }
        XCTAssertFalse(run.stdout.contains(":3:"), run.stdout)
        XCTAssertFalse(run.stdout.contains(":12:"), run.stdout)
        XCTAssertEqual(run.lines.last, "6 problems")
    }

    func testFailuresListFieldsInTheDecisionsOrder() throws {
        // Listed out of order on purpose; every value is wrong.
        let dir = try testDirectory([
            "mine_test.lua": """
            test("everything is wrong", {
              context = { focus = "Work", now = "2026-11-24T10:00:00+01:00" },
              notification = { app = "com.example.chat", payload = { aps = { alert = "hi" } } },
              expect = { replaces = "r", summary_at = "2026-11-24T18:00:00+01:00", placeholder = "p",
                         group = { summary = "s", count = 5, id = "g" }, announcement = "a", badge = 3,
                         breakthrough = "app", focus = "Sleep", requested_level = "passive", level = "critical",
                         delivery = "quiet", rules = { "r" } },
            })
            """
        ])
        let first = try HushBinary.run(["test", dir.path])
        XCTAssertEqual(first.status, 1)
        let fields = first.lines.filter { $0.hasPrefix("    ") }.map { String($0.dropFirst(4).prefix { $0 != ":" }) }
        XCTAssertEqual(
            fields,
            [
                "delivery", "level", "requested_level", "focus", "breakthrough", "badge", "announcement",
                "group.id", "group.count", "group.summary", "placeholder", "summary_at", "replaces", "rules",
                "reasons",
            ], first.stdout)
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
        XCTAssertEqual(
            String(decoding: data, as: UTF8.self), committed,
            "examples/outcomes.md drifted from the engine: regenerate with scripts/outcomes.sh .build/debug/hush > examples/outcomes.md"
        )
    }
}
