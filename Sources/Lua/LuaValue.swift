/// A Lua value copied into Swift. Tables are snapshots (raw reads, no metamethods run), so reading
/// one can never call back into policy code.
public enum LuaValue: Sendable, Hashable {
    case `nil`
    case boolean(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case table(LuaTable)
    /// A function kept alive in the interpreter's registry.
    case function(LuaFunctionRef)
    /// userdata, threads: only their type name crosses over.
    case other(String)

    /// The name Lua's `type()` gives.
    public var typeName: String {
        switch self {
        case .nil: "nil"
        case .boolean: "boolean"
        case .integer, .number: "number"
        case .string: "string"
        case .table: "table"
        case .function: "function"
        case .other(let name): name
        }
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var boolValue: Bool? { if case .boolean(let b) = self { b } else { nil } }
    public var tableValue: LuaTable? { if case .table(let t) = self { t } else { nil } }
    public var isNil: Bool { if case .nil = self { true } else { false } }

    public var doubleValue: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .number(let d): d
        default: nil
        }
    }

    /// Integers, and floats with an integral value.
    public var intValue: Int? {
        switch self {
        case .integer(let i): Int(exactly: i)
        case .number(let d): d.rounded() == d && abs(d) < 9e15 ? Int(d) : nil
        default: nil
        }
    }
}

/// A reference to a Lua function held in the registry of the interpreter that made it.
public struct LuaFunctionRef: Sendable, Hashable {
    public let reference: Int32
    public let source: String?
    public let line: Int?
}

public struct LuaTableEntry: Sendable, Hashable {
    public var key: LuaValue
    public var value: LuaValue

    public init(key: LuaValue, value: LuaValue) {
        self.key = key
        self.value = value
    }
}

/// A table snapshot: `array` holds keys 1...n, `entries` every other key in traversal order.
public struct LuaTable: Sendable, Hashable {
    public var array: [LuaValue] = []
    public var entries: [LuaTableEntry] = []

    public init(array: [LuaValue] = [], entries: [LuaTableEntry] = []) {
        self.array = array
        self.entries = entries
    }

    public subscript(key: String) -> LuaValue? {
        for entry in entries where entry.key == .string(key) { return entry.value }
        return nil
    }

    /// String keys in the order met.
    public var stringKeys: [String] { entries.compactMap { $0.key.stringValue } }

    public var isEmpty: Bool { array.isEmpty && entries.isEmpty }
}
