/// A format with an optional singular form: `"%u more"` or `{ one = "%u more message", other = … }`.
package struct PluralFormat: Sendable, Hashable {
    package var one: String? {
        didSet { mentionsArguments = Self.mentionsArguments(one: one, other: other) }
    }
    package var other: String {
        didSet { mentionsArguments = Self.mentionsArguments(one: one, other: other) }
    }
    /// Whether either form speaks of the summary arguments (`%@`): found once, where a group's
    /// summary line asks for every notification.
    package private(set) var mentionsArguments: Bool

    package init(one: String? = nil, other: String) {
        self.one = one
        self.other = other
        mentionsArguments = Self.mentionsArguments(one: one, other: other)
    }

    package func form(for count: Int) -> String { count == 1 ? (one ?? other) : other }

    private static func mentionsArguments(one: String?, other: String) -> Bool {
        (one.map(Self.mentionsArguments) ?? false) || Self.mentionsArguments(other)
    }

    /// Whether `s` holds `%@`: a byte scan for ASCII text, the general search otherwise.
    private static func mentionsArguments(_ s: String) -> Bool {
        let scanned: Bool?? = s.utf8.withContiguousStorageIfAvailable { b -> Bool? in
            var previous: UInt8 = 0
            for c in b {
                if c >= 0x80 { return nil }
                if c == 0x40 && previous == 0x25 { return true }
                previous = c
            }
            return false
        }
        if let scanned, let result = scanned { return result }
        return s.contains("%@")
    }

    package static let defaultSummary = PluralFormat(one: "%u more notification", other: "%u more notifications")
    package static let defaultPlaceholder = PluralFormat(other: "Notification")

    /// Replaces `%u` with the count and `%@` with the arguments; `%%` is a percent sign.
    package func render(count: Int, arguments: String? = nil) -> String {
        let format = form(for: count)
        if let fast = Self.renderASCII(format, count: count, arguments: arguments) { return fast }
        var out = ""
        var iterator = format.makeIterator()
        while let c = iterator.next() {
            guard c == "%" else { out.append(c); continue }
            switch iterator.next() {
            case "u": out += String(count)
            case "@": out += arguments ?? ""
            case "%": out.append("%")
            case let other?: out.append("%"); out.append(other)
            case nil: out.append("%")
            }
        }
        return out
    }

    /// `render` for an all-ASCII format (nearly all of them), over bytes into one allocation; nil
    /// for any other.
    private static func renderASCII(_ format: String, count: Int, arguments: String?) -> String? {
        var countText = String(count)
        var arguments = arguments ?? ""
        return format.utf8.withContiguousStorageIfAvailable { b -> String? in
            // First pass: ASCII only, and how long the result is.
            var size = 0
            var i = 0
            let n = b.count
            while i < n {
                let c = b[i]
                if c >= 0x80 { return nil }
                i += 1
                guard c == 0x25 else { size += 1; continue }
                guard i < n else { size += 1; break }
                let next = b[i]
                if next >= 0x80 { return nil }
                i += 1
                switch next {
                case 0x75: size += countText.utf8.count
                case 0x40: size += arguments.utf8.count
                case 0x25: size += 1
                default: size += 2
                }
            }
            return countText.withUTF8 { digits in
                arguments.withUTF8 { args in
                    String(unsafeUninitializedCapacity: size) { out in
                        var o = 0
                        func put(_ c: UInt8) { out[o] = c; o += 1 }
                        func put(_ bytes: UnsafeBufferPointer<UInt8>) {
                            for c in bytes { out[o] = c; o += 1 }
                        }
                        var i = 0
                        while i < n {
                            let c = b[i]
                            i += 1
                            guard c == 0x25 else { put(c); continue }
                            guard i < n else { put(0x25); break }
                            let next = b[i]
                            i += 1
                            switch next {
                            case 0x75: put(digits)  // u
                            case 0x40: put(args)  // @
                            case 0x25: put(0x25)
                            default: put(0x25); put(next)
                            }
                        }
                        return o
                    }
                }
            }
        } ?? nil
    }
}
