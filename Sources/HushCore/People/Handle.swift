/// A handle normalised for comparison: e-mail case-insensitively, phone numbers by their digits
/// (a leading country code may be missing on one side), anything else exactly but case-insensitively.
package struct Handle: Sendable, Hashable, CustomStringConvertible {
    package enum Kind: Sendable, Hashable { case email, phone, other }

    package let kind: Kind
    /// Lower-cased e-mail or opaque id; digits for a phone number.
    package let key: String

    package init(_ raw: String) {
        if let ascii = Handle(ascii: raw) {
            self = ascii
            return
        }
        var text = Substring(raw.trimmingWhitespace())
        let lowered = text.lowercased()
        if lowered.hasPrefix("mailto:") {
            text = text.dropFirst(7)
        } else if lowered.hasPrefix("tel:") {
            text = text.dropFirst(4)
        }
        if text.contains("@") {
            kind = .email
            key = text.lowercased()
            return
        }
        var digits = ""
        var isPhone = !text.isEmpty
        for c in text {
            if c.isASCII && c.isNumber {
                digits.append(c)
            } else if c == " " || c == "-" || c == "." || c == "(" || c == ")" || c == "+" || c == "\u{a0}" {
                continue
            } else {
                isPhone = false; break
            }
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

    private init(kind: Kind, key: String) {
        self.kind = kind
        self.key = key
    }

    /// The same normalisation over bytes, for an all-ASCII handle (nearly all of them); nil for
    /// any other, which takes the general path.
    private init?(ascii raw: String) {
        var raw = raw
        let result: Handle?? = raw.withUTF8 { b -> Handle? in
            let count = b.count
            var i = 0
            while i < count {
                if b[i] >= 0x80 { return nil }
                i &+= 1
            }
            var lo = 0, hi = count
            while lo < hi, Self.isSpace(b[lo]) { lo &+= 1 }
            while hi > lo, Self.isSpace(b[hi &- 1]) { hi &-= 1 }
            if Self.hasPrefix(b, lo, hi, "mailto:") { lo &+= 7 } else if Self.hasPrefix(b, lo, hi, "tel:") { lo &+= 4 }
            return Self.normalised(b, lo, hi)
        }
        guard let handle = result ?? nil else { return nil }
        self = handle
    }

    // The byte helpers take the bounds as arguments: nested functions capturing the variable
    // bounds cost an exclusivity check on each access.

    @inline(__always) private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || (c >= 0x09 && c <= 0x0D) }

    @inline(__always) private static func lower(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c | 0x20 : c }

    /// Whether `b[lo..<hi]` starts with the lower-case `p`, ignoring case.
    private static func hasPrefix(_ b: UnsafeBufferPointer<UInt8>, _ lo: Int, _ hi: Int, _ p: StaticString) -> Bool {
        let n = p.utf8CodeUnitCount
        guard hi &- lo >= n else { return false }
        for k in 0..<n where lower(b[lo &+ k]) != p.utf8Start[k] { return false }
        return true
    }

    private static func lowered(_ b: UnsafeBufferPointer<UInt8>, _ lo: Int, _ hi: Int) -> String {
        String(unsafeUninitializedCapacity: hi &- lo) { out in
            for k in lo..<hi { out[k &- lo] = lower(b[k]) }
            return hi &- lo
        }
    }

    /// The handle `b[lo..<hi]` (ASCII, trimmed, without its scheme) stands for.
    private static func normalised(_ b: UnsafeBufferPointer<UInt8>, _ lo: Int, _ hi: Int) -> Handle {
        for k in lo..<hi where b[k] == 0x40 { return Handle(kind: .email, key: lowered(b, lo, hi)) }
        var isPhone = lo < hi
        var digitCount = 0
        for k in lo..<hi {
            let c = b[k]
            if c >= 0x30 && c <= 0x39 {
                digitCount &+= 1
            } else if c == 0x20 || c == 0x2D || c == 0x2E || c == 0x28 || c == 0x29 || c == 0x2B {
                continue
            } else {
                isPhone = false; break
            }
        }
        guard isPhone && digitCount >= 3 else { return Handle(kind: .other, key: lowered(b, lo, hi)) }
        // "00" is the international dialling prefix: 0049… is +49….
        var leadingZeros = 0
        for k in lo..<hi where b[k] >= 0x30 && b[k] <= 0x39 {
            guard b[k] == 0x30 else { break }
            leadingZeros &+= 1
            if leadingZeros == 2 { break }
        }
        let skip = leadingZeros == 2 ? 2 : 0
        let digits = String(unsafeUninitializedCapacity: digitCount &- skip) { out in
            var n = 0, seen = 0
            for k in lo..<hi where b[k] >= 0x30 && b[k] <= 0x39 {
                if seen >= skip { out[n] = b[k]; n &+= 1 }
                seen &+= 1
            }
            return n
        }
        return Handle(kind: .phone, key: digits)
    }

    package var description: String { key }

    /// What two matching handles certainly share: their kind and key, or, for phone numbers of
    /// 7 digits or more, their last 7 digits (a missing country code or trunk 0 is at the front).
    struct Bucket: Hashable {
        var kind: Kind
        var key: Substring
    }

    var bucket: Bucket {
        if kind == .phone && key.utf8.count >= 7 { return Bucket(kind: kind, key: key.suffix(7)) }
        return Bucket(kind: kind, key: Substring(key))
    }

    /// Same person's handle: equal keys, or phone numbers equal once a 1–3 digit country code
    /// missing on one side is allowed for (the shorter side needs at least 7 digits).
    package func matches(_ other: Handle) -> Bool {
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
