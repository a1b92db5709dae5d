import FuzzSupport
import Hush
import HushCore
// libFuzzer target for the Swift ↔ Lua bridge. Input: a Lua chunk, a NUL byte, then a JSON
// payload (no NUL: the whole input is the chunk and there is no payload). The payload is pushed
// into Lua as a table (LuaState.push(LuaValue)), the chunk runs inside a budget window with tight
// limits and gets the payload and two host functions: `echo` copies its arguments into Swift
// (value(at:) with small budgets) and pushes them back; `fail` raises a host error. Whatever the
// chunk returns is copied into Swift (value(at:) with several depths and budgets), pushed back and
// copied again. Invariants: nothing traps; the stack is back where it was; after any error or
// overrun the same interpreter runs a fresh window.
import HushJSON
import HushPolicy
import Lua

let limits = LuaLimits(
    memoryBytes: 16 << 20, graceMilliseconds: 1, instructionLimit: 200_000, patternSteps: 100_000,
    stringBytes: 1 << 20, timeLimitMilliseconds: 200)

func jsonToLua(_ value: JSONValue, depth: Int = 0) -> LuaValue {
    switch value {
    case .null: return .nil
    case .bool(let b): return .boolean(b)
    case .number(let d):
        if let i = value.intValue, abs(d) < 9e15 { return .integer(Int64(i)) }
        return .number(d)
    case .string(let s): return .string(s)
    case .array(let items):
        guard depth < 40 else { return .other("deep") }
        return .table(LuaTable(array: items.map { jsonToLua($0, depth: depth + 1) }))
    case .object(let object):
        guard depth < 40 else { return .other("deep") }
        var entries: [LuaTableEntry] = []
        for (key, item) in object {
            // Keys that look like numbers become numbers, so integer and float keys are exercised.
            let k: LuaValue =
                Double(key).map { d in d.rounded() == d && abs(d) < 9e15 ? .integer(Int64(d)) : .number(d) }
                ?? .string(key)
            entries.append(LuaTableEntry(key: k, value: jsonToLua(item, depth: depth + 1)))
        }
        return .table(LuaTable(entries: entries))
    }
}

final class Bridge {
    let lua: LuaState
    var echoID: Int32 = 0
    var failID: Int32 = 0

    init() {
        lua = try! LuaState(limits: limits)
        echoID = lua.register { [unowned self] L throws(LuaState.HostError) in
            let n = self.lua.top
            var values: [LuaValue] = []
            var budget = 2_000
            if n > 0 {
                for i in 1...n { values.append(self.lua.value(at: i, depth: 8, budget: &budget)) }
            }
            guard budget >= 0 else { throw LuaState.HostError("echo: too large") }
            // A host function may push LUA_MINSTACK (20) values without lua_checkstack: echo 16.
            values = Array(values.prefix(16))
            for v in values { self.lua.push(v) }
            return Int32(values.count)
        }
        failID = lua.register { L throws(LuaState.HostError) in
            throw LuaState.HostError("fail was called")
        }
        lua.printHandler = { _ in }
    }

    func run(chunk: String, payload: LuaValue?) {
        let top = lua.top
        defer {
            lua.top = top
        }
        do {
            try lua.load(chunk, chunkName: "fuzz.lua")
        } catch {
            guard lua.top == top else { fatalError("load left the stack at \(lua.top), expected \(top)") }
            return
        }
        lua.push(payload ?? .nil)
        lua.pushHostFunction(echoID)
        lua.pushHostFunction(failID)
        lua.beginBudget()
        do {
            try lua.call(arguments: 3, results: 2)
            lua.endBudget()
        } catch {
            lua.endBudget()
            guard lua.top == top else { fatalError("a failed call left the stack at \(lua.top), expected \(top)") }
            _ = error.description
            return
        }
        let results = lua.top
        for depth in [0, 1, 16] {
            for maxValues in [1, 100, 100_000] {
                let v = lua.value(at: -1, depth: depth, maxValues: maxValues)
                _ = lua.value(at: -2, depth: depth, maxValues: maxValues)
                guard lua.top == results else { fatalError("value(at:) moved the stack") }
                if depth == 16 && maxValues == 100_000 {
                    lua.push(v)
                    let again = lua.value(at: -1, depth: depth, maxValues: maxValues)
                    lua.pop()
                    release(v)
                    release(again)
                } else {
                    release(v)
                }
            }
        }
    }

    /// value(at:) keeps functions in the registry: give them back, as a long-lived host would.
    func release(_ v: LuaValue) {
        switch v {
        case .function(let ref): lua.release(ref.reference)
        case .table(let t):
            for x in t.array { release(x) }
            for e in t.entries { release(e.key); release(e.value) }
        default: break
        }
    }

    func assertUsable() {
        let top = lua.top
        do {
            try lua.load("local s = 0 for i = 1, 100 do s = s + i end return s", chunkName: "check.lua")
            lua.beginBudget()
            defer { lua.endBudget() }
            try lua.call(arguments: 0, results: 1)
            guard lua.value(at: -1) == .integer(5050) else {
                fatalError("the interpreter computes wrong after a fuzz input")
            }
        } catch {
            fatalError("the interpreter is not usable after a fuzz input: \(error)")
        }
        lua.top = top
    }
}

nonisolated(unsafe) var bridge = Bridge()
nonisolated(unsafe) var runs = 0

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLuaBridge(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { UnsafeBufferPointer(start: $0, count: size) } ?? UnsafeBufferPointer(start: nil, count: 0)
    let split = bytes.firstIndex(of: 0)
    let chunk = String(decoding: bytes[..<(split ?? bytes.count)], as: UTF8.self)
    var payload: LuaValue?
    if let split, let json = try? JSONParser.parse(Array(bytes[(split + 1)...])) {
        payload = jsonToLua(json)
    }
    bridge.run(chunk: chunk, payload: payload)
    bridge.assertUsable()
    // A fresh interpreter now and then, so globals a chunk left behind do not pile up.
    runs += 1
    if runs % 500 == 0 { bridge = Bridge() }
    return 0
}
