import CLua54
import Lua
import XCTest

/// `LuaState.collections` counts finished collections with a sentinel whose finalizer makes the
/// next one; the interpreter counts kept payload trees against the memory cap only when it moves.
final class CollectionCountTests: XCTestCase {
    /// A collection finishing while memory is at the cap (a rule's allocations fit, the
    /// sentinel's new table would not) must not end the count: the sentinel's table is the
    /// sandbox's, made with the cap off.
    func testCollectionsAreStillCountedAfterOneFinishesAtTheMemoryCap() throws {
        let limits = LuaLimits(
            memoryBytes: 8 << 20, graceMilliseconds: 2, instructionLimit: 2_000_000_000, timeLimitMilliseconds: 0)
        // Memory so tight that only short strings fit, or a table too: some finishing
        // collection's sentinel then finds no room for its next table.
        for headroom in stride(from: 16, through: 72, by: 8) {
            let lua = try LuaState(limits: limits)
            // squeeze(): from now on, only `headroom` more bytes fit; and the collector never
            // pauses, so its ordinary steps (which run finalizers, unlike the emergency
            // collections of refused allocations) finish cycles.
            let squeeze = lua.register { [unowned lua] L throws(LuaState.HostError) in
                _ = clua_gc(L, LUA_GCCOLLECT, 0)  // (memory in use is then what is live)
                _ = clua_gc(L, LUA_GCSETPAUSE, 0)
                _ = clua_gc(L, LUA_GCSETSTEPMUL, 1000)
                var tight = limits
                tight.memoryBytes = lua.memoryInUse + headroom
                lua.setLimits(tight)
                return 0
            }
            lua.pushHostFunction(squeeze)
            lua.setGlobal("squeeze")
            _ = try? evaluate(lua, "squeeze() local s for i = 1, 20000 do s = tostring(i) end return 0")
            lua.setLimits(limits)
            let squeezed = lua.collections
            _ = try evaluate(lua, "local g for i = 1, 100000 do g = { i } end return 0")
            XCTAssertGreaterThan(
                lua.collections, squeezed, "collections are counted again with room (\(headroom) bytes)")
        }
    }
}
