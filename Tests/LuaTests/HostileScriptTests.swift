import Lua
import XCTest

/// Scripts that try to hang, exhaust or escape the interpreter. Each must end, with the right kind
/// of error, and leave the interpreter usable. Time bounds are loose on purpose (a loaded CI
/// machine): what they catch is a hang, not slowness.
final class HostileScriptTests: XCTestCase {
    /// Generous: a hostile script must end well within this, on any machine.
    let bound = 20.0

    /// Small instruction budget and memory cap, so overruns are quick.
    static let tight = LuaLimits(
        memoryBytes: 16 << 20, graceMilliseconds: 2, instructionLimit: 2_000_000, timeLimitMilliseconds: 300)
    /// An instruction budget and a time limit out of reach, so the memory cap is what stops a script.
    static let memoryBound = LuaLimits(
        memoryBytes: 8 << 20, graceMilliseconds: 2, instructionLimit: 2_000_000_000,
        timeLimitMilliseconds: 0)
    /// The default memory cap (room for Lua's own stack limit), a small instruction budget.
    static let roomy = LuaLimits(instructionLimit: 2_000_000)

    /// Runs `code` (through `call`, inside one budget window) and returns its error.
    func hostile(_ code: String, limits: LuaLimits = tight, file: StaticString = #filePath, line: UInt = #line) throws
        -> (LuaError?, LuaState)
    {
        let lua = try LuaState(limits: limits)
        var error: LuaError?
        let elapsed = seconds {
            error = expectLuaError(
                { () throws(LuaError) in try evaluate(lua, code, chunkName: "hostile.lua") }, file: file, line: line)
        }
        XCTAssertLessThan(elapsed, bound, "the script must be stopped", file: file, line: line)
        XCTAssertEqual(lua.top, 0, "the stack is back where it was", file: file, line: line)
        XCTAssertFalse(lua.budgetExhausted && error == nil, file: file, line: line)
        return (error, lua)
    }

    /// After an overrun, the same interpreter runs a fresh window normally.
    func assertUsable(_ lua: LuaState, file: StaticString = #filePath, line: UInt = #line) {
        do {
            let sum = try evaluate(lua, "local s = 0 for i = 1, 1000 do s = s + i end return s")
            XCTAssertEqual(sum, .integer(500_500), file: file, line: line)
            let caught = try evaluate(lua, "local ok, e = pcall(error, 'caught') return e")
            XCTAssertEqual(caught, .string("caught"), file: file, line: line)
        } catch {
            XCTFail("the interpreter is not usable after an overrun: \(error)", file: file, line: line)
        }
    }

    // MARK: time

    func testInfiniteLoop() throws {
        let (e, lua) = try hostile("while true do end")
        XCTAssertEqual(e?.kind, .budget)
        XCTAssertTrue(e?.message.contains("instruction budget") ?? false, e?.message ?? "")
        XCTAssertEqual(e?.file, "hostile.lua")
        XCTAssertEqual(e?.line, 1)
        assertUsable(lua)
    }

    func testInfiniteLoopThroughRun() throws {
        // `run` uses the loading limits: a longer grace and a bigger budget, but still a bound.
        let lua = try LuaState(limits: Self.tight)
        var error: LuaError?
        let elapsed = seconds {
            error = expectLuaError({ () throws(LuaError) in
                try lua.run("local n = 0\nwhile true do n = n + 1 end", chunkName: "top.lua")
            })
        }
        XCTAssertLessThan(elapsed, bound)
        XCTAssertEqual(error?.kind, .budget)
        XCTAssertEqual(error?.file, "top.lua")
        XCTAssertEqual(error?.line, 2)
        XCTAssertEqual(lua.limits, Self.tight, "run puts the evaluation limits back")
        assertUsable(lua)
    }

    func testAWindowRightAfterLoadingIsWatchedWithItsOwnGrace() throws {
        // Loading raises the grace to 100 ms and puts it back; the watchdog, having looked while
        // loading ran, sleeps up to 100 ms unless putting the limits back wakes it. A loop right
        // after must still be stopped a grace (2 ms) and its budget later, not 100 ms later.
        let lua = try LuaState(
            limits: LuaLimits(
                memoryBytes: 16 << 20, graceMilliseconds: 2, instructionLimit: 200_000, timeLimitMilliseconds: 0))
        var fastest = Double.infinity
        for _ in 0..<5 {
            try lua.run("local n = 0 for i = 1, 3000000 do n = n + i end", chunkName: "load.lua")
            var error: LuaError?
            let elapsed = seconds {
                error = expectLuaError({ () throws(LuaError) in _ = try evaluate(lua, "while true do end") })
            }
            XCTAssertEqual(error?.kind, .budget)
            fastest = min(fastest, elapsed)
        }
        XCTAssertLessThan(fastest, 0.04, "stopped within its own grace and budget (best of 5)")
        assertUsable(lua)
    }

    func testLoopInsidePcallCannotSwallowTheBudget() throws {
        let (e, lua) = try hostile("while true do pcall(function() while true do end end) end")
        XCTAssertEqual(e?.kind, .budget)
        assertUsable(lua)
    }

    func testPcallReturningAfterTheOverrunDoesNotContinue() throws {
        let (e, lua) = try hostile(
            """
            local ok = pcall(function() while true do end end)
            caught = true
            return 1
            """)
        XCTAssertEqual(e?.kind, .budget)
        XCTAssertEqual(try evaluate(lua, "return caught"), .nil, "nothing after the overrun ran")
    }

    func testXpcallWithLoopingHandler() throws {
        let (e, lua) = try hostile(
            """
            while true do
              xpcall(function() error("x") end, function(m) while true do end end)
            end
            """)
        XCTAssertEqual(e?.kind, .budget)
        assertUsable(lua)
        let (e2, lua2) = try hostile(
            "return xpcall(function() while true do end end, function(m) while true do end end)")
        XCTAssertEqual(e2?.kind, .budget)
        assertUsable(lua2)
    }

    func testLoopingCloseHandler() throws {
        let (e, lua) = try hostile(
            """
            local x <close> = setmetatable({}, { __close = function() while true do end end })
            while true do end
            """)
        XCTAssertEqual(e?.kind, .budget)
        assertUsable(lua)
    }

    func testErrorObjectWithLoopingTostring() throws {
        let (e, lua) = try hostile("error(setmetatable({}, { __tostring = function() while true do end end }))")
        XCTAssertEqual(e?.kind, .runtime)
        XCTAssertEqual(e?.message, "error object is a table value")
        assertUsable(lua)
        // tostring() by the script itself is Lua code, under the budget.
        let (e2, _) = try hostile(
            "return tostring(setmetatable({}, { __tostring = function() while true do end end }))")
        XCTAssertEqual(e2?.kind, .budget)
    }

    func testLoopingMetamethods() throws {
        for code in [
            "local t = setmetatable({}, { __index = function() while true do end end }) return t.x",
            "local t = setmetatable({}, { __eq = function() while true do end end }) return t == setmetatable({}, getmetatable(t))",
            "table.sort({ 3, 2, 1, 5, 4 }, function(a, b) while true do end end)",
            "string.gsub('aaaa', 'a', function() while true do end end)",
            "for w in string.gmatch(string.rep('a', 100), 'a') do while true do end end",
            "load('while true do end')()",
        ] {
            let (e, _) = try hostile(code)
            XCTAssertEqual(e?.kind, .budget, code)
        }
    }

    func testRecursionWithoutEnd() throws {
        let (e, lua) = try hostile("local function f(n) return 1 + f(n + 1) end return f(1)", limits: Self.roomy)
        XCTAssertEqual(e?.kind, .runtime)
        XCTAssertTrue(e?.message.contains("stack overflow") ?? false, e?.message ?? "")
        assertUsable(lua)
        // Through a C function (the C stack limit).
        let (c, lua2) = try hostile(
            "local function f(s) return (string.gsub(s, '.', f)) end return f('x')", limits: Self.roomy)
        XCTAssertEqual(c?.kind, .runtime)
        XCTAssertTrue(c?.message.contains("stack overflow") ?? false, c?.message ?? "")
        assertUsable(lua2)
        // And tail calls run forever, so the budget stops them.
        let (t, _) = try hostile("local function f(n) return f(n + 1) end return f(1)")
        XCTAssertEqual(t?.kind, .budget)
        // Under a small memory cap, Lua's stack reaches the cap first: a memory error, still no crash.
        let (m, lua3) = try hostile("local function f(n) return 1 + f(n + 1) end return f(1)", limits: Self.memoryBound)
        XCTAssertEqual(m?.kind, .memory)
        assertUsable(lua3)
    }

    func testTimeLimitNamesThePlace() throws {
        let (e, lua) = try hostile(
            "local s = string.rep('a', 1 << 22)\nwhile true do local _ = s:find('b', 1, true) end")
        XCTAssertEqual(e?.kind, .budget)
        XCTAssertTrue(e?.message.contains("time limit exceeded") ?? false, e?.message ?? "")
        XCTAssertEqual(e?.file, "hostile.lua")
        XCTAssertEqual(e?.line, 2)
        assertUsable(lua)
    }

    func testWorkInsideCFunctionsIsBounded() throws {
        // Each call is short and uses few VM instructions, but does a lot of work in C: the
        // window still ends in bounded time.
        for code in [
            "local s = string.rep('a', 1 << 22) while true do local _ = s:find('b', 1, true) end",
            "local s = string.rep('a', 1 << 22) while true do local _ = utf8.len(s) end",
            "local s = string.rep('a', 100000) while true do pcall(string.find, s, '.-b') end",
            "while true do local _ = string.rep('x', 4 << 20) end",
            "local s = '' while true do s = s .. 'x' end",
        ] {
            let (e, lua) = try hostile(code)
            XCTAssertNotNil(e, code)
            XCTAssertNotEqual(e?.kind, .runtime, "\(code): \(e?.description ?? "")")
            assertUsable(lua)
        }
    }

    // MARK: memory

    func testStringRepBomb() throws {
        let (e, lua) = try hostile("return string.rep('x', 1e12)")
        XCTAssertEqual(e?.kind, .runtime)
        XCTAssertTrue(e?.message.contains("resulting string too large") ?? false, e?.message ?? "")
        let (e2, _) = try hostile("return ('abc'):rep(1e9, ',')")
        XCTAssertTrue(e2?.message.contains("resulting string too large") ?? false, e2?.message ?? "")
        // Many allowed reps, kept alive: the memory cap.
        let (e3, lua3) = try hostile(
            "local t = {} for i = 1, 1000 do t[i] = string.rep('x', 1 << 20) .. i end", limits: Self.memoryBound)
        XCTAssertEqual(e3?.kind, .memory)
        assertUsable(lua)
        assertUsable(lua3)
    }

    func testEmptyRepIsFast() throws {
        let lua = try LuaState(limits: Self.tight)
        var value = LuaValue.nil
        let elapsed = seconds {
            value = (try? evaluate(lua, "return string.rep('', 1e15) .. string.rep('', 1e15, '')")) ?? .nil
        }
        XCTAssertEqual(value, .string(""))
        XCTAssertLessThan(elapsed, bound)
        XCTAssertEqual(try evaluate(lua, "return string.rep('ab', 0) .. string.rep('ab', -5)"), .string(""))
    }

    func testTableGrowthBomb() throws {
        let (e, lua) = try hostile("local t = {} for i = 1, 1e9 do t[i] = i end", limits: Self.memoryBound)
        XCTAssertEqual(e?.kind, .memory)
        XCTAssertEqual(e?.message, "not enough memory")
        assertUsable(lua)
    }

    func testStringConcatenationBomb() throws {
        let (e, lua) = try hostile("local s = 'x' while true do s = s .. s end", limits: Self.memoryBound)
        XCTAssertEqual(e?.kind, .memory)
        assertUsable(lua)
        let (e2, _) = try hostile(
            "local t = {} for i = 1, 1e9 do t[#t + 1] = tostring(i) .. 'padding padding padding' end return table.concat(t)",
            limits: Self.memoryBound)
        XCTAssertEqual(e2?.kind, .memory)
    }

    func testMemoryBombInsidePcallIsNotSwallowed() throws {
        let (e, lua) = try hostile(
            """
            while true do
              pcall(function() local s = 'x' while true do s = s .. s end end)
            end
            """, limits: Self.memoryBound)
        XCTAssertEqual(e?.kind, .memory)
        assertUsable(lua)
    }

    func testMemoryComesBackAfterAnOverrun() throws {
        let lua = try LuaState(limits: Self.memoryBound)
        let baseline = lua.memoryInUse
        let script = "keep = {} for i = 1, 1e9 do keep[i] = i end"
        let e = expectLuaError({ () throws(LuaError) in try evaluate(lua, script) })
        XCTAssertEqual(e?.kind, .memory)
        // The global keeps what the script built up to the cap; dropping it gives the memory back.
        try evaluate(lua, "keep = nil")
        for _ in 0..<3 { try evaluate(lua, "local t = {} for i = 1, 100 do t[i] = { i } end") }
        let e2 = expectLuaError({ () throws(LuaError) in
            try evaluate(lua, "local t = {} for i = 1, 1e9 do t[i] = i end")
        })
        XCTAssertEqual(e2?.kind, .memory)
        try evaluate(lua, "return 1")
        XCTAssertLessThan(
            lua.memoryInUse, baseline + (1 << 20), "memory in use: \(lua.memoryInUse), at start: \(baseline)")
        // And a script needing most of the cap runs again.
        XCTAssertEqual(try evaluate(lua, "local t = {} for i = 1, 100000 do t[i] = i end return #t"), .integer(100_000))
    }

    func testGarbageNearTheCapIsNotAnOverrun() throws {
        // Lua collects garbage and retries when an allocation fails; a script whose live data fits
        // must not be treated as over the cap just because garbage was waiting to be collected.
        let lua = try LuaState(limits: Self.memoryBound)
        let churn = """
            local live = string.rep('l', 3 << 20)
            for i = 1, 200 do local garbage = string.rep('g', 1 << 20) .. i end
            return #live
            """
        lua.beginBudget()
        defer { lua.endBudget() }
        for _ in 0..<3 {
            try lua.load(churn, chunkName: "churn.lua")
            try lua.call(arguments: 0, results: 1)
            XCTAssertEqual(lua.value(at: -1), .integer(3 << 20))
            lua.pop()
        }
        XCTAssertFalse(lua.budgetExhausted)
        // pcall still catches ordinary errors after such churn.
        try lua.load(churn + " + (select(2, pcall(error, 'e')) == 'e' and 1 or 0)", chunkName: "churn.lua")
        try lua.call(arguments: 0, results: 1)
        XCTAssertEqual(lua.value(at: -1), .integer((3 << 20) + 1))
        lua.pop()
    }

    // MARK: patterns

    func testBacktrackingPatternBomb() throws {
        let (e, lua) = try hostile(#"return string.find(string.rep("a", 1e5), "a*a*a*a*a*a*b")"#)
        XCTAssertEqual(e?.kind, .runtime)
        XCTAssertTrue(e?.message.contains("pattern too complex") ?? false, e?.message ?? "")
        assertUsable(lua)
        for code in [
            #"return string.match(string.rep("a", 1e5), ".-.-.-.-b")"#,
            #"return string.gsub(string.rep("a", 1e5), "a*a*a*a*b", "")"#,
            #"for m in string.gmatch(string.rep("a", 1e5), "a*a*a*a*b") do end"#,
            #"return (string.rep("a", 1e5)):find("(a*)*b")"#,
        ] {
            let (e, _) = try hostile(code)
            XCTAssertEqual(e?.kind, .runtime, code)
            XCTAssertTrue(e?.message.contains("pattern too complex") ?? false, "\(code): \(e?.message ?? "")")
        }
    }

    // MARK: escapes

    func testBytecodeIsRefused() throws {
        let (e, _) = try hostile("local f = assert(load(\(SandboxTests.bytecode))) return f()")
        XCTAssertEqual(e?.kind, .runtime)
        XCTAssertTrue(e?.message.contains("binary chunk") ?? false, e?.message ?? "")
    }

    func testForbiddenLibrariesAreRuntimeErrors() throws {
        for (code, name) in [
            ("return io.open('/etc/passwd'):read('a')", "io"), ("return os.getenv('HOME')", "os"),
            ("return require('io')", "require"), ("return debug.sethook()", "debug"),
            ("return package.loaded.io", "package"), ("return coroutine.create(print)", "coroutine"),
        ] {
            let (e, _) = try hostile(code)
            XCTAssertEqual(e?.kind, .runtime, code)
            XCTAssertTrue(e?.message.contains("global '\(name)'") ?? false, "\(code): \(e?.message ?? "")")
        }
    }

    func testNoWayBackToTheRealStringTableOrLoadedModules() throws {
        let lua = try LuaState()
        // Every function reachable from _G, one level down, is one of the allowed ones: no io or os
        // function hides in a library table.
        let value = try evaluate(
            lua,
            """
            local found = {}
            for k, v in pairs(_G) do
              if type(v) == 'table' and v ~= _G then
                for k2, v2 in pairs(v) do
                  if k2 == 'open' or k2 == 'execute' or k2 == 'loaded' or k2 == 'dump' or k2 == 'getinfo' then
                    found[#found + 1] = k .. '.' .. k2
                  end
                end
              end
            end
            return table.concat(found, ',')
            """)
        XCTAssertEqual(value, .string(""))
    }

    // MARK: recovery

    func testEveryKindOfOverrunLeavesTheInterpreterUsable() throws {
        let lua = try LuaState(limits: Self.memoryBound)
        let scripts: [(String, LuaError.Kind)] = [
            ("local s = 'x' while true do s = s .. s end", .memory),
            ("local t = {} for i = 1, 1e9 do t[i] = i end", .memory),
            ("error('plain')", .runtime),
            (#"return string.find(string.rep("a", 1e5), "a*a*a*a*a*a*b")"#, .runtime),
            ("local function f() return 1 + f() end return f()", .memory),  // the stack meets the 8 MB cap first
            // C stack overflow:
            ("local t = setmetatable({}, { __index = function(t, k) return t[k .. 'x'] end }) return t.a", .runtime),
        ]
        for (code, kind) in scripts {
            let e = expectLuaError({ () throws(LuaError) in try evaluate(lua, code) })
            XCTAssertEqual(e?.kind, kind, code)
            XCTAssertFalse(lua.budgetExhausted && kind == .runtime, code)
            assertUsable(lua)
        }
        lua.setLimits(Self.tight)
        let e = expectLuaError({ () throws(LuaError) in try evaluate(lua, "while true do end") })
        XCTAssertEqual(e?.kind, .budget)
        assertUsable(lua)
    }

    func testLaterCallsInAnExhaustedWindowFailAtOnce() throws {
        let lua = try LuaState(limits: Self.tight)
        lua.beginBudget()
        try lua.load("while true do end", chunkName: "a.lua")
        let first = expectLuaError({ () throws(LuaError) in try lua.call(arguments: 0, results: 0) })
        XCTAssertEqual(first?.kind, .budget)
        XCTAssertTrue(lua.budgetExhausted)
        try lua.load("ran = true", chunkName: "b.lua")
        let second = expectLuaError({ () throws(LuaError) in try lua.call(arguments: 0, results: 0) })
        XCTAssertEqual(second?.kind, .budget)
        XCTAssertTrue(second?.message.contains("earlier") ?? false, second?.message ?? "")
        XCTAssertEqual(lua.top, 0)
        lua.endBudget()
        XCTAssertEqual(try evaluate(lua, "return ran"), .nil, "the refused call did not run")
        XCTAssertFalse(lua.budgetExhausted)
        assertUsable(lua)
    }

    func testOneWindowSharesOneBudget() throws {
        // Each call alone fits the budget; together they do not.
        let lua = try LuaState(limits: LuaLimits(graceMilliseconds: 0, instructionLimit: 400_000))
        try evaluate(lua, "function work() local n = 0 for i = 1, 40000 do n = n + i end return n end")
        lua.beginBudget()
        defer { lua.endBudget() }
        var failedAt: Int?
        for i in 0..<50 {
            lua.getGlobal("work")
            do {
                try lua.call(arguments: 0, results: 1)
                lua.pop()
            } catch {
                XCTAssertEqual(error.kind, .budget)
                failedAt = i
                break
            }
        }
        XCTAssertNotNil(failedAt, "the shared budget ran out")
        XCTAssertGreaterThan(failedAt ?? 0, 0, "the first call fits")
    }
}
