import HushJSON

/// Why an input line (a notification, a context, an interaction) was refused: the field and what
/// is wrong with it, in words a person can act on.
package struct InputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Dotted path of the offending field (`payload.aps.interruption-level`), or nil for the line.
    package var field: String?
    package var message: String

    package init(field: String?, _ message: String) {
        self.field = field
        self.message = message
    }

    package var description: String {
        if let field { return "\(field): \(message)" }
        return message
    }
}

extension JSONValue {
    /// A short rendering of a value for error messages.
    var quotedForError: String {
        switch self {
        case .string(let s): "\"" + (s.count > 40 ? String(s.prefix(40)) + "…" : s) + "\""
        case .number(let d): d.rounded() == d && abs(d) < 1e15 ? String(Int(d)) : String(d)
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
