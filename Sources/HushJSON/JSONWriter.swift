// A compact JSON writer into a byte buffer. No Foundation.

/// Appends compact JSON (no whitespace) to `bytes`.
package struct JSONWriter: Sendable {
    package var bytes: [UInt8]

    package init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Writes `value`; object keys in `JSONObject` order.
    package mutating func write(_ value: JSONValue) {
        switch value {
        case .null:
            writeNull()
        case .bool(let b):
            writeBool(b)
        case .number(let d):
            writeNumber(d)
        case .string(let s):
            writeString(s)
        case .array(let a):
            bytes.append(0x5B)  // [
            a.withUnsafeBufferPointer { elements in
                for i in elements.indices {
                    if i != 0 { bytes.append(0x2C) }
                    write(elements[i])
                }
            }
            bytes.append(0x5D)  // ]
        case .object(let o):
            bytes.append(0x7B)  // {
            o._pairs.withUnsafeBufferPointer { pairs in
                for i in pairs.indices {
                    if i != 0 { bytes.append(0x2C) }
                    writeString(pairs[i].key)
                    bytes.append(0x3A)  // :
                    write(pairs[i].value)
                }
            }
            bytes.append(0x7D)  // }
        }
    }

    /// Writes `s` quoted. Escapes `"` `\` and control characters (`\n` `\r`
    /// `\t` `\b` `\f`, the rest as `\u00XX`); everything else, including
    /// non-ASCII, U+2028/U+2029 and DEL, is written as raw UTF-8.
    package mutating func writeString(_ s: String) {
        bytes.append(0x22)
        if s.utf8.withContiguousStorageIfAvailable({ appendEscaped($0) }) == nil {
            var s = s
            s.withUTF8 { appendEscaped($0) }
        }
        bytes.append(0x22)
    }

    /// High bit set in the bytes of `w` that are '"', '\\' or < 0x20; only the
    /// lowest flagged byte is exact.
    @inline(__always)
    private static func escapeMask(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let q = w ^ (ones &* 0x22)
        let b = w ^ (ones &* 0x5C)
        let hasQuote = (q &- ones) & ~q
        let hasBackslash = (b &- ones) & ~b
        let hasControl = (w &- ones &* 0x20) & ~w
        return (hasQuote | hasBackslash | hasControl) & 0x8080_8080_8080_8080
    }

    @inline(__always)
    private mutating func appendEscaped(_ u: UnsafeBufferPointer<UInt8>) {
        guard let base = u.baseAddress else { return }
        let n = u.count
        var runStart = 0
        var i = 0
        while true {
            // Find the next byte that needs escaping, 8 bytes at a time.
            while i &+ 8 <= n {
                let w = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                let m = JSONWriter.escapeMask(w)
                if m != 0 {
                    i &+= m.trailingZeroBitCount &>> 3
                    break
                }
                i &+= 8
            }
            // Here base[i] needs escaping, or fewer than 8 bytes are left.
            while i < n {
                let c = base[i]
                if c < 0x20 || c == 0x22 || c == 0x5C { break }
                i &+= 1
            }
            if i >= n { break }
            let c = base[i]
            if runStart < i {
                bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: i &- runStart))
            }
            switch c {
            case 0x22: bytes.append(0x5C); bytes.append(0x22)
            case 0x5C: bytes.append(0x5C); bytes.append(0x5C)
            case 0x0A: bytes.append(0x5C); bytes.append(0x6E)
            case 0x0D: bytes.append(0x5C); bytes.append(0x72)
            case 0x09: bytes.append(0x5C); bytes.append(0x74)
            case 0x08: bytes.append(0x5C); bytes.append(0x62)
            case 0x0C: bytes.append(0x5C); bytes.append(0x66)
            default:
                let hexDigits: StaticString = "0123456789abcdef"
                let h = hexDigits.utf8Start
                bytes.append(0x5C)
                bytes.append(0x75)
                bytes.append(0x30)
                bytes.append(0x30)
                bytes.append(h[Int(c &>> 4)])
                bytes.append(h[Int(c & 0xF)])
            }
            i &+= 1
            runStart = i
        }
        if runStart < n {
            bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: n &- runStart))
        }
    }

    /// Integral values within ±2^53 are written as integers (`1`, not `1.0`;
    /// `-0` as `0`); other finite values as Swift's shortest round-trip form
    /// (e.g. `0.1`, `1e-07`, `1.5e+300`); NaN and infinities as `null`.
    package mutating func writeNumber(_ d: Double) {
        guard d.isFinite else {
            writeNull()
            return
        }
        if d.magnitude <= 9_007_199_254_740_992 {
            // Int(d) truncates (no libm call, unlike `rounded`); in range here.
            let i = Int(d)
            if Double(i) == d {
                writeInt(i)
                return
            }
        }
        bytes.append(contentsOf: d.description.utf8)
    }

    package mutating func writeInt(_ i: Int) {
        if i >= 0 && i < 10 {
            bytes.append(0x30 &+ UInt8(truncatingIfNeeded: i))
            return
        }
        if i < 0 { bytes.append(0x2D) }
        var v = i.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { tmp in
            var k = 20
            repeat {
                k &-= 1
                tmp[k] = 0x30 &+ UInt8(truncatingIfNeeded: v % 10)
                v /= 10
            } while v != 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: tmp[k..<20]))
        }
    }

    package mutating func writeBool(_ b: Bool) {
        if b {
            raw("true")
        } else {
            raw("false")
        }
    }

    package mutating func writeNull() {
        raw("null")
    }

    /// Appends the literal's bytes as they are (no quoting or escaping).
    package mutating func raw(_ s: StaticString) {
        if s.hasPointerRepresentation {
            bytes.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
        } else {
            bytes.append(contentsOf: String(s.unicodeScalar).utf8)
        }
    }

    /// The bytes written so far, as a String.
    package var string: String {
        String(decoding: bytes, as: UTF8.self)
    }
}

