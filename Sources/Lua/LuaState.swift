import CLua54
import LuaSandbox

/// One sandboxed Lua 5.4 interpreter. Confined to one thread at a time (not `Sendable`); make one
/// per thread. Closing happens in `deinit`, so no `lua_State` outlives its owner.
package final class LuaState {
    /// What a host function does when Lua calls it: push results on `L` and return their count, or
    /// throw `HostError` to raise a Lua error in the caller. Never call a raising Lua API here.
    package typealias HostFunction = (_ L: OpaquePointer) throws(HostError) -> Int32

    package struct HostError: Error, Sendable {
        package var message: String
        package init(_ message: String) { self.message = message }
    }

    let sandbox: OpaquePointer
    package let L: OpaquePointer
    package private(set) var limits: LuaLimits
    @exclusivity(unchecked) private var hostFunctions: [HostFunction?] = []
    /// Receives print() output.
    package var printHandler: ((String) -> Void)?

    package init(limits: LuaLimits = LuaLimits()) throws(LuaError) {
        self.limits = limits
        let box = Unmanaged<LuaStateBox>.passRetained(LuaStateBox())
        guard let sandbox = hush_sandbox_new(limits.cValue, luaStateCallback, box.toOpaque()) else {
            box.release()
            throw LuaError(kind: .memory, message: "could not create a Lua interpreter")
        }
        self.sandbox = sandbox
        self.L = hush_sandbox_state(sandbox)
        self.box = box
        box.takeUnretainedValue().state = self
        hostFunctions.append(nil)  // id 0 is print
    }

    private let box: Unmanaged<LuaStateBox>

    deinit {
        hush_sandbox_free(sandbox)
        box.release()
    }

    package func setLimits(_ limits: LuaLimits) {
        self.limits = limits
        hush_sandbox_set_limits(sandbox, limits.cValue)
    }

    package var memoryInUse: Int { Int(hush_sandbox_memory_in_use(sandbox)) }

    // MARK: host functions

    /// Registers a host function and returns its id, for `pushHostFunction`.
    package func register(_ function: @escaping HostFunction) -> Int32 {
        hostFunctions.append(function)
        return Int32(hostFunctions.count - 1)
    }

    /// Replaces a registered host function (views register ranges of ids).
    package func reserveHostFunctions(_ count: Int, _ function: @escaping (Int32) -> HostFunction) -> Int32 {
        let base = Int32(hostFunctions.count)
        for i in 0..<count { hostFunctions.append(function(base + Int32(i))) }
        return base
    }

    package func pushHostFunction(_ id: Int32) { hush_push_host_function(L, id) }

    /// Reserves `count` ids that are served by `source.pushField` (views' fields read on every
    /// notification: a direct call, not a closure per id). Returns the first id.
    package func reserveFields(_ count: Int, source: any LuaFieldSource) -> Int32 {
        let base = Int32(hostFunctions.count)
        for _ in 0..<count { hostFunctions.append(nil) }
        fieldSource = source
        fieldRanges.append(base..<base + Int32(count))
        return base
    }

    /// Serves views' fields directly: `(context, L, id)` with the ids `reserveFields` gave, pushing
    /// one value (returning 1) or returning 0 for nil, as `LuaFieldSource.pushField`. `context` is
    /// not retained: it must outlive this interpreter's use of it.
    package typealias FieldCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, Int32) -> Int32

    package func setFieldCallback(_ callback: FieldCallback, context: UnsafeMutableRawPointer) {
        hush_sandbox_set_field_callback(sandbox, callback, context)
    }

    @exclusivity(unchecked) private unowned(unsafe) var fieldSource: (any LuaFieldSource)?
    @exclusivity(unchecked) private var fieldRanges: [Range<Int32>] = []

    fileprivate func dispatch(_ L: OpaquePointer, _ id: Int32) -> Int32 {
        if let fieldSource {
            for range in fieldRanges where range.contains(id) { return fieldSource.pushField(L, id: id) }
        }
        if id == 0 {
            // At most `maxPrintBytes`: a loop printing a 16 MiB string costs few instructions per
            // call, so the budget would let it copy gigabytes into Swift between two checks.
            let text = string(at: -1, maxBytes: Self.maxPrintBytes) ?? ""
            printHandler?(text)
            return 0
        }
        guard Int(id) < hostFunctions.count, let function = hostFunctions[Int(id)] else {
            lua_pushstring(L, "unknown host function \(id)")
            return -1
        }
        do {
            return try function(L)
        } catch {
            lua_pushstring(L, error.message)
            return -1
        }
    }

    // MARK: running code

    /// Compiles a text chunk (bytecode is refused) and leaves the function on the stack. The chunk
    /// name is a file name; one starting with "=" or "@" is passed to Lua as it is.
    package func load(_ text: String, chunkName: String) throws(LuaError) {
        var text = text
        let name = chunkName.hasPrefix("=") || chunkName.hasPrefix("@") ? chunkName : "@" + chunkName
        if name.utf8.count >= Self.chunkIDSize, !longChunkNames.contains(chunkName) { longChunkNames.append(chunkName) }
        let status = text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                hush_load_text(sandbox, chars.baseAddress, chars.count, name)
            }
        }
        if Int(status) != HUSH_OK {
            let message = popString()
            throw restoringFile(LuaError(kind: Int(status) == HUSH_MEMORY ? .memory : .syntax, raw: message))
        }
    }

    /// Opens a budget window: every `call` until `endBudget` shares one instruction budget.
    package func beginBudget() { hush_budget_begin(sandbox) }
    package func endBudget() { hush_budget_end(sandbox) }
    package var budgetExhausted: Bool { hush_budget_exhausted(sandbox) != 0 }

    /// Calls the function under `nargs` arguments in protected mode. On error the stack is back
    /// where it was without the function and its arguments.
    package func call(arguments nargs: Int32, results nresults: Int32) throws(LuaError) {
        let code = hush_pcall(sandbox, nargs, nresults)
        if Int(code) != HUSH_OK {
            let message = popString()
            let kind: LuaError.Kind =
                switch Int(code) {
                case HUSH_BUDGET: .budget
                case HUSH_MEMORY: .memory
                default: .runtime
                }
            throw restoringFile(LuaError(kind: kind, raw: message))
        }
    }

    /// Calls the functions at `references[first...]` one after another, each with the values at
    /// stack indices `a` and `b`, until one returns something other than nil, fails, or a host
    /// function it called asked to stop (`requestStop`). They run inside one protected call (as
    /// `call` makes), which an error ends: the error is the failing function's own. Returns that
    /// one's index (its result on the stack, or its error, the stack then as it was) and whether
    /// the budget was already exhausted before it ran (then it failed at once, as `call` does);
    /// returns `references.count` when every one returned nil.
    package func callUntilResult(_ references: [Int32], from first: Int, arguments a: Int32, _ b: Int32)
        -> (index: Int, error: LuaError?, exhaustedBefore: Bool)
    {
        var exhausted: Int32 = 0
        var status: Int32 = 0
        let index = references.withUnsafeBufferPointer { refs in
            Int(hush_run_rules(sandbox, refs.baseAddress, Int32(refs.count), Int32(first), a, b, &exhausted, &status))
        }
        guard Int(status) != HUSH_OK else { return (index, nil, exhausted != 0) }
        let message = popString()
        let kind: LuaError.Kind =
            switch Int(status) {
            case HUSH_BUDGET: .budget
            case HUSH_MEMORY: .memory
            default: .runtime
            }
        return (index, restoringFile(LuaError(kind: kind, raw: message)), exhausted != 0)
    }

    /// Makes `callUntilResult` return after the function running now (from a host function).
    package func requestStop() { hush_request_stop(sandbox) }

    // MARK: lazy tables

    /// What serves lazy tables (see `hush_push_lazy` in LuaSandbox.h): `(node, L, op, depth, a, b)`.
    package typealias LazyTableCallback =
        @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, Int32, Int32, Int32, Int32) -> Int32

    package func setLazyTableCallback(_ callback: LazyTableCallback) {
        hush_sandbox_set_lazy_callback(sandbox, callback)
    }

    /// Pushes a lazy table standing for `node` (retained by the caller for the table: the callback
    /// gets `HUSH_LAZY_RELEASE` once the table no longer needs it). From a host function only.
    package static func pushLazyTable(_ L: OpaquePointer, node: UnsafeMutableRawPointer, isArray: Bool, count: Int) {
        hush_push_lazy(L, node, isArray ? 1 : 0, Int32(clamping: count))
    }

    /// What `account` counts memory against: this interpreter's cap.
    package var memoryAccount: OpaquePointer { sandbox }

    /// Counts host memory that Lua values keep alive (a lazy table's node) against the memory cap of
    /// `account` as if Lua held it, or gives it back (negative `bytes`).
    package static func account(_ account: OpaquePointer, bytes: Int) { hush_sandbox_account(account, bytes) }

    /// Of `memoryInUse`, what `account` counts now.
    package var accountedMemory: Int { Int(hush_sandbox_external_bytes(sandbox)) }

    /// How many garbage collections have finished.
    package var collections: Int { Int(hush_sandbox_gc_cycles(sandbox)) }

    package static let lazyGet: Int32 = Int32(HUSH_LAZY_GET)
    package static let lazyFill: Int32 = Int32(HUSH_LAZY_FILL)
    package static let lazyRelease: Int32 = Int32(HUSH_LAZY_RELEASE)

    /// Makes the value at `index`, if it is a lazy table, the plain table it stands for.
    package func settleLazyTable(at index: Int32) { hush_lazy_settle(L, index) }

    /// Forgets the cached fields of the view at `index` (see `pushView`).
    package func resetView(at index: Int32) { hush_view_reset(L, index) }

    /// For a new notification: forgets the cached fields of the view at `index` and reads ahead
    /// the fields its rules read nearly every time (see `pushView`).
    package func prepareView(at index: Int32) { hush_view_prepare(L, index) }

    /// Forgets one cached field of the view at `index`.
    package func forgetViewField(at index: Int32, field: Int32) { hush_view_forget(L, index, field) }

    /// Lua shortens chunk names in messages to LUA_IDSIZE bytes ("...end/of/the/path.lua"); the
    /// long names loaded so far let an error name its file in full again.
    private static let chunkIDSize = 60
    private var longChunkNames: [String] = []

    private func restoringFile(_ error: LuaError) -> LuaError {
        guard let file = error.file, file.hasPrefix("...") else { return error }
        let tail = file.dropFirst(3)
        let matches = longChunkNames.filter { $0.hasSuffix(tail) }
        guard matches.count == 1 else { return error }
        var error = error
        error.file = matches[0].hasPrefix("@") ? String(matches[0].dropFirst()) : matches[0]
        return error
    }

    /// Loads and runs a chunk inside its own budget window (using `limits.forLoading`), with the
    /// environment at registry reference `environment` as its globals (nil: the global table).
    package func run(_ text: String, chunkName: String, environment: Int32? = nil) throws(LuaError) {
        try load(text, chunkName: chunkName)
        if let environment {
            lua_rawgeti(L, clua_registryindex(), lua_Integer(environment))
            if lua_setupvalue(L, -2, 1) == nil { pop() }
        }
        try callLoading(arguments: 0, results: 0)
    }

    /// Calls the function under `nargs` arguments as loading code runs: inside its own budget
    /// window, with `limits.forLoading`.
    package func callLoading(arguments nargs: Int32, results nresults: Int32) throws(LuaError) {
        let saved = limits
        hush_sandbox_set_limits(sandbox, saved.forLoading.cValue)
        beginBudget()
        defer {
            endBudget()
            hush_sandbox_set_limits(sandbox, saved.cValue)
        }
        try call(arguments: nargs, results: nresults)
    }

    /// Pushes a copy of the globals for one user's copy of a policy (see
    /// `hush_push_environment_copy`): all of them, or with `copying` (a registry reference to a
    /// table), those it has as keys. False when the stack cannot grow (nothing pushed).
    package func pushEnvironmentCopy(copying: Int32 = LUA_NOREF) -> Bool {
        hush_push_environment_copy(sandbox, copying) != 0
    }

    /// Whether no function defined inside the Lua function at `index` can keep anything between
    /// calls (see `hush_functions_within_keep_nothing`).
    package func functionsWithinKeepNothing(at index: Int32) -> Bool {
        hush_functions_within_keep_nothing(L, index) != 0
    }

    /// Whether nothing reachable from the `count` values on the top of the stack holds state a call
    /// changes without a Lua write (see `hush_values_hold_no_state`).
    package func valuesHoldNoState(count: Int32) -> Bool {
        hush_values_hold_no_state(L, -count, count) != 0
    }

    /// The state of `math.random`'s generator, as bytes (it changes with every number drawn).
    package func randomState() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { hush_random_state(L, $0.baseAddress, $0.count) }
        return Array(bytes.prefix(count))
    }

    /// The globals `load` gives a chunk when none is passed: those of the code about to run
    /// (a registry reference; nil: the global table).
    package func setEnvironment(_ reference: Int32?) {
        hush_sandbox_set_environment(sandbox, reference ?? LUA_NOREF)
    }

    /// A full garbage collection, outside any budget window.
    package func collectGarbage() { _ = clua_gc(L, LUA_GCCOLLECT, 0) }

    // MARK: stack helpers (none of these raise)

    package var top: Int32 {
        get { lua_gettop(L) }
        set { lua_settop(L, newValue) }
    }

    package func pop(_ n: Int32 = 1) { lua_settop(L, -n - 1) }

    package func string(at index: Int32) -> String? {
        guard lua_type(L, index) == LUA_TSTRING else { return nil }
        var length = 0
        guard let chars = lua_tolstring(L, index, &length) else { return nil }
        return chars.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// The longest print() line passed to `printHandler`, in bytes; the rest is cut.
    package static let maxPrintBytes = 4096

    /// Like `string(at:)`, copying at most `maxBytes` bytes of a longer string (a sequence cut in
    /// the middle reads as U+FFFD).
    package func string(at index: Int32, maxBytes: Int) -> String? {
        guard lua_type(L, index) == LUA_TSTRING else { return nil }
        var length = 0
        guard let chars = lua_tolstring(L, index, &length) else { return nil }
        let count = min(length, max(maxBytes, 0))
        return chars.withMemoryRebound(to: UInt8.self, capacity: count) {
            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
        }
    }

    func popString() -> String {
        let text = string(at: -1) ?? "(error object is not a string)"
        pop()
        return text
    }

    package func push(_ string: String) { Self.push(L, string) }

    /// Pushes `string` onto `L`'s stack.
    @inline(__always)
    package static func push(_ L: OpaquePointer, _ string: String) {
        // Read in place (a short text from a copy on the stack): `withUTF8` on a copy of the
        // text cost more than Lua's own work.
        let pushed: Void? = string.utf8.withContiguousStorageIfAvailable { buffer in
            buffer.withMemoryRebound(to: CChar.self) { _ = lua_pushlstring(L, $0.baseAddress, $0.count) }
        }
        guard pushed == nil else { return }
        var string = string
        string.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { _ = lua_pushlstring(L, $0.baseAddress, $0.count) }
        }
    }

    package func push(_ value: Int) { lua_pushinteger(L, lua_Integer(value)) }
    package func push(_ value: Double) { lua_pushnumber(L, value) }
    package func push(_ value: Bool) { lua_pushboolean(L, value ? 1 : 0) }
    package func pushNil() { lua_pushnil(L) }

    /// Pushes a value copied from Swift (tables become fresh tables). Entries whose key Lua
    /// cannot hold (nil, NaN, `.other`) are left out.
    package func push(_ value: LuaValue) {
        if case .table = value, lua_checkstack(L, 3) == 0 {
            lua_pushnil(L)  // the parent made room for this value, not for a table's key and value
            return
        }
        switch value {
        case .nil, .other: lua_pushnil(L)
        case .boolean(let b): push(b)
        case .integer(let i): lua_pushinteger(L, i)
        case .number(let d): lua_pushnumber(L, d)
        case .string(let s): push(s)
        case .function(let ref): _ = lua_rawgeti(L, clua_registryindex(), lua_Integer(ref.reference))
        case .table(let table):
            lua_createtable(L, Int32(table.array.count), Int32(table.entries.count))
            for (i, element) in table.array.enumerated() {
                push(element)
                lua_rawseti(L, -2, lua_Integer(i + 1))
            }
            for entry in table.entries {
                switch entry.key {
                case .nil, .other: continue
                case .number(let d) where d.isNaN: continue
                default: break
                }
                push(entry.key)
                push(entry.value)
                lua_rawset(L, -3)
            }
        }
    }

    package func getGlobal(_ name: String) { _ = lua_getglobal(L, name) }
    package func setGlobal(_ name: String) { lua_setglobal(L, name) }

    /// Keeps the value on top in the registry (popping it) and returns its reference.
    package func reference() -> Int32 { luaL_ref(L, clua_registryindex()) }
    package func pushReference(_ reference: Int32) { _ = lua_rawgeti(L, clua_registryindex(), lua_Integer(reference)) }
    package func release(_ reference: Int32) { luaL_unref(L, clua_registryindex(), reference) }

    /// Pushes a C function returning the `source, line` of the Lua code `level` calls up (see
    /// `hush_callsite`); a prelude keeps it as an upvalue, so policies never see the debug library.
    package func pushCallsiteFunction() { lua_pushcclosure(L, hush_callsite, 0) }

    /// A read-only view whose fields come from the host functions `baseID + field id`; a field
    /// read once is cached (unless nil) until `resetView`, `prepareView` or `forgetViewField`.
    /// `readableAhead`: the field ids (bits) `prepareView` may read before a rule asks for them.
    package func pushView(fieldMap index: Int32, baseID: Int32, name: String, readableAhead: UInt64 = 0) {
        hush_push_view(L, index, baseID, name, readableAhead)
    }

    /// The `.other` a table too large to copy becomes (see `value(at:depth:budget:)`).
    package static let tooLarge = LuaValue.other("table (too large)")

    /// Copies the value at `index` into Swift with raw reads. Tables deeper than `depth` or seen
    /// twice (cycles) become `.other("table")`; functions are kept as registry references. At most
    /// `maxValues` values are copied: past that the whole value is `LuaState.tooLarge`.
    package func value(at index: Int32, depth: Int = 16, maxValues: Int = 100_000) -> LuaValue {
        var budget = maxValues
        return value(at: index, depth: depth, budget: &budget)
    }

    /// Like `value(at:depth:)`, counting the values copied against `budget`, which several reads
    /// can share. When it runs out the table being read, and every table holding it, is
    /// `LuaState.tooLarge`: a small table can reach exponentially many values through shared
    /// subtables, and copying a table is never partial.
    package func value(at index: Int32, depth: Int = 16, budget: inout Int) -> LuaValue {
        var seen: Set<UnsafeRawPointer> = []
        return value(at: lua_absindex(L, index), depth: depth, seen: &seen, budget: &budget)
    }

    private func value(at index: Int32, depth: Int, seen: inout Set<UnsafeRawPointer>, budget: inout Int) -> LuaValue {
        budget -= 1
        switch lua_type(L, index) {
        case LUA_TNIL, LUA_TNONE: return .nil
        case LUA_TBOOLEAN: return .boolean(lua_toboolean(L, index) != 0)
        case LUA_TNUMBER:
            if lua_isinteger(L, index) != 0 { return .integer(lua_tointegerx(L, index, nil)) }
            return .number(lua_tonumberx(L, index, nil))
        case LUA_TSTRING: return .string(string(at: index) ?? "")
        case LUA_TFUNCTION:
            var debug = lua_Debug()
            lua_pushvalue(L, index)
            lua_pushvalue(L, index)
            _ = lua_getinfo(L, ">S", &debug)
            let source = debug.source.map { String(cString: $0) }.map {
                $0.hasPrefix("@") ? String($0.dropFirst()) : $0
            }
            let ref = luaL_ref(L, clua_registryindex())
            return .function(LuaFunctionRef(reference: ref, source: source, line: Int(debug.linedefined)))
        case LUA_TTABLE:
            guard budget >= 0 else { return Self.tooLarge }
            guard depth > 0, let pointer = lua_topointer(L, index), seen.insert(pointer).inserted else {
                return .other("table")
            }
            hush_lazy_settle(L, index)  // a lazy table is read as the table it stands for
            defer { seen.remove(pointer) }
            // Each level holds a key and a value on the stack while reading the next one (a
            // function value takes two more).
            guard lua_checkstack(L, 4) != 0 else { return .other("table") }
            var table = LuaTable()
            let length = lua_rawlen(L, index)
            if length > 0 {
                table.array.reserveCapacity(min(Int(length), max(budget, 0) + 1))
                for i in 1...length {
                    _ = lua_rawgeti(L, index, lua_Integer(i))
                    let element = value(at: lua_gettop(L), depth: depth - 1, seen: &seen, budget: &budget)
                    pop()
                    if budget < 0 { return Self.tooLarge }
                    table.array.append(element)
                }
            }
            lua_pushnil(L)
            while lua_next(L, index) != 0 {
                let valueIndex = lua_gettop(L)
                if lua_isinteger(L, valueIndex - 1) != 0 {
                    let i = lua_tointegerx(L, valueIndex - 1, nil)
                    if i >= 1 && i <= lua_Integer(length) { pop(); continue }
                }
                let key = value(at: valueIndex - 1, depth: 0, seen: &seen, budget: &budget)
                let element = value(at: valueIndex, depth: depth - 1, seen: &seen, budget: &budget)
                if budget < 0 {
                    pop(2)
                    return Self.tooLarge
                }
                table.entries.append(LuaTableEntry(key: key, value: element))
                pop()
            }
            return .table(table)
        case LUA_TUSERDATA, LUA_TLIGHTUSERDATA: return .other("userdata")
        case LUA_TTHREAD: return .other("thread")
        default: return .other("unknown")
        }
    }
}

