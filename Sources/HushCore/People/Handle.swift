/// A handle normalised for comparison: e-mail case-insensitively, phone numbers by their digits
/// (a leading country code may be missing on one side), anything else exactly but case-insensitively.
public struct Handle: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable { case email, phone, other }

    public let kind: Kind
    /// Lower-cased e-mail or opaque id; digits for a phone number.
    public let key: String

    public init(_ raw: String) {
        var text = Substring(raw.trimmingWhitespace())
        let lowered = text.lowercased()
        if lowered.hasPrefix("mailto:") { text = text.dropFirst(7) }
        else if lowered.hasPrefix("tel:") { text = text.dropFirst(4) }
        if text.contains("@") {
            kind = .email
            key = text.lowercased()
            return
        }
        var digits = ""
        var isPhone = !text.isEmpty
        for c in text {
            if c.isASCII && c.isNumber { digits.append(c) }
            else if c == " " || c == "-" || c == "." || c == "(" || c == ")" || c == "+" || c == "\u{a0}" { continue }
            else { isPhone = false; break }
        }
        if isPhone && digits.count >= 3 {
            kind = .phone
            // "00" is the international dialling prefix: 0049… is +49….
            key = digits.hasPrefix("00") ? String(digits.dropFirst(2)) : digits
        } else {
            kind = .other
            key = text.lowercased()
        }
    }

    public var description: String { key }

    /// Same person's handle: equal keys, or phone numbers equal once a 1–3 digit country code
    /// missing on one side is allowed for (the shorter side needs at least 7 digits).
    public func matches(_ other: Handle) -> Bool {
        guard kind == other.kind else { return false }
        if key == other.key { return true }
        guard kind == .phone else { return false }
        var (short, long) = key.count < other.key.count ? (key, other.key) : (other.key, key)
        // A national number may carry a trunk prefix 0 where the other side has the country code.
        if short.hasPrefix("0") && !long.hasPrefix("0") { short.removeFirst() }
        let extra = long.count - short.count
        return short.count >= 7 && extra >= 1 && extra <= 3 && long.hasSuffix(short)
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s = s.dropFirst() }
        while let l = s.last, l.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