// MARK: - Measuring without writing

extension JSONWriter {
    /// The number of bytes `write(value)` would append, computed without
    /// writing or allocating (apart from non-integral numbers, which are
    /// measured through their `description`, exactly as `writeNumber` writes
    /// them).
    package static func byteCount(of value: JSONValue) -> Int {
        withUnsafePointer(to: value) { byteCount(at: $0) }
    }

    private static let pairValueOffset = MemoryLayout<JSONObject._Pair>.offset(of: \JSONObject._Pair.value)!

    /// Works through pointers into the arrays' storage, so that the walk does
    /// not copy (retain and release) every value it visits.
    private static func byteCount(at value: UnsafePointer<JSONValue>) -> Int {
        switch value.pointee {
        case .null:
            return 4
        case .bool(let b):
            return b ? 4 : 5
        case .number(let d):
            return byteCount(ofNumber: d)
        case .string(let s):
            return byteCount(ofString: s)
        case .array(let a):
            // [ ] and a comma between elements.
            return a.withUnsafeBufferPointer { elements -> Int in
                var n = Swift.max(elements.count, 1) &+ 1
                guard let base = elements.baseAddress else { return n }
                for i in 0..<elements.count { n &+= byteCount(at: base + i) }
                return n
            }
        case .object(let o):
            // { } plus, per member, a colon and (between members) a comma.
            return o._pairs.withUnsafeBufferPointer { pairs -> Int in
                var n = pairs.isEmpty ? 2 : 2 &* pairs.count &+ 1
                guard let base = pairs.baseAddress else { return n }
                let valueOffset = pairValueOffset
                for i in 0..<pairs.count {
                    n &+= byteCount(ofString: base[i].key)
                    n &+= byteCount(
                        at: (UnsafeRawPointer(base + i) + valueOffset).assumingMemoryBound(to: JSONValue.self))
                }
                return n
            }
        }
    }

    /// The number of bytes `writeString(s)` would append (quotes included).
    package static func byteCount(ofString s: String) -> Int {
        let count = s.utf8.count
        if let extra = s.utf8.withContiguousStorageIfAvailable({ escapeOverhead($0) }) {
            return count &+ 2 &+ extra
        }
        var s = s
        return count &+ 2 &+ s.withUTF8 { escapeOverhead($0) }
    }

