import HushCore
import Lua

/// Collects problems while declarations are read, so every one is reported, not only the first.
final class ProblemList {
    private(set) var problems: [PolicyProblem] = []
    let sources: [String: [Substring]]

    init(sources: [PolicySource]) {
        var lines: [String: [Substring]] = [:]
        for source in sources {
            lines[source.name] = source.text.split(separator: "\n", omittingEmptySubsequences: false)
        }
        self.sources = lines
    }

    func add(_ file: String, _ line: Int, _ message: String) {
        problems.append(PolicyProblem(file: file, line: line, message: message))
    }

    /// The line where `key = ` appears in the declaration that starts at `line` (the declaration's
    /// line when it cannot be found): a table's keys carry no line of their own at run time.
    func line(ofKey key: String, in file: String, from line: Int) -> Int {
        guard let lines = sources[file], line >= 1 else { return line }
        var depth = 0
        var index = line - 1
        while index < lines.count && index < line - 1 + 400 {
            let text = lines[index]
            if containsKey(key, in: text) { return index + 1 }
            for c in text {
                if c == "{" { depth += 1 } else if c == "}" { depth -= 1 }
            }
            if depth <= 0 && index > line - 1 { break }
            index += 1
        }
        return line
    }

    private func containsKey(_ key: String, in text: Substring) -> Bool {
        var search = text[...]
        while let range = search.firstRange(of: key) {
            let before = range.lowerBound == text.startIndex ? nil : text[text.index(before: range.lowerBound)]
            var after = text[range.upperBound...].drop { $0 == " " || $0 == "\t" }
            if after.first == "\"" || after.first == "'" { after = after.dropFirst().drop { $0 == "]" || $0 == " " } }
            let boundary = before.map { !($0.isLetter || $0.isNumber || $0 == "_") } ?? true
            if boundary && after.first == "=" && after.dropFirst().first != "=" { return true }
            search = text[range.upperBound...]
        }
        return false
    }
}

/// Reads one declaration's settings table, checking keys and types against the vocabulary.
struct SettingsReader {
    let table: LuaTable
    /// How the declaration is named in messages: `app "com.example.news"`.
    let what: String
    let file: String
    let line: Int
    let problems: ProblemList

    func lineOf(_ key: String) -> Int { problems.line(ofKey: key, in: file, from: line) }

    func fail(_ key: String, _ message: String) {
        problems.add(file, lineOf(key), "\(what): \(message)")
    }

    /// Reports keys outside `known`, with a guess at what was meant, and positional entries.
    func checkKeys(_ known: [String], allowArray: Bool = false) {
        for entry in table.entries {
            guard case .string(let key) = entry.key else {
                problems.add(
                    file, line, "\(what): unexpected key \(describe(entry.key)); settings are written key = value")
                continue
            }
            if !known.contains(key) {
                fail(key, "unknown setting '\(key)'\(Spelling.hint(for: key, in: known))")
            }
        }
        if !allowArray, let first = table.array.first {
            problems.add(
                file, line,
                "\(what): unexpected value \(describe(first)) without a key; settings are written key = value")
        }
    }

    func describe(_ value: LuaValue) -> String {
        switch value {
        case .string(let s): "\"\(s)\""
        case .integer(let i): String(i)
        case .number(let d): String(d)
        case .boolean(let b): String(b)
        default: "(a \(value.typeName))"
        }
    }

    subscript(key: String) -> LuaValue? { table[key] }

    func bool(_ key: String) -> Bool? {
        guard let value = table[key] else { return nil }
        guard let b = value.boolValue else {
            fail(key, "'\(key)' must be true or false, got \(describe(value))")
            return nil
        }
        return b
    }

    func string(_ key: String) -> String? {
        guard let value = table[key] else { return nil }
        guard let s = value.stringValue else {
            fail(key, "'\(key)' must be a string, got \(describe(value))")
            return nil
        }
        return s
    }

    func choice<T: RawRepresentable & CaseIterable>(_ key: String, _ type: T.Type) -> T? where T.RawValue == String {
        guard let value = table[key] else { return nil }
        let options = T.allCases.map(\.rawValue)
        guard let s = value.stringValue, let parsed = T(rawValue: s) else {
            let word = value.stringValue ?? describe(value)
            fail(
                key,
                "'\(key)' must be one of \(options.joined(separator: ", ")), got \"\(word)\"\(Spelling.hint(for: word, in: options))"
            )
            return nil
        }
        return parsed
    }

    func integer(_ key: String, range: ClosedRange<Int>) -> Int? {
        guard let value = table[key] else { return nil }
        guard let i = value.intValue, range.contains(i) else {
            fail(
                key,
                "'\(key)' must be a whole number from \(range.lowerBound) to \(range.upperBound), got \(describe(value))"
            )
            return nil
        }
        return i
    }

    /// A list of strings (a single string is accepted as a list of one).
    func strings(_ key: String, value: LuaValue? = nil) -> [String]? {
        guard let value = value ?? table[key] else { return nil }
        if let s = value.stringValue { return [s] }
        guard let list = value.tableValue, list.entries.isEmpty else {
            fail(key, "'\(key)' must be a list of strings, got \(describe(value))")
            return nil
        }
        var out: [String] = []
        for element in list.array {
            guard let s = element.stringValue else {
                fail(key, "'\(key)' must contain only strings, found \(describe(element))")
                return nil
            }
            out.append(s)
        }
        return out
    }
}
