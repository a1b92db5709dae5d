import Lua
import XCTest

final class LuaErrorTests: XCTestCase {
    // MARK: parsing Lua's messages

    func testSplitsFileLineAndMessage() {
        let e = LuaError(kind: .runtime, raw: "policies/work.lua:12: attempt to call a nil value (global 'x')")
        XCTAssertEqual(e.file, "policies/work.lua")
        XCTAssertEqual(e.line, 12)
        XCTAssertEqual(e.message, "attempt to call a nil value (global 'x')")
        XCTAssertNil(e.traceback)
        XCTAssertEqual(e.description, "policies/work.lua:12: attempt to call a nil value (global 'x')")
    }

    func testMessageWithoutPlace() {
        for raw in ["plain message", "not enough memory", "a: b", "x:y:z", "error object is a table value", ""] {
            let e = LuaError(kind: .runtime, raw: raw)
            XCTAssertNil(e.file, raw)
            XCTAssertNil(e.line, raw)
            XCTAssertEqual(e.message, raw)
            XCTAssertEqual(e.description, raw)
        }
    }

    func testMessageKeepsLaterColons() {
        let e = LuaError(kind: .runtime, raw: "a.lua:3: bad thing: x:4: y")
        XCTAssertEqual(e.file, "a.lua")
        XCTAssertEqual(e.line, 3)
        XCTAssertEqual(e.message, "bad thing: x:4: y")
    }