/// Lets the C callback find the Swift object without retaining it from C.
final class LuaStateBox {
    unowned(unsafe) var state: LuaState?
}

private let luaStateCallback: hush_host_callback = { context, L, functionID in
    guard let context, let L else { return 0 }
    return Unmanaged<LuaStateBox>.fromOpaque(context)._withUnsafeGuaranteedRef { box in
        guard let state = box.state else { return 0 }
        return state.dispatch(L, functionID)
    }
}

/// Serves the fields reserved with `LuaState.reserveFields`: pushes one value (and returns 1) or
/// returns 0 for nil. Runs inside a Lua call: never call a raising Lua API.
package protocol LuaFieldSource: AnyObject {
    func pushField(_ L: OpaquePointer, id: Int32) -> Int32
}

extension LuaLimits {
    var cValue: hush_limits {
        hush_limits(
            memory_bytes: Int(memoryBytes) > 0 ? Int(memoryBytes) : 0,
            grace_nanoseconds: Int64(graceMilliseconds * 1_000_000),
            instruction_limit: Int64(instructionLimit),
            pattern_steps: Int64(patternSteps),
            string_bytes: stringBytes,
            time_nanoseconds: timeLimitMilliseconds > 0 ? Int64(timeLimitMilliseconds * 1_000_000) : 0)
    }
}
