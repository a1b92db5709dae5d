import Lua
import XCTest

/// Loads `code` as a chunk and calls it inside its own budget window with the state's current
/// limits; returns the first result copied into Swift.
@discardableResult
func evaluate(_ lua: LuaState, _ code: String, chunkName: String = "test.lua", depth: Int = 16) throws(LuaError)
    -> LuaValue
{
    let top = lua.top
    try lua.load(code, chunkName: chunkName)
    lua.beginBudget()
    defer { lua.endBudget() }
    try lua.call(arguments: 0, results: 1)
    let value = lua.value(at: -1, depth: depth)
    lua.top = top
    return value
}

/// Runs `body` and returns the LuaError it throws, failing the test when it throws nothing.
func expectLuaError(_ body: () throws(LuaError) -> Void, file: StaticString = #filePath, line: UInt = #line)
    -> LuaError?
{
    do {
        try body()
        XCTFail("expected a LuaError, got success", file: file, line: line)
        return nil
    } catch {
        return error
    }
}

/// Wall-clock seconds `body` took.
func seconds(_ body: () -> Void) -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

extension LuaValue {
    static func str(_ s: String) -> LuaValue { .string(s) }
}
