import Foundation
import Lua
import XCTest

/// The sandbox's bounded string.find/match/gmatch/gsub/rep against Lua's own.
final class BoundedStringTests: XCTestCase {
    private func fixture() throws -> String {
        let url = try XCTUnwrap(
            Bundle.module.url(forResource: "strlib_compare", withExtension: "lua", subdirectory: "Fixtures"))
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// An interpreter with the original string functions in `orig`; the comparison does a lot of
    /// work, so the instruction budget is out of reach.
    private func comparisonState() throws -> LuaState {
        let lua = try LuaState(
            limits: LuaLimits(
                memoryBytes: 256 << 20, graceMilliseconds: 1000, instructionLimit: 1 << 40,
                timeLimitMilliseconds: 0))
        XCTAssertTrue(lua.openOriginalStringLibraryForTesting())
        return lua
    }

    func testOriginalsAreSeparateFromTheSandboxedFunctions() throws {
        let lua = try comparisonState()
        XCTAssertEqual(
            try evaluate(
                lua, "return orig.find ~= string.find and orig.rep ~= string.rep and orig.gsub ~= string.gsub"),
            .boolean(true))
        // Opening the originals did not give the script the real string metatable.
        XCTAssertEqual(try evaluate(lua, "return getmetatable('')"), .string("string"))
        XCTAssertEqual(try evaluate(lua, "return ('x').rep == string.rep"), .boolean(true))
        // The originals really are unbounded; the sandbox's are not.
        let bomb = #"local s = string.rep("a", 300) return select(2, pcall(%@, s, "a*a*b"))"#
        XCTAssertEqual(try evaluate(lua, bomb.replacingOccurrences(of: "%@", with: "orig.find")), .nil)
        let bounded = try evaluate(lua, bomb.replacingOccurrences(of: "%@", with: "string.find"))
        XCTAssertTrue(bounded.stringValue?.contains("pattern too complex") ?? false, "\(bounded)")
    }

    func testFixtureAgreesWithLua() throws {
        let lua = try comparisonState()
        var output: [String] = []
        lua.printHandler = { output.append($0) }
        lua.push(.integer(1500))
        lua.setGlobal("STRLIB_FUZZ_N")
        let result = try evaluate(lua, try fixture(), chunkName: "strlib_compare.lua")
        let stats = try XCTUnwrap(result.tableValue, "the fixture returns its counters")
        XCTAssertGreaterThan(stats["cases"]?.intValue ?? 0, 100)
        XCTAssertGreaterThan(stats["generated"]?.intValue ?? 0, 1000)
        XCTAssertGreaterThan(stats["fuzz"]?.intValue ?? 0, 1000)
        XCTAssertTrue(output.last?.hasSuffix(": OK") ?? false, output.joined(separator: "\n"))
    }

    func testFixtureFailsWithoutOriginals() throws {
        // The fixture is able to fail: in a plain sandbox it has nothing to compare against.
        let lua = try LuaState()
        let e = expectLuaError({ () throws(LuaError) in
            try evaluate(lua, try! fixture(), chunkName: "strlib_compare.lua")
        })
        XCTAssertTrue(e?.message.contains("orig") ?? false, e?.message ?? "")
    }

    func testFixtureDetectsADifference() throws {
        // Replace one bounded function with a subtly wrong one: the comparison must notice.
        let lua = try comparisonState()
        try evaluate(
            lua,
            """
            local find = string.find
            string.find = function(s, p, init, plain)
              local a, b = find(s, p, init, plain)
              if a == 3 then return a + 1, b end
              return a, b
            end
            """)
        let e = expectLuaError({ () throws(LuaError) in
            try evaluate(lua, try! fixture(), chunkName: "strlib_compare.lua")
        })
        XCTAssertEqual(e?.kind, .runtime)
    }

    func testLimitsComeFromLuaLimits() throws {
        let lua = try LuaState(limits: LuaLimits(patternSteps: 100, stringBytes: 10))
        XCTAssertEqual(try evaluate(lua, "return string.rep('ab', 5)"), .string("ababababab"))
        let big = expectLuaError({ () throws(LuaError) in try evaluate(lua, "return string.rep('ab', 6)") })
        XCTAssertTrue(big?.message.contains("resulting string too large") ?? false, big?.message ?? "")
        let subject = String(repeating: "a", count: 500)
        let script = "return string.find('\(subject)', '.-b')"
        let steps = expectLuaError({ () throws(LuaError) in try evaluate(lua, script) })
        XCTAssertTrue(steps?.message.contains("pattern too complex") ?? false, steps?.message ?? "")
        XCTAssertEqual(try evaluate(lua, "return string.find('hello', 'l+')"), .integer(3))
    }
}
