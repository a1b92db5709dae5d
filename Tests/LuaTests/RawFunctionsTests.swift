import Lua
import XCTest

/// next, pairs, rawget, rawset, rawlen and getmetatable are the sandbox's own (they settle lazy
/// tables first); for everything else they must behave as Lua's.
final class RawFunctionsTests: XCTestCase {
    func testTheyBehaveAsLuasOwn() throws {
        let lua = try LuaState()
        let checks: [(String, LuaValue)] = [
            ("return pairs({}) == next", .boolean(true)),
            ("local f, t, k = pairs({ 1 }) return f == next and k == nil and #t == 1", .boolean(true)),
            ("local t = { a = 1, 2, 3 } local n = 0 for k, v in pairs(t) do n = n + 1 end return n", .integer(3)),
            (
                "local t = setmetatable({}, { __pairs = function(t) return function(_, k) if not k then return 1, 'x' end end, t, nil end })"
                    + " local s = '' for k, v in pairs(t) do s = s .. k .. v end return s", .string("1x")
            ),
            ("return next({}) == nil and select('#', next({})) == 1", .boolean(true)),
            ("return next({ 7 })", .integer(1)),
            ("return select(2, next({ 7 }))", .integer(7)),
            ("return next({ 7 }, 1) == nil", .boolean(true)),
            ("return rawlen({ 1, 2, 3 }) + rawlen('abcd')", .integer(7)),
            (
                "local t = setmetatable({}, { __index = function() return 5 end }) return rawget(t, 'x') == nil and t.x == 5",
                .boolean(true)
            ),
            (
                "local t = setmetatable({}, { __newindex = function() error('no') end }) return rawset(t, 'x', 1) == t and t.x == 1",
                .boolean(true)
            ),
            ("return getmetatable({}) == nil", .boolean(true)),
            ("local mt = {} return getmetatable(setmetatable({}, mt)) == mt", .boolean(true)),
            ("return getmetatable(setmetatable({}, { __metatable = 'locked' }))", .string("locked")),
            ("return getmetatable('x')", .string("string")),
            ("return getmetatable(1) == nil", .boolean(true)),
        ]
        for (code, expected) in checks {
            XCTAssertEqual(try evaluate(lua, code), expected, code)
        }
        let errors: [(String, String)] = [
            ("next(nil)", "bad argument #1 to 'next' (table expected, got nil)"),
            ("pairs()", "bad argument #1 to 'pairs' (value expected)"),
            ("rawlen(1)", "bad argument #1 to 'rawlen' (table or string expected, got number)"),
            ("rawget('x', 1)", "bad argument #1 to 'rawget' (table expected, got string)"),
            ("rawget({})", "bad argument #2 to 'rawget' (value expected)"),
            ("rawset({}, 1)", "bad argument #3 to 'rawset' (value expected)"),
            ("rawset({}, nil, 1)", "index is nil"),
            ("getmetatable()", "bad argument #1 to 'getmetatable' (value expected)"),
            ("next({}, 'nope')", "invalid key to 'next'"),
        ]
        for (code, message) in errors {
            let error = expectLuaError({ () throws(LuaError) in try evaluate(lua, code) })
            XCTAssertTrue(error?.message.contains(message) == true, "\(code): \(error?.message ?? "no error")")
        }
    }
}
