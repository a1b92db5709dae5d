/// A Lua error, copied out of the interpreter as plain strings: it never holds a `lua_State`.
package struct LuaError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Kind: String, Sendable, Hashable {
        case syntax, runtime, budget, memory
    }

    package var kind: Kind
    /// The message without its `file:line:` prefix.
    package var message: String
    /// The chunk the error points at (`policies/work.lua`), when Lua said.
    package var file: String?
    package var line: Int?
    package var traceback: String?

    package init(kind: Kind, message: String, file: String? = nil, line: Int? = nil, traceback: String? = nil) {
        self.kind = kind
        self.message = message
        self.file = file
        self.line = line
        self.traceback = traceback
    }

    /// `file:line: message`, or the bare message when the place is unknown.
    package var description: String {
        if let file, let line { return "\(file):\(line): \(message)" }
        return message
    }

    /// Splits Lua's `chunk:line: message` form; a traceback after the first line is kept apart.
    package init(kind: Kind, raw: String) {
        var text = Substring(raw)
        var traceback: String?
        if let range = raw.firstRange(of: "\nstack traceback:") {
            text = raw[raw.startIndex..<range.lowerBound]
            traceback = String(raw[range.lowerBound...].dropFirst())
        }
        let (file, line, message) = LuaError.splitLocation(text)
        self.init(kind: kind, message: message, file: file, line: line, traceback: traceback)
    }

    static func splitLocation(_ text: Substring) -> (String?, Int?, String) {
        // "[string \"...\"]:3: msg" or "policies/a.lua:12: msg": the place is everything before
        // the first ":<digits>:" on the first line (a file name may hold colons itself).
        var searchStart = text.startIndex
        if text.hasPrefix("[string \""), let close = text.firstRange(of: "\"]:") {
            searchStart = text.index(before: close.upperBound)
        }
        let firstLine = text[searchStart...].prefix { $0 != "\n" }
        var rest = firstLine[...]
        while let colon = rest.firstIndex(of: ":") {
            let afterColon = text.index(after: colon)
            guard let secondColon = firstLine[afterColon...].firstIndex(of: ":") else { break }
            let digits = text[afterColon..<secondColon]
            if colon > text.startIndex, !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                let line = Int(digits)
            {
                let file = String(text[text.startIndex..<colon])
                var message = text[text.index(after: secondColon)...]
                if message.first == " " { message = message.dropFirst() }
                return (file, line, String(message))
            }
            rest = firstLine[afterColon...]
        }
        return (nil, nil, String(text))
    }
}
