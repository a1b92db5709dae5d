import HushCore
import HushJSON
import HushPolicy
import Lua
import XCTest

/// Policies that try to hang, exhaust or escape the interpreter, or break the rule contract.
final class HostilePolicyTests: XCTestCase {
    /// Loose on purpose: it catches a hang, not slowness.
    let bound = 20.0

    /// A small instruction budget and time limit so overruns are quick; loading still gets the
    /// larger loading limits.
    static let limits = LuaLimits(memoryBytes: 32 << 20, instructionLimit: 1_000_000, timeLimitMilliseconds: 500)

    private func interpreter(
        _ text: String, name: String = "policy.lua", limits: LuaLimits = limits,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> PolicyInterpreter {
        do {
            return try PolicyInterpreter(sources: [PolicySource(name: name, text: text)], limits: limits)
        } catch {
            XCTFail("the policy should load: \(error)", file: file, line: line)
            throw error
        }
    }

    private func loadError(
        _ text: String, name: String = "policy.lua", limits: LuaLimits = limits,
        file: StaticString = #filePath, line: UInt = #line
    ) -> PolicyLoadError? {
        let start = DispatchTime.now().uptimeNanoseconds
        defer {
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            XCTAssertLessThan(elapsed, bound, "loading must end", file: file, line: line)
        }
        do {
            _ = try PolicyInterpreter(sources: [PolicySource(name: name, text: text)], limits: limits)
            XCTFail("the policy should be refused", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    private func subject(title: String = "Hello", app: String = "com.example.mail") throws -> RuleSubject {
        let json =
            #"{"app": "\#(app)", "id": "n1", "payload": {"aps": {"alert": {"title": "\#(title)", "body": "Body"}}}}"#
        return RuleSubject(envelope: try Envelope.decode(try JSONParser.parse(json), fallbackID: "n1"))
    }

    private func context() -> RuleContext {
        let now = 1_700_000_000.0
        return RuleContext(
            now: now, local: ZoneClock(identifier: "UTC")!.local(now), focus: nil, locked: false,
            ringer: .ring, audio: .none, user: "u", state: EmptyState(), directory: Directory(contacts: []))
    }

    /// Runs the rules on a fresh subject; checks the run ends in bounded time.
    private func run(
        _ policy: PolicyInterpreter, title: String = "Hello", file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> (RuleSubject, [RuleReport]) {
        var s = try subject(title: title)
        var reports: [RuleReport] = []
        let start = DispatchTime.now().uptimeNanoseconds
        reports = try policy.runRules(subject: &s, context: context())
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        XCTAssertLessThan(elapsed, bound, "the rules must be stopped", file: file, line: line)
        XCTAssertEqual(reports.count, policy.policy.rules.count, "one report per rule", file: file, line: line)
        return (s, reports)
    }

    private func assertError(
        _ report: RuleReport, contains text: String, at location: String? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        guard let error = report.error else {
            return XCTFail("rule '\(report.rule.name)' should have failed with \"\(text)\"", file: file, line: line)
        }
        XCTAssertTrue(error.contains(text), "\(error) should contain \(text)", file: file, line: line)
        if let location {
            XCTAssertTrue(
                error.hasPrefix(location + ":"), "\(error) should start at \(location)", file: file, line: line)
        }
        XCTAssertNil(report.changes, "a failed rule's changes are ignored", file: file, line: line)
    }

    // MARK: overruns inside rules

    func testInfiniteLoopInARule() throws {
        let policy = try interpreter(
            """
            rule("first", function(n, ctx) return { reason = "first ran" } end)
            rule("loops", function(n, ctx)
              if n.title == "loop" then
                while true do end
              end
            end)
            rule("after", function(n, ctx) return { level = "critical" } end)
            """)
        let (s, reports) = try run(policy, title: "loop")
        XCTAssertNil(reports[0].error)
        XCTAssertEqual(reports[0].changes?.reason, "first ran")
        assertError(reports[1], contains: "instruction budget exceeded", at: "policy.lua:4")
        // The rule after the overrun did not run, and says so.
        assertError(reports[2], contains: "not run", at: "policy.lua:7")
        XCTAssertEqual(s.level, .active, "no change from a rule that did not run")

        // The next evaluation works normally.
        let (s2, reports2) = try run(policy)
        XCTAssertEqual(reports2.map(\.error), [nil, nil, nil])
        XCTAssertEqual(s2.level, .critical)
        // And an overrun again is caught again.
        let (_, reports3) = try run(policy, title: "loop")
        assertError(reports3[1], contains: "instruction budget exceeded")
    }

    func testLoopsThatTryToEscapeTheBudget() throws {
        let bodies = [
            "while true do pcall(function() while true do end end) end",
            "xpcall(function() while true do end end, function() while true do end end)",
            "xpcall(function() error('x') end, function() while true do end end)",
            "local t = setmetatable({}, { __index = function(t, k) while true do end end }) return t.x",
            "return tostring(setmetatable({}, { __tostring = function() while true do end end }))",
            "local s = string.rep('a', 1 << 22) while true do local _ = s:find('b', 1, true) end",
            "local s = string.rep('a', 100000) while true do pcall(string.find, s, '.-b') end",
            "local function f() return f() end return f()",
        ]
        for body in bodies {
            let policy = try interpreter(
                "rule(\"hostile\", function(n, ctx)\n  \(body)\nend)\nrule(\"next\", function() return { reason = 'ok' } end)"
            )
            let (_, reports) = try run(policy)
            assertError(reports[0], contains: "exceeded", at: "policy.lua:2")
            assertError(reports[1], contains: "not run")
        }
        // A loaded chunk's loop is blamed on the chunk.
        let policy = try interpreter("rule(\"hostile\", function(n, ctx) load('while true do end')() end)")
        let (_, reports) = try run(policy)
        assertError(reports[0], contains: #"[string "while true do end"]:1: instruction budget exceeded"#)
    }

    func testErrorObjectWithLoopingTostring() throws {
        let policy = try interpreter(
            """
            rule("throws", function(n, ctx)
              error(setmetatable({}, { __tostring = function() while true do end end }))
            end)
            rule("next", function() return { reason = "ran" } end)
            """)
        let (_, reports) = try run(policy)
        assertError(reports[0], contains: "error object is a table value", at: "policy.lua:1")
        XCTAssertNil(reports[1].error, "an ordinary error does not stop later rules")
        XCTAssertEqual(reports[1].changes?.reason, "ran")
    }

    func testMemoryBombInARule() throws {
        let policy = try interpreter(
            """
            rule("grows", function(n, ctx)
              if n.title == "bomb" then
                local t = {}
                for i = 1, 1e9 do t[i] = i end
              end
              return { reason = "small" }
            end)
            rule("after", function() return { reason = "after" } end)
            """, limits: LuaLimits(memoryBytes: 16 << 20, instructionLimit: 1_000_000_000, timeLimitMilliseconds: 0))
        let (_, reports) = try run(policy, title: "bomb")
        assertError(reports[0], contains: "not enough memory", at: "policy.lua:1")
        assertError(reports[1], contains: "not run")
        // The next evaluation works, and the memory came back.
        let (_, reports2) = try run(policy)
        XCTAssertEqual(reports2.map(\.error), [nil, nil])
        XCTAssertEqual(reports2.map { $0.changes?.reason }, ["small", "after"])
        let (_, reports3) = try run(policy, title: "bomb")
        assertError(reports3[0], contains: "not enough memory")
        let (_, reports4) = try run(policy)
        XCTAssertEqual(reports4.map(\.error), [nil, nil])
    }

    func testStringBombs() throws {
        let policy = try interpreter(
            """
            rule("rep", function(n, ctx) return { reason = string.rep("x", 1e12) } end)
            rule("pattern", function(n, ctx) return { reason = tostring(string.find(string.rep("a", 1e5), "a*a*a*a*a*a*b")) } end)
            rule("empty rep", function(n, ctx) return { reason = "[" .. string.rep("", 1e15) .. "]" } end)
            """)
        let (_, reports) = try run(policy)
        assertError(reports[0], contains: "resulting string too large", at: "policy.lua:1")
        assertError(reports[1], contains: "pattern too complex", at: "policy.lua:2")
        XCTAssertNil(reports[2].error)
        XCTAssertEqual(reports[2].changes?.reason, "[]")
    }

    // MARK: the rule contract

    func testWrongReturnValues() throws {
        let policy = try interpreter(
            """
            rule("loud", function(n, ctx) return { level = "loud" } end)
            rule("number", function(n, ctx) return 42 end)
            rule("typo", function(n, ctx) return { levl = "critical" } end)
            rule("relevance", function(n, ctx) return { relevance = 2 } end)
            rule("allow", function(n, ctx) return { allow = "yes" } end)
            rule("array", function(n, ctx) return { "critical" } end)
            rule("string", function(n, ctx) return "critical" end)
            rule("good", function(n, ctx) return { level = "time-sensitive", reason = "fine" } end)
            rule("withdraw", function(n, ctx) return { delivery = "withdrawn" } end)
            """)
        let (s, reports) = try run(policy)
        assertError(
            reports[0], contains: "change 'level' must be passive, active, time-sensitive or critical, got \"loud\"",
            at: "policy.lua:1")
        assertError(reports[1], contains: "a rule returns nil or a table of changes, got a number", at: "policy.lua:2")
        assertError(reports[2], contains: "unknown change 'levl' (did you mean 'level'?)", at: "policy.lua:3")
        assertError(reports[3], contains: "change 'relevance' must be a number from 0 to 1, got 2", at: "policy.lua:4")
        assertError(reports[4], contains: "change 'allow' must be true or false, got \"yes\"", at: "policy.lua:5")
        assertError(reports[5], contains: "key = value", at: "policy.lua:6")
        assertError(reports[6], contains: "got a string", at: "policy.lua:7")
        XCTAssertNil(reports[7].error, "wrong values in one rule do not stop the others")
        assertError(reports[8], contains: "change 'delivery' must be", at: "policy.lua:9")
        XCTAssertEqual(s.level, .timeSensitive)
        XCTAssertFalse(s.delivery != nil || s.allow != nil || s.relevance != nil)
    }

    func testReturnedTableMetamethodsAreNotRun() throws {
        let policy = try interpreter(
            """
            rule("proxy", function(n, ctx)
              return setmetatable({}, { __index = function() return "critical" end, __pairs = function() while true do end end })
            end)
            """)
        let (s, reports) = try run(policy)
        XCTAssertNil(reports[0].error)
        XCTAssertEqual(reports[0].changes, RuleChanges())
        XCTAssertEqual(s.level, .active)
    }

    // MARK: the read-only views and shared types

    func testNotificationIsReadOnly() throws {
        let policy = try interpreter(
            """
            rule("mutate", function(n, ctx) n.level = "critical" end)
            rule("mutate ctx", function(n, ctx) ctx.focus = "Work" end)
            rule("rawset", function(n, ctx) rawset(n, "level", "critical") end)
            rule("setmetatable", function(n, ctx) setmetatable(n, {}) end)
            rule("metatable", function(n, ctx) getmetatable(n).__index = function() return "critical" end end)
            rule("reads", function(n, ctx)
              return { reason = n.level .. "|" .. tostring(getmetatable(n)) .. "|" .. tostring(n) .. "|" .. tostring(n.nonsense) }
            end)
            """)
        let (s, reports) = try run(policy)
        assertError(reports[0], contains: "read-only", at: "policy.lua:1")
        assertError(reports[0], contains: "cannot set 'level'")
        assertError(reports[1], contains: "read-only", at: "policy.lua:2")
        assertError(
            reports[2], contains: "bad argument #1 to 'rawset' (table expected, got userdata)", at: "policy.lua:3")
        // (The place is the prelude's setmetatable wrapper, hush:95, not the rule: see the report.)
        assertError(reports[3], contains: "bad argument #1 to 'setmetatable' (table expected, got userdata)")
        assertError(reports[4], contains: "attempt to index a string value", at: "policy.lua:5")
        XCTAssertNil(reports[5].error)
        XCTAssertEqual(
            reports[5].changes?.reason,
            "active|notification (read-only)|notification (read-only)|nil")
        XCTAssertEqual(s.level, .active)
    }

    func testStringMetatableTricksAreContained() throws {
        let policy = try interpreter(
            """
            rule("string metatable", function(n, ctx) getmetatable("").__index = { upper = function() return "pwned" end } end)
            rule("string metatable via rawset", function(n, ctx) rawset(getmetatable(""), "__index", {}) end)
            rule("set string metatable", function(n, ctx) setmetatable("", {}) end)
            rule("methods", function(n, ctx) return { reason = n.title:upper() .. tostring(getmetatable("")) } end)
            """)
        let (_, reports) = try run(policy)
        assertError(reports[0], contains: "attempt to index a string value", at: "policy.lua:1")
        assertError(
            reports[1], contains: "bad argument #1 to 'rawset' (table expected, got string)", at: "policy.lua:2")
        assertError(reports[2], contains: "bad argument #1 to 'setmetatable' (table expected, got string)")
        XCTAssertEqual(reports[3].changes?.reason, "HELLOstring")
    }

    func testFinalizersAreRefused() throws {
        let policy = try interpreter(
            """
            rule("gc", function(n, ctx)
              setmetatable({}, { __gc = function() while true do end end })
            end)
            rule("after", function() return { reason = "ok" } end)
            """)
        let (_, reports) = try run(policy)
        assertError(reports[0], contains: "__gc metamethods are not allowed", at: "policy.lua:2")
        XCTAssertEqual(reports[1].changes?.reason, "ok")

        let e = loadError("local x = 1\nsetmetatable({}, { __gc = print })\n")
        XCTAssertEqual(e?.problems.first?.line, 2)
        XCTAssertTrue(
            e?.problems.first?.message.contains("__gc metamethods are not allowed") ?? false, "\(String(describing: e))"
        )
    }

    func testSandboxGlobalsAreAbsentInRules() throws {
        let policy = try interpreter(
            """
            rule("io", function(n, ctx) return io.open("/etc/passwd") end)
            rule("os", function(n, ctx) return os.time() end)
            rule("require", function(n, ctx) return require("io") end)
            rule("debug", function(n, ctx) return debug.getinfo(1) end)
            rule("bytecode", function(n, ctx) return assert(load("\\27Lua\\x54\\x00\\x19\\x93\\r\\n\\x1a\\n"))() end)
            rule("coroutine", function(n, ctx) return coroutine.wrap(print) end)
            rule("collectgarbage", function(n, ctx) collectgarbage() end)
            """)
        let (_, reports) = try run(policy)
        for (i, name) in ["io", "os", "require", "debug"].enumerated() {
            assertError(reports[i], contains: "global '\(name)'", at: "policy.lua:\(i + 1)")
        }
        assertError(reports[4], contains: "binary chunk", at: "policy.lua:5")
        assertError(reports[5], contains: "global 'coroutine'", at: "policy.lua:6")
        assertError(reports[6], contains: "global 'collectgarbage'", at: "policy.lua:7")
    }

    func testHelperErrorsAndRawReads() throws {
        let policy = try interpreter(
            """
            rule("bad option", function(n, ctx)
              return { reason = tostring(hush.recent { app = "x", minuts = 5 }) }
            end)
            rule("proxy options", function(n, ctx)
              -- Options are read raw: a looping __index is never run.
              local opts = setmetatable({}, { __index = function() while true do end end })
              return { reason = tostring(hush.recent(opts)) }
            end)
            rule("huge person", function(n, ctx)
              local t = {} for i = 1, 20000 do t[i] = "alias" .. i end
              return { reason = tostring(hush.contact { handle = "a", aliases = t }) }
            end)
            """)
        let (_, reports) = try run(policy)
        assertError(
            reports[0], contains: "hush.recent: unknown option 'minuts' (did you mean 'minutes'?)", at: "policy.lua:2")
        XCTAssertEqual(reports[1].changes?.reason, "0")
        assertError(reports[2], contains: "too large", at: "policy.lua:11")
    }

    func testPrintAndNotesBecomeNotes() throws {
        let policy = try interpreter(
            """
            rule("talks", function(n, ctx) print("hello", 1, nil) hush.note("noted") end)
            rule("quiet", function(n, ctx) end)
            """)
        let (_, reports) = try run(policy)
        XCTAssertEqual(reports[0].notes, ["hello\t1\tnil", "noted"])
        XCTAssertEqual(reports[1].notes, [])
    }

    // MARK: loading

    func testInfiniteLoopAtTopLevel() throws {
        let e = loadError(
            "timezone \"Europe/Berlin\"\nlocal n = 0\nwhile true do\n  n = n + 1\nend\n", name: "policies/loop.lua")
        let problem = try XCTUnwrap(e?.problems.first)
        XCTAssertEqual(e?.problems.count, 1)
        XCTAssertEqual(problem.file, "policies/loop.lua")
        XCTAssertTrue((3...5).contains(problem.line), "\(problem)")
        XCTAssertTrue(problem.message.contains("took too long to load"), problem.message)
    }

    func testTopLevelLoopsThatTryToEscape() throws {
        for text in [
            "while true do pcall(function() while true do end end) end",
            "xpcall(function() error('x') end, function() while true do end end)",
        ] {
            let e = loadError(text)
            XCTAssertEqual(e?.problems.first?.file, "policy.lua", text)
            XCTAssertEqual(e?.problems.first?.line, 1, text)
            XCTAssertTrue(
                e?.problems.first?.message.contains("took too long to load") ?? false,
                "\(text): \(String(describing: e))")
        }
    }

    func testSyntaxErrorLine() throws {
        let e = loadError(
            "app \"*\" { grouping = \"automatic\" }\n\nrule(\"x\", function(n, ctx)\n  return { level = = 1 }\nend)\n",
            name: "policies/syntax.lua")
        let problem = try XCTUnwrap(e?.problems.first)
        XCTAssertEqual(problem.file, "policies/syntax.lua")
        XCTAssertEqual(problem.line, 4)
        XCTAssertTrue(problem.message.hasPrefix("syntax error:"), problem.message)
        XCTAssertEqual(problem.description, "policies/syntax.lua:4: \(problem.message)")
    }

    func testRuntimeErrorAtTopLevel() throws {
        let e = loadError("local a = 1\nlocal b = nil\nlocal c = b.field\n")
        XCTAssertEqual(e?.problems.first?.line, 3)
        XCTAssertEqual(e?.problems.first?.message, "attempt to index a nil value (local 'b')")
    }

    func testSecondFileRefusedWithItsOwnName() throws {
        do {
            _ = try PolicyInterpreter(
                sources: [
                    PolicySource(name: "a.lua", text: "timezone \"UTC\""),
                    PolicySource(name: "b.lua", text: "\n\nwhile true do end"),
                ],
                limits: Self.limits)
            XCTFail("should be refused")
        } catch {
            XCTAssertEqual(error.problems.first?.file, "b.lua")
            XCTAssertEqual(error.problems.first?.line, 3)
        }
    }

    func testMemoryCapAtLoad() throws {
        let limits = LuaLimits(memoryBytes: 8 << 20, instructionLimit: 1_000_000)
        let e = loadError("local t = {}\nfor i = 1, 1e9 do t[i] = i end\n", limits: limits)
        let problem = try XCTUnwrap(e?.problems.first)
        XCTAssertEqual(problem.file, "policy.lua")
        XCTAssertTrue(problem.message.contains("more memory than allowed"), problem.message)
        // A string bomb at load: refused too.
        let s = loadError("local s = 'x'\nwhile true do s = s .. s end\n", limits: limits)
        XCTAssertTrue(
            s?.problems.first?.message.contains("more memory than allowed") ?? false, "\(String(describing: s))")
        // A policy that fits loads under the same cap.
        XCTAssertNoThrow(
            try PolicyInterpreter(
                sources: [PolicySource(name: "ok.lua", text: "local t = {} for i = 1, 1000 do t[i] = i end")],
                limits: limits))
    }

    func testExponentialDeclarationIsRefusedQuickly() throws {
        // A few kilobytes of Lua tables that share subtables: copying the declaration naively would
        // take forever; it must be refused as too large instead.
        let e = loadError(
            """
            local t = {}
            for i = 1, 12 do t = { t, t, t, t, t, t, t, t, t, t } end
            app "com.example.mail" { name = "Mail", junk = t }
            """)
        let problem = try XCTUnwrap(e?.problems.first)
        XCTAssertEqual(problem.line, 3)
        XCTAssertTrue(problem.message.contains("too large"), problem.message)
        XCTAssertTrue(problem.message.contains("app \"com.example.mail\""), problem.message)

        // Many declarations sharing one big table share one budget.
        let many = loadError(
            """
            local big = {} for i = 1, 50000 do big[i] = i end
            for i = 1, 100 do app ("com.example.app" .. i) { name = "x", junk = big } end
            """)
        XCTAssertTrue(
            many?.problems.contains { $0.message.contains("too large") } ?? false, "\(String(describing: many))")
    }
}
