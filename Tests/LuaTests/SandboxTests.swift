import Lua
import XCTest

final class SandboxTests: XCTestCase {
    func testForbiddenGlobalsAreAbsent() throws {
        let lua = try LuaState()
        for name in [
            "io", "os", "require", "package", "debug", "dofile", "loadfile", "collectgarbage", "coroutine",
            "warn", "loadstring", "module", "setfenv", "getfenv", "newproxy",
        ] {
            XCTAssertEqual(try evaluate(lua, "return type(\(name))"), .string("nil"), name)
            XCTAssertEqual(try evaluate(lua, "return rawget(_G, '\(name)') == nil"), .boolean(true), name)
        }
        // Nothing in _G is a way to them either.
        let names = try evaluate(
            lua, "local n = {} for k in pairs(_G) do n[#n + 1] = k end table.sort(n) return table.concat(n, ' ')")
        let allowed: Set<String> = [
            "_G", "_VERSION", "assert", "error", "getmetatable", "ipairs", "load", "math", "next",
            "pairs", "pcall", "print", "rawequal", "rawget", "rawlen", "rawset", "select",
            "setmetatable", "string", "table", "tonumber", "tostring", "type", "utf8", "xpcall",
        ]
        XCTAssertEqual(Set((names.stringValue ?? "").split(separator: " ").map(String.init)), allowed)
    }

    func testAllowedLibrariesWork() throws {
        let lua = try LuaState()
        XCTAssertEqual(
            try evaluate(lua, "return string.upper('abc') .. ('x'):rep(2) .. table.concat({ 1, 2 }, ',')"),
            .string("ABCxx1,2"))
        XCTAssertEqual(try evaluate(lua, "return math.max(1, 5) + math.floor(2.5)"), .integer(7))
        XCTAssertEqual(try evaluate(lua, "return utf8.char(233, 10003)"), .string("é✓"))
        XCTAssertEqual(try evaluate(lua, "return _G._G == _G and _VERSION"), .string("Lua 5.4"))
        XCTAssertEqual(try evaluate(lua, "return select('#', pcall(error))"), .integer(2))
    }

    func testStringDumpIsAbsent() throws {
        let lua = try LuaState()
        XCTAssertEqual(try evaluate(lua, "return string.dump"), .nil)
        XCTAssertEqual(try evaluate(lua, "return ('').dump"), .nil)
        let e = expectLuaError({ () throws(LuaError) in try evaluate(lua, "return string.dump(print)") })
        XCTAssertEqual(e?.kind, .runtime)
        XCTAssertTrue(e?.message.contains("field 'dump'") ?? false, e?.message ?? "")
    }

    func testAccessingAbsentLibrariesNamesTheGlobal() throws {
        let lua = try LuaState()
        for (code, global) in [
            ("io.open('/etc/passwd')", "io"), ("os.execute('true')", "os"), ("require('x')", "require"),
            ("debug.getinfo(1)", "debug"), ("package.loadlib('x', 'y')", "package"),
            ("dofile('/etc/passwd')", "dofile"), ("loadfile('/etc/passwd')", "loadfile"),
            ("collectgarbage()", "collectgarbage"), ("coroutine.wrap(print)", "coroutine"),
        ] {
            guard let e = expectLuaError({ () throws(LuaError) in try evaluate(lua, code) }) else { continue }
            XCTAssertEqual(e.kind, .runtime, code)
            XCTAssertEqual(e.line, 1, code)
            XCTAssertTrue(e.message.contains("global '\(global)'"), "\(code): \(e.message)")
        }
    }

    // MARK: load

    /// The header of a Lua 5.4 binary chunk followed by junk: it must be refused before anything runs.
    static let bytecode =
        #""\27Lua\x54\x00\x19\x93\r\n\x1a\n\x04\x08\x08\x78\x56\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x28\x77\x40\x01""#