    /// The number of bytes `writeNumber(d)` would append.
    package static func byteCount(ofNumber d: Double) -> Int {
        guard d.isFinite else { return 4 }
        if d.magnitude <= 9_007_199_254_740_992 {
            let i = Int(d)
            if Double(i) == d { return byteCount(ofInt: i) }
        }
        return d.description.utf8.count
    }

    /// The number of bytes `writeInt(i)` would append.
    package static func byteCount(ofInt i: Int) -> Int {
        var n = i < 0 ? 2 : 1
        var v = i.magnitude
        while v >= 10 {
            v /= 10
            n &+= 1
        }
        return n
    }

    /// How many bytes escaping adds to `u`: 1 for `"` `\\` and the control
    /// characters with a short escape, 5 for the other control characters.
    /// Eight bytes at a time, the last (partial) word included.
    @inline(__always)
    private static func escapeOverhead(_ u: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = u.baseAddress else { return 0 }
        let raw = UnsafeRawPointer(base)
        let n = u.count
        var extra = 0
        var i = 0
        while i &+ 8 <= n {
            let w = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let m = exactEscapeMask(w)
            if m != 0 { extra &+= overhead(m, w) }
            i &+= 8
        }
        let rest = n &- i
        if rest > 0 {
            // The last `rest` (1...7) bytes in the low bytes of `w`, without
            // reading outside `u`.
            var w: UInt64
            if n >= 8 {
                w =
                    UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self))
                    &>> (64 &- 8 &* rest)
            } else if rest >= 4 {
                let lo = UInt64(UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self)))
                let hi = UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: rest &- 4, as: UInt32.self)))
                w = lo | hi &<< (8 &* (rest &- 4))  // overlapping bytes are the same
            } else {
                w =
                    UInt64(base[0]) | UInt64(base[rest &>> 1]) &<< (8 &* (rest &>> 1))
                    | UInt64(base[rest &- 1]) &<< (8 &* (rest &- 1))
            }
            // Fill the unused high bytes with 'A', which needs no escape.
            w |= 0x4141_4141_4141_4141 &<< (8 &* rest)
            let m = exactEscapeMask(w)
            if m != 0 { extra &+= overhead(m, w) }
        }
        return extra
    }

    /// High bit set in exactly the bytes of `w` that are '"', '\\' or < 0x20
    /// (no borrows between bytes, unlike `escapeMask`).
    @inline(__always)
    private static func exactEscapeMask(_ w: UInt64) -> UInt64 {
        let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        let ones: UInt64 = 0x0101_0101_0101_0101
        let q = w ^ (ones &* 0x22)
        let b = w ^ (ones &* 0x5C)
        // A byte x is zero exactly when ((x & 0x7F) + 0x7F) | x has its high bit clear;
        // below 0x20 exactly when ((x & 0x7F) + 0x60) | x has.
        let isQuote = ((q & low7) &+ low7) | q
        let isBackslash = ((b & low7) &+ low7) | b
        let isControl = ((w & low7) &+ (ones &* 0x60)) | w
        return ~(isQuote & isBackslash & isControl) & 0x8080_8080_8080_8080
    }

    /// The escaping overhead of the bytes of `w` flagged in `m`.
    @inline(never)
    private static func overhead(_ m: UInt64, _ w: UInt64) -> Int {
        var m = m
        var extra = 0
        while m != 0 {
            let c = UInt8(truncatingIfNeeded: w &>> UInt64(m.trailingZeroBitCount & ~7))
            switch c {
            case 0x22, 0x5C, 0x0A, 0x0D, 0x09, 0x08, 0x0C: extra &+= 1
            default: extra &+= 5
            }
            m &= m &- 1
        }
        return extra
    }
}

extension JSONValue {
    /// Compact JSON text; object keys in `JSONObject` order.
    package func jsonString() -> String {
        var w = JSONWriter()
        w.write(self)
        return w.string
    }
}
