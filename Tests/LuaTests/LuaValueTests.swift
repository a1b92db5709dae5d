import Lua
import XCTest

final class LuaValueTests: XCTestCase {
    private func roundTrip(_ lua: LuaState, _ value: LuaValue) -> LuaValue {
        let top = lua.top
        lua.push(value)
        XCTAssertEqual(lua.top, top + 1, "push must leave exactly one value")
        let copy = lua.value(at: -1)
        lua.top = top
        return copy
    }

    func testScalarsRoundTrip() throws {
        let lua = try LuaState()
        for value: LuaValue in [
            .nil, .boolean(true), .boolean(false), .integer(0), .integer(-7),
            .integer(.max), .integer(.min), .number(2.5), .number(-0.125), .number(1e300),
            .string(""), .string("plain"),
        ] {
            XCTAssertEqual(roundTrip(lua, value), value)
        }
        // A float with an integral value stays a float.
        XCTAssertEqual(roundTrip(lua, .number(3)), .number(3))
        guard case .number(let nan) = roundTrip(lua, .number(.nan)) else { return XCTFail("NaN must stay a number") }
        XCTAssertTrue(nan.isNaN)
        XCTAssertEqual(lua.top, 0)
    }

    func testStringsKeepEmbeddedNULsAndUTF8() throws {
        let lua = try LuaState()
        let tricky = "a\u{0}b\u{0}\u{0}c — héllo ✓ 𝄞 日本"
        XCTAssertEqual(roundTrip(lua, .string(tricky)), .string(tricky))
        lua.push(.string(tricky))
        lua.setGlobal("s")
        // Lua sees the bytes, NULs included.
        XCTAssertEqual(try evaluate(lua, "return #s"), .integer(Int64(tricky.utf8.count)))
        XCTAssertEqual(try evaluate(lua, "return s:byte(2)"), .integer(0))
        XCTAssertEqual(try evaluate(lua, "return utf8.len(s)"), .integer(Int64(tricky.unicodeScalars.count)))
        // And strings made in Lua come back with their NULs.
        XCTAssertEqual(try evaluate(lua, #"return "x\0y\0""#), .string("x\u{0}y\u{0}"))
        XCTAssertEqual(try evaluate(lua, #"return "\u{1D11E}""#), .string("𝄞"))
    }

    func testValuesMadeInLua() throws {
        let lua = try LuaState()
        XCTAssertEqual(try evaluate(lua, "return nil"), .nil)
        XCTAssertEqual(try evaluate(lua, "return 3"), .integer(3))
        XCTAssertEqual(try evaluate(lua, "return 3.0"), .number(3))
        XCTAssertEqual(try evaluate(lua, "return 7 // 2"), .integer(3))
        XCTAssertEqual(try evaluate(lua, "return 7 / 2"), .number(3.5))
        XCTAssertEqual(try evaluate(lua, "return math.maxinteger"), .integer(.max))
        XCTAssertEqual(try evaluate(lua, "return 1 < 2"), .boolean(true))
        XCTAssertEqual(try evaluate(lua, "return '10'"), .string("10"), "a numeric string stays a string")
    }

    func testAccessors() {
        XCTAssertEqual(LuaValue.number(3).intValue, 3)
        XCTAssertNil(LuaValue.number(2.5).intValue)
        XCTAssertNil(LuaValue.number(.infinity).intValue)
        XCTAssertEqual(LuaValue.integer(4).doubleValue, 4)
        XCTAssertNil(LuaValue.string("4").intValue)
        XCTAssertEqual(LuaValue.integer(1).typeName, "number")
        XCTAssertEqual(LuaValue.other("userdata").typeName, "userdata")
        XCTAssertTrue(LuaValue.nil.isNil)
        XCTAssertFalse(LuaValue.boolean(false).isNil)
    }

    func testNestedTablesFromLua() throws {
        let lua = try LuaState()
        let value = try evaluate(
            lua, #"return { 10, "two", { 3, x = "y" }, k = { a = true, [5] = 1.5 }, [100] = "far" }"#)
        guard let t = value.tableValue else { return XCTFail("expected a table, got \(value)") }
        XCTAssertEqual(t.array.count, 3)
        XCTAssertEqual(t.array[0], .integer(10))
        XCTAssertEqual(t.array[1], .string("two"))
        XCTAssertEqual(t.array[2].tableValue?.array, [.integer(3)])
        XCTAssertEqual(t.array[2].tableValue?["x"], .string("y"))
        XCTAssertEqual(t["k"]?.tableValue?["a"], .boolean(true))
        XCTAssertEqual(t["k"]?.tableValue?.entries.first { $0.key == .integer(5) }?.value, .number(1.5))
        XCTAssertEqual(t.entries.first { $0.key == .integer(100) }?.value, .string("far"))
        XCTAssertEqual(Set(t.stringKeys), ["k"])
        XCTAssertEqual(lua.top, 0)
    }

    func testTablesRoundTripThroughPush() throws {
        let lua = try LuaState()
        let inner = LuaTable(
            array: [.integer(1), .number(2.5)], entries: [LuaTableEntry(key: .string("deep"), value: .string("é\u{0}"))]
        )
        let table = LuaTable(
            array: [.string("a"), .table(inner), .boolean(false)],
            entries: [
                LuaTableEntry(key: .string("name"), value: .string("x")),
                LuaTableEntry(key: .integer(10), value: .integer(-1)),
                LuaTableEntry(key: .boolean(true), value: .table(LuaTable())),
            ])
        let copy = roundTrip(lua, .table(table))
        guard let t = copy.tableValue else { return XCTFail("expected a table") }
        XCTAssertEqual(t.array, table.array)
        XCTAssertEqual(Set(t.entries.map { $0.key }), Set(table.entries.map { $0.key }))
        for entry in table.entries {
            XCTAssertEqual(t.entries.first { $0.key == entry.key }?.value, entry.value)
        }
        // Lua sees the same thing.
        lua.push(.table(table))
        lua.setGlobal("t")
        XCTAssertEqual(
            try evaluate(
                lua,
                "return #t .. '|' .. t[2][2] .. '|' .. #t[2].deep .. '|' .. t.name .. '|' .. t[10] .. '|' .. type(t[true])"
            ),
            .string("3|2.5|3|x|-1|table"))
    }

    func testPushingTableWithInvalidKeysDoesNotRaise() throws {
        // nil and NaN cannot be table keys in Lua; a raw set with one would raise outside any
        // protected call and abort the process. They are skipped instead.
        let lua = try LuaState()
        let table = LuaTable(
            array: [],
            entries: [
                LuaTableEntry(key: .nil, value: .integer(1)),
                LuaTableEntry(key: .number(.nan), value: .integer(2)),
                LuaTableEntry(key: .other("userdata"), value: .integer(3)),
                LuaTableEntry(key: .string("ok"), value: .integer(4)),
            ])
        let copy = roundTrip(lua, .table(table))
        XCTAssertEqual(copy.tableValue?.entries, [LuaTableEntry(key: .string("ok"), value: .integer(4))])
    }

    func testOtherValuesPushAsNil() throws {
        let lua = try LuaState()
        XCTAssertEqual(roundTrip(lua, .other("userdata")), .nil)
    }

    func testCyclesDoNotHang() throws {
        let lua = try LuaState()
        let value = try evaluate(lua, "local t = { 1 } t.self = t t[2] = t t.inner = { back = t } return t")
        guard let t = value.tableValue else { return XCTFail("expected a table") }
        XCTAssertEqual(t.array.first, .integer(1))
        XCTAssertEqual(t.array.count, 2)
        XCTAssertEqual(t.array[1], .other("table"))
        XCTAssertEqual(t["self"], .other("table"))
        XCTAssertEqual(t["inner"]?.tableValue?["back"], .other("table"))
        // Mutual cycle.
        let mutual = try evaluate(lua, "local a, b = {}, {} a.b = b b.a = a return a")
        XCTAssertEqual(mutual.tableValue?["b"]?.tableValue?["a"], .other("table"))
    }

    func testSharedTablesThatAreNotCyclesAreCopiedTwice() throws {
        let lua = try LuaState()
        let value = try evaluate(lua, "local s = { 1, 2 } return { a = s, b = s }")
        XCTAssertEqual(value.tableValue?["a"]?.tableValue?.array, [.integer(1), .integer(2)])
        XCTAssertEqual(value.tableValue?["b"]?.tableValue?.array, [.integer(1), .integer(2)])
    }

    func testDepthLimit() throws {
        let lua = try LuaState()
        let code = "return { a = { b = { c = { d = 1 } } } }"
        let shallow = try evaluate(lua, code, depth: 2)
        XCTAssertEqual(shallow.tableValue?["a"]?.tableValue?["b"], .other("table"))
        let deep = try evaluate(lua, code, depth: 4)
        XCTAssertEqual(deep.tableValue?["a"]?.tableValue?["b"]?.tableValue?["c"]?.tableValue?["d"], .integer(1))
        XCTAssertEqual(try evaluate(lua, code, depth: 0), .other("table"))
    }

    func testVeryDeepTablesDoNotOverflowTheLuaStack() throws {
        // Reading a deep table recurses, pushing values on the Lua stack at every level; the stack
        // must be grown as it goes rather than written past its end.
        let lua = try LuaState()
        try evaluate(lua, "t = { v = 0 } for i = 1, 3000 do t = { next = t, v = i } end return nil")
        lua.getGlobal("t")
        var value = lua.value(at: -1, depth: 5000)
        lua.pop()
        var levels = 0
        while let t = value.tableValue, let next = t["next"] {
            levels += 1
            value = next
        }
        XCTAssertEqual(levels, 3000)
        XCTAssertEqual(value.tableValue?["v"], .integer(0))

        // And pushing one back.
        var nested = LuaValue.integer(42)
        for _ in 0..<3000 { nested = .table(LuaTable(array: [nested])) }
        lua.push(nested)
        lua.setGlobal("n")
        XCTAssertEqual(
            try evaluate(
                lua, "local d, x = 0, n while type(x) == 'table' do d = d + 1 x = x[1] end return d * 1000 + x"),
            .integer(3_000_042))
    }

    func testExponentialSharingIsReadInBoundedTime() throws {
        // A table referring 8 times to a table referring 8 times to ... is small in Lua, but
        // copying it naively would make 8^16 Swift values.
        let lua = try LuaState()
        try evaluate(lua, "t = {} for i = 1, 20 do t = { t, t, t, t, t, t, t, t } end return nil")
        lua.getGlobal("t")
        var value = LuaValue.nil
        let elapsed = seconds { value = lua.value(at: -1) }
        lua.pop()
        XCTAssertLessThan(elapsed, 10)
        XCTAssertEqual(value, LuaState.tooLarge, "never a partial copy")
        XCTAssertEqual(lua.top, 0)
        // The same shape, small enough, is copied whole.
        try evaluate(lua, "s = {} for i = 1, 4 do s = { s, s, s, s, s, s, s, s } end return nil")
        lua.getGlobal("s")
        let small = lua.value(at: -1)
        lua.pop()
        XCTAssertEqual(small.tableValue?.array.count, 8)
        XCTAssertEqual(
            small.tableValue?.array.last?.tableValue?.array.last?.tableValue?.array.last?.tableValue?.array.count, 8)
    }

    func testValueCountLimit() throws {
        let lua = try LuaState()
        try evaluate(lua, "flat = {} for i = 1, 200 do flat[i] = i end nested = { a = flat, b = 1 } return nil")
        lua.getGlobal("flat")
        XCTAssertEqual(lua.value(at: -1, maxValues: 1000).tableValue?.array.count, 200)
        XCTAssertEqual(lua.value(at: -1, maxValues: 201).tableValue?.array.count, 200, "the table and its 200 values")
        XCTAssertEqual(lua.value(at: -1, maxValues: 200), LuaState.tooLarge)
        lua.pop()
        lua.getGlobal("nested")
        XCTAssertEqual(
            lua.value(at: -1, maxValues: 100), LuaState.tooLarge, "a table holding one too large is too large")
        // A shared budget runs out across reads.
        var budget = 300
        XCTAssertNotNil(lua.value(at: -1, budget: &budget).tableValue)
        XCTAssertLessThan(budget, 300 - 200)
        XCTAssertEqual(lua.value(at: -1, budget: &budget), LuaState.tooLarge)
        lua.pop()
        XCTAssertEqual(lua.top, 0)
    }

    func testFunctionsAreRegistryReferences() throws {
        let lua = try LuaState()
        let value = try evaluate(lua, "local k = 40\nreturn function(a) return a + k + 2 end", chunkName: "fn.lua")
        guard case .function(let ref) = value else { return XCTFail("expected a function, got \(value)") }
        XCTAssertEqual(ref.source, "fn.lua")
        XCTAssertEqual(ref.line, 2)
        // The reference keeps it alive across a collection and can be called later.
        try evaluate(lua, "local t = {} for i = 1, 1000 do t[i] = {} end return nil")
        lua.push(.function(ref))
        lua.push(.integer(0))
        lua.beginBudget()
        try lua.call(arguments: 1, results: 1)
        lua.endBudget()
        XCTAssertEqual(lua.value(at: -1), .integer(42))
        lua.pop()
        lua.pushReference(ref.reference)
        XCTAssertEqual(lua.value(at: -1).typeName, "function")
        lua.pop()
        lua.release(ref.reference)
        XCTAssertEqual(lua.top, 0)
    }

    func testFunctionsInsideTables() throws {
        let lua = try LuaState()
        let value = try evaluate(lua, "return { f = print, g = function() end }")
        guard case .function(let f)? = value.tableValue?["f"], case .function(let g)? = value.tableValue?["g"] else {
            return XCTFail("expected functions, got \(value)")
        }
        XCTAssertEqual(f.source, "=[C]")
        XCTAssertEqual(g.source, "test.lua")
        XCTAssertNotEqual(f.reference, g.reference)
    }

    func testStackHelpers() throws {
        let lua = try LuaState()
        lua.push("s")
        lua.push(1)
        lua.push(2.5)
        lua.push(true)
        lua.pushNil()
        XCTAssertEqual(lua.top, 5)
        XCTAssertEqual(lua.string(at: 1), "s")
        XCTAssertNil(lua.string(at: 2), "string(at:) does not convert numbers")
        XCTAssertEqual(lua.value(at: 2), .integer(1))
        XCTAssertEqual(lua.value(at: -3), .number(2.5))
        XCTAssertEqual(lua.value(at: -2), .boolean(true))
        XCTAssertEqual(lua.value(at: -1), .nil)
        XCTAssertEqual(lua.value(at: 99), .nil)
        lua.pop(2)
        XCTAssertEqual(lua.top, 3)
        lua.top = 0
        lua.push(.integer(5))
        let ref = lua.reference()
        XCTAssertEqual(lua.top, 0)
        lua.pushReference(ref)
        XCTAssertEqual(lua.value(at: -1), .integer(5))
        lua.release(ref)
        lua.pop()
    }
}