    func testLoadRefusesBytecode() throws {
        let lua = try LuaState()
        let value = try evaluate(lua, "local f, err = load(\(Self.bytecode)) return { f == nil, err }")
        XCTAssertEqual(value.tableValue?.array.first, .boolean(true))
        let message = value.tableValue?.array.last?.stringValue ?? ""
        XCTAssertTrue(message.contains("binary chunk"), message)
        // Even when asked for binary mode explicitly.
        let binary = try evaluate(lua, "local f, err = load(\(Self.bytecode), 'x', 'b') return { f == nil, err }")
        XCTAssertEqual(binary.tableValue?.array.first, .boolean(true))
        XCTAssertTrue(binary.tableValue?.array.last?.stringValue?.contains("binary chunk") ?? false)
        // Calling the result is an error, never a run.
        let script = "return load(\(Self.bytecode), 'b', 'bt')()"
        let e = expectLuaError({ () throws(LuaError) in try evaluate(lua, script) })
        XCTAssertEqual(e?.kind, .runtime)
        XCTAssertTrue(e?.message.contains("attempt to call a nil value") ?? false, e?.message ?? "")
    }

    func testLoadRefusesReaderFunctions() throws {
        let lua = try LuaState()
        let e = expectLuaError({ () throws(LuaError) in
            try evaluate(
                lua,
                "local parts = { 'return ', '1' } local i = 0 return load(function() i = i + 1 return parts[i] end)")
        })
        XCTAssertEqual(e?.kind, .runtime)
        XCTAssertTrue(e?.message.contains("only text chunks") ?? false, e?.message ?? "")
    }

    func testHostLoadRefusesBytecode() throws {
        let lua = try LuaState()
        let chunk = "\u{1B}Lua\u{54}\u{0}\u{19}\u{93}\r\n\u{1A}\nreturn 1"
        let e = expectLuaError({ () throws(LuaError) in try lua.load(chunk, chunkName: "evil.luac") })
        XCTAssertEqual(e?.kind, .syntax)
        XCTAssertTrue(e?.message.contains("binary chunk") ?? false, e?.message ?? "")
        XCTAssertEqual(lua.top, 0)
    }

    func testLoadOfTextUsesTheSandboxGlobals() throws {
        let lua = try LuaState()
        XCTAssertEqual(try evaluate(lua, "return load('return 1 + 1')()"), .integer(2))
        XCTAssertEqual(try evaluate(lua, "shared = 5 return load('return shared')()"), .integer(5))
        XCTAssertEqual(try evaluate(lua, "load('made_inside = 9')() return made_inside"), .integer(9))
        XCTAssertEqual(try evaluate(lua, "return load('return io, os, debug, require')()"), .nil)
        XCTAssertEqual(try evaluate(lua, "return load('return string.dump')()"), .nil)
        XCTAssertEqual(try evaluate(lua, "return load('return ...')(7)"), .integer(7))
    }

    func testLoadWithAnEnvironment() throws {
        let lua = try LuaState()
        XCTAssertEqual(try evaluate(lua, "return load('return y', 'c', 't', { y = 7 })()"), .integer(7))
        XCTAssertEqual(try evaluate(lua, "return load('return print', 'c', 't', {})()"), .nil)
        XCTAssertEqual(
            try evaluate(lua, "local env = {} load('z = 3', 'c', 't', env)() return env.z + (rawget(_G, 'z') or 0)"),
            .integer(3))
        // An explicit nil environment: globals are unreachable.
        let e = expectLuaError({ () throws(LuaError) in
            try evaluate(lua, "return load('return print', 'c', 't', nil)()")
        })
        XCTAssertEqual(e?.kind, .runtime)
    }

    // MARK: metatables

    func testStringMetatableIsProtected() throws {
        let lua = try LuaState()
        XCTAssertEqual(try evaluate(lua, "return getmetatable('')"), .string("string"))
        XCTAssertEqual(try evaluate(lua, "return getmetatable('abc')"), .string("string"))
        XCTAssertEqual(try evaluate(lua, "return getmetatable('').__index"), .nil)
        let e = expectLuaError({ () throws(LuaError) in
            try evaluate(lua, "getmetatable('').__index = { upper = print }")
        })
        XCTAssertEqual(e?.kind, .runtime)
        let s = expectLuaError({ () throws(LuaError) in try evaluate(lua, "setmetatable('', {})") })
        XCTAssertEqual(s?.kind, .runtime)
        // Methods still work, and are the sandbox's bounded ones.
        XCTAssertEqual(try evaluate(lua, "return ('abc'):upper()"), .string("ABC"))
        XCTAssertEqual(
            try evaluate(lua, "return ('x').rep == string.rep and ('x').find == string.find"), .boolean(true))
    }

