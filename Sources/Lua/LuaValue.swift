/// A Lua value copied into Swift. Tables are snapshots (raw reads, no metamethods run), so reading
/// one can never call back into policy code.
package enum LuaValue: Sendable, Hashable {
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
    package var typeName: String {
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

    package var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    package var boolValue: Bool? { if case .boolean(let b) = self { b } else { nil } }
    package var tableValue: LuaTable? { if case .table(let t) = self { t } else { nil } }
    package var isNil: Bool { if case .nil = self { true } else { false } }

    package var doubleValue: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .number(let d): d
        default: nil
        }
    }

    /// Integers, and floats with an integral value.
    package var intValue: Int? {
        switch self {
        case .integer(let i): Int(exactly: i)
        case .number(let d): d.rounded() == d && abs(d) < 9e15 ? Int(d) : nil
        default: nil
        }
    }
}

/// A reference to a Lua function held in the registry of the interpreter that made it.
package struct LuaFunctionRef: Sendable, Hashable {
    package let reference: Int32
    package let source: String?
    package let line: Int?
}

package struct LuaTableEntry: Sendable, Hashable {
    package var key: LuaValue
    package var value: LuaValue

    package init(key: LuaValue, value: LuaValue) {
        self.key = key
        self.value = value
    }
}

/// A table snapshot: `array` holds keys 1...n, `entries` every other key in traversal order.
package struct LuaTable: Sendable, Hashable {
    package var array: [LuaValue] = []
    package var entries: [LuaTableEntry] = []

    package init(array: [LuaValue] = [], entries: [LuaTableEntry] = []) {
        self.array = array
        self.entries = entries
    }

    package subscript(key: String) -> LuaValue? {
        for entry in entries where entry.key == .string(key) { return entry.value }
        return nil
    }

    /// String keys in the order met.
    package var stringKeys: [String] { entries.compactMap { $0.key.stringValue } }

    package var isEmpty: Bool { array.isEmpty && entries.isEmpty }
}