    func testStringChunkNames() {
        let e = LuaError(kind: .runtime, raw: #"[string "local a = 1..."]:2: boom"#)
        XCTAssertEqual(e.file, #"[string "local a = 1..."]"#)
        XCTAssertEqual(e.line, 2)
        XCTAssertEqual(e.message, "boom")
        // A chunk name with a colon inside the quotes.
        let c = LuaError(kind: .runtime, raw: #"[string "x:y"]:7: oops: more"#)
        XCTAssertEqual(c.file, #"[string "x:y"]"#)
        XCTAssertEqual(c.line, 7)
        XCTAssertEqual(c.message, "oops: more")
    }

    func testFileNamesWithColons() {
        let e = LuaError(kind: .runtime, raw: "policies/2024:work.lua:9: boom")
        XCTAssertEqual(e.file, "policies/2024:work.lua")
        XCTAssertEqual(e.line, 9)
        XCTAssertEqual(e.message, "boom")
    }

    func testTracebackIsKeptApart() {
        let raw = "a.lua:1: boom\nstack traceback:\n\t[C]: in function 'error'\n\ta.lua:1: in main chunk"
        let e = LuaError(kind: .runtime, raw: raw)
        XCTAssertEqual(e.message, "boom")
        XCTAssertEqual(e.line, 1)
        XCTAssertEqual(e.traceback, "stack traceback:\n\t[C]: in function 'error'\n\ta.lua:1: in main chunk")
        // A multi-line message keeps its lines.
        let m = LuaError(kind: .runtime, raw: "a.lua:2: first\nsecond\nstack traceback:\n\t...")
        XCTAssertEqual(m.message, "first\nsecond")
    }

    // MARK: errors from the interpreter

    func testSyntaxErrorCarriesFileAndLine() throws {
        let lua = try LuaState()
        guard
            let e = expectLuaError({ () throws(LuaError) in
                try lua.load("local a = 1\nlocal b = 2\nlocal c = = 3\n", chunkName: "policies/bad.lua")
            })
        else { return }
        XCTAssertEqual(e.kind, .syntax)
        XCTAssertEqual(e.file, "policies/bad.lua")
        XCTAssertEqual(e.line, 3)
        XCTAssertTrue(e.message.contains("unexpected symbol"), e.message)
        XCTAssertEqual(lua.top, 0, "a failed load leaves nothing on the stack")
    }

    func testChunkNamesGivenVerbatim() throws {
        // A name starting with "=" is Lua's "as it is"; anything else is a file name.
        let lua = try LuaState()
        let e = expectLuaError({ () throws(LuaError) in try evaluate(lua, "\nerror('x')", chunkName: "=prelude") })
        XCTAssertEqual(e?.file, "prelude")
        XCTAssertEqual(e?.line, 2)
        let f = expectLuaError({ () throws(LuaError) in try evaluate(lua, "error('x')", chunkName: "dir/=odd.lua") })
        XCTAssertEqual(f?.file, "dir/=odd.lua")
    }

    func testLongFileNamesAreNotShortened() throws {
        // Lua shortens chunk names to 60 bytes in its messages; errors give the whole name back.
        let lua = try LuaState()
        let name = "/tmp/" + String(repeating: "long-directory-name/", count: 5) + "policy.lua"
        let syntax = expectLuaError({ () throws(LuaError) in try lua.load("x = = 1", chunkName: name) })
        XCTAssertEqual(syntax?.file, name)
        XCTAssertEqual(syntax?.line, 1)
        let runtime = expectLuaError({ () throws(LuaError) in try evaluate(lua, "\nerror('boom')", chunkName: name) })
        XCTAssertEqual(runtime?.file, name)
        XCTAssertEqual(runtime?.line, 2)
        XCTAssertEqual(runtime?.message, "boom")
        // A function defined there and called later still names it.
        try evaluate(lua, "function later()\n  error('late')\nend", chunkName: name)
        let late = expectLuaError({ () throws(LuaError) in try evaluate(lua, "later()", chunkName: "caller.lua") })
        XCTAssertEqual(late?.file, name)
        XCTAssertEqual(late?.line, 2)
    }

    func testUnfinishedBlockPointsAtEndOfFile() throws {
        let lua = try LuaState()
        guard
            let e = expectLuaError({ () throws(LuaError) in
                try lua.load("if true then\n  x = 1\n\n", chunkName: "p.lua")
            })
        else { return }
        XCTAssertEqual(e.kind, .syntax)
        XCTAssertEqual(e.file, "p.lua")
        XCTAssertEqual(e.line, 4)
        XCTAssertTrue(e.message.contains("'end' expected"), e.message)
    }

    func testRuntimeErrorCarriesFileLineAndTraceback() throws {
        let lua = try LuaState()
        guard
            let e = expectLuaError({ () throws(LuaError) in
                try evaluate(lua, "local x = nil\n\nreturn x.field", chunkName: "policies/rt.lua")
            })
        else { return }
        XCTAssertEqual(e.kind, .runtime)
        XCTAssertEqual(e.file, "policies/rt.lua")
        XCTAssertEqual(e.line, 3)
        XCTAssertEqual(e.message, "attempt to index a nil value (local 'x')")
        XCTAssertTrue(e.traceback?.hasPrefix("stack traceback:") ?? false, e.traceback ?? "no traceback")
        XCTAssertEqual(lua.top, 0)
    }

    func testErrorCallsInsideFunctions() throws {
        let lua = try LuaState()
        let code = """
            local function check(v)
              if not v then
                error("check failed")
              end
            end
            check(true)
            check(false)
            """
        guard let e = expectLuaError({ () throws(LuaError) in try evaluate(lua, code, chunkName: "c.lua") }) else {
            return
        }
        XCTAssertEqual(e.kind, .runtime)
        XCTAssertEqual(e.file, "c.lua")
        XCTAssertEqual(e.line, 3)
        XCTAssertEqual(e.message, "check failed")
        XCTAssertTrue(e.traceback?.contains("c.lua:7") ?? false, "traceback names the caller: \(e.traceback ?? "")")

        // Level 2 blames the caller.
        guard
            let e2 = expectLuaError({ () throws(LuaError) in
                try evaluate(lua, "local function f() error('yours', 2) end\n\nf()", chunkName: "c.lua")
            })
        else { return }
        XCTAssertEqual(e2.line, 3)
        XCTAssertEqual(e2.message, "yours")
    }

    func testErrorWithoutPosition() throws {
        let lua = try LuaState()
        guard let e = expectLuaError({ () throws(LuaError) in try evaluate(lua, "error('bare', 0)") }) else { return }
        XCTAssertEqual(e.kind, .runtime)
        XCTAssertNil(e.file)
        XCTAssertNil(e.line)
        XCTAssertEqual(e.message, "bare")
    }

    func testErrorObjectsThatAreNotStrings() throws {
        let lua = try LuaState()
        let cases: [(String, String)] = [
            ("error({ code = 1 })", "error object is a table value"),
            ("error()", "error with no message (nil)"),
            ("error(nil)", "error with no message (nil)"),
            ("error(true)", "error object is a boolean value"),
            ("error(print)", "error object is a function value"),
        ]
        for (code, message) in cases {
            guard let e = expectLuaError({ () throws(LuaError) in try evaluate(lua, code) }) else { continue }
            XCTAssertEqual(e.kind, .runtime, code)
            XCTAssertEqual(e.message, message, code)
            XCTAssertEqual(lua.top, 0, code)
        }
        // Numbers are converted like Lua does.
        let n = expectLuaError({ () throws(LuaError) in try evaluate(lua, "error(42)") })
        XCTAssertEqual(n?.message, "42")
        // A table with a __tostring is not asked (its __tostring could loop).
        let t = expectLuaError({ () throws(LuaError) in
            try evaluate(lua, "error(setmetatable({}, { __tostring = function() return 'custom' end }))")
        })
        XCTAssertEqual(t?.message, "error object is a table value")
    }

    func testErrorsFromLoadedChunksNameTheString() throws {
        let lua = try LuaState()
        let e = expectLuaError({ () throws(LuaError) in
            try evaluate(lua, "local f = assert(load('local a = 1\\nerror(\"inner\")'))\nf()")
        })
        XCTAssertEqual(e?.kind, .runtime)
        XCTAssertEqual(e?.file, #"[string "local a = 1..."]"#)
        XCTAssertEqual(e?.line, 2)
        XCTAssertEqual(e?.message, "inner")

        let named = expectLuaError({ () throws(LuaError) in
            try evaluate(lua, "assert(load('\\n\\nerror(\"e\")', 'x:y'))()")
        })
        XCTAssertEqual(named?.file, #"[string "x:y"]"#)
        XCTAssertEqual(named?.line, 3)
        XCTAssertEqual(named?.message, "e")

        let custom = expectLuaError({ () throws(LuaError) in
            try evaluate(lua, "assert(load('error(\"e\")', '=custom'))()")
        })
        XCTAssertEqual(custom?.file, "custom")
        XCTAssertEqual(custom?.line, 1)
    }

    func testSyntaxErrorFromLoadInsideLua() throws {
        let lua = try LuaState()
        let value = try evaluate(lua, "local f, err = load('x = = 1', 'chunk') return { f == nil, err }")
        XCTAssertEqual(value.tableValue?.array.first, .boolean(true))
        let message = value.tableValue?.array.last?.stringValue ?? ""
        XCTAssertTrue(message.hasPrefix(#"[string "chunk"]:1:"#), message)
        // Raised as it is, the place is where the chunk says.
        let e = expectLuaError({ () throws(LuaError) in
            try evaluate(lua, "error(select(2, load('\\nx = = 1', 'chunk')), 0)")
        })
        XCTAssertEqual(e?.file, #"[string "chunk"]"#)
        XCTAssertEqual(e?.line, 2)
        // Through assert, Lua 5.4 adds the place of the assert in front (luaL_error).
        let a = expectLuaError({ () throws(LuaError) in try evaluate(lua, "\nassert(load('\\nx = = 1', 'chunk'))") })
        XCTAssertEqual(a?.file, "test.lua")
        XCTAssertEqual(a?.line, 2)
        XCTAssertTrue(a?.message.hasPrefix(#"[string "chunk"]:2:"#) ?? false, a?.message ?? "")
    }

    func testHostFunctionErrorsPointAtTheLuaCaller() throws {
        let lua = try LuaState()
        let id = lua.register { _ throws(LuaState.HostError) in throw LuaState.HostError("host says no") }
        lua.pushHostFunction(id)
        lua.setGlobal("host")
        guard
            let e = expectLuaError({ () throws(LuaError) in
                try evaluate(lua, "local a = 1\n\nhost()", chunkName: "h.lua")
            })
        else { return }
        XCTAssertEqual(e.kind, .runtime)
        XCTAssertEqual(e.message, "host says no")
        XCTAssertEqual(e.file, "h.lua")
        XCTAssertEqual(e.line, 3)
        // And pcall sees the same message.
        XCTAssertEqual(
            try evaluate(lua, "local ok, e = pcall(host) return e", chunkName: "h.lua"), .string("host says no"))
        XCTAssertEqual(
            try evaluate(lua, "local ok, e = pcall(function() host() end) return e", chunkName: "h.lua"),
            .string("h.lua:1: host says no"))
    }

    func testHostFunctionsReturnValues() throws {
        let lua = try LuaState()
        var calls = 0
        let id = lua.register { L throws(LuaState.HostError) in
            calls += 1
            lua.push("from swift")
            lua.push(.integer(7))
            return 2
        }
        lua.pushHostFunction(id)
        lua.setGlobal("host")
        XCTAssertEqual(try evaluate(lua, "local a, b = host() return a .. b"), .string("from swift7"))
        XCTAssertEqual(calls, 1)
    }
}