    func testFinalizersAreRefused() throws {
        // A __gc would run script code during a collection, with the count hook off.
        let lua = try LuaState()
        for code in [
            "setmetatable({}, { __gc = function() while true do end end })",
            "setmetatable({}, { __gc = false })",
            "local mt = { __gc = print } setmetatable({}, mt)",
        ] {
            let e = expectLuaError({ () throws(LuaError) in try evaluate(lua, code) })
            XCTAssertEqual(e?.kind, .runtime, code)
            XCTAssertEqual(e?.message, "__gc metamethods are not allowed in a policy", code)
            XCTAssertEqual(e?.line, 1, code)
        }
        // Adding __gc after the fact does not make a finalizer (Lua checks when the metatable is set).
        var ran = false
        lua.printHandler = { _ in ran = true }
        try evaluate(lua, "local mt = {} local t = setmetatable({}, mt) mt.__gc = function() print('gc') end t = nil")
        try evaluate(lua, "local junk = {} for i = 1, 100000 do junk[i] = {} end junk = nil")
        try evaluate(lua, "local junk = {} for i = 1, 100000 do junk[i] = {} end junk = nil")
        XCTAssertFalse(ran)
    }

    func testSetmetatableStillBehavesLikeLua() throws {
        let lua = try LuaState()
        XCTAssertEqual(
            try evaluate(lua, "local t = {} return setmetatable(t, nil) == t and getmetatable(t) == nil"),
            .boolean(true))
        let p = expectLuaError({ () throws(LuaError) in
            try evaluate(lua, "local t = setmetatable({}, { __metatable = 'no' }) setmetatable(t, {})")
        })
        XCTAssertEqual(p?.message, "cannot change a protected metatable")
        let a = expectLuaError({ () throws(LuaError) in try evaluate(lua, "setmetatable({}, 5)") })
        XCTAssertTrue(a?.message.contains("bad argument #2 to 'setmetatable'") ?? false, a?.message ?? "")
    }

    func testOrdinaryMetatablesWork() throws {
        let lua = try LuaState()
        XCTAssertEqual(
            try evaluate(
                lua, "local t = setmetatable({}, { __index = function(_, k) return k .. '!' end }) return t.hey"),
            .string("hey!"))
        XCTAssertEqual(
            try evaluate(lua, "local t = setmetatable({}, { __metatable = 'locked' }) return getmetatable(t)"),
            .string("locked"))
    }

    // MARK: print

    func testPrintGoesToThePrintHandler() throws {
        let lua = try LuaState()
        var lines: [String] = []
        lua.printHandler = { lines.append($0) }
        try evaluate(lua, "print('a', 1, 2.5, nil, true, false) print() print({}, print) print('x\\0y')")
        XCTAssertEqual(lines, ["a\t1\t2.5\tnil\ttrue\tfalse", "", "table\tfunction", "x\u{0}y"])
        XCTAssertEqual(lua.top, 0)
    }

    func testPrintNeverRunsTostringMetamethods() throws {
        let lua = try LuaState()
        var lines: [String] = []
        lua.printHandler = { lines.append($0) }
        try evaluate(lua, "print(setmetatable({}, { __tostring = function() while true do end end, __name = 'x' }))")
        XCTAssertEqual(lines, ["table"])
    }

    func testPrintWithoutHandlerIsSilent() throws {
        let lua = try LuaState()
        XCTAssertEqual(try evaluate(lua, "print('nobody listens') return 1"), .integer(1))
    }

    // MARK: limits are per interpreter

    func testInterpretersAreIndependent() throws {
        let a = try LuaState()
        let b = try LuaState()
        try evaluate(a, "x = 1 string.custom = 'a'")
        XCTAssertEqual(try evaluate(b, "return x"), .nil)
        XCTAssertEqual(try evaluate(b, "return string.custom"), .nil)
        XCTAssertEqual(try evaluate(a, "return x"), .integer(1))
    }

    func testMemoryInUseIsReported() throws {
        let lua = try LuaState()
        let before = lua.memoryInUse
        XCTAssertGreaterThan(before, 0)
        try evaluate(lua, "big = string.rep('x', 1 << 20)")
        XCTAssertGreaterThan(lua.memoryInUse, before + (1 << 20) - 1)
        try evaluate(lua, "big = nil")
    }
}
