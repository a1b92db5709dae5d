// A compact JSON writer into a byte buffer. No Foundation.

/// Appends compact JSON (no whitespace) to a buffer of its own.
///
/// The buffer is raw memory grown by hand, not an `Array`: a line of JSON is many appends of a few
/// bytes each, and `Array.append(contentsOf:)` costs several times the copy it makes. Noncopyable:
/// two writers never share the memory they write.
package struct JSONWriter: ~Copyable, @unchecked Sendable {
    /// The bytes written are `base[0..<used]`; `capacity` are allocated.
    var base: UnsafeMutablePointer<UInt8>
    var used: Int
    var capacity: Int

    package init(capacity: Int = 256) {
        self.capacity = Swift.max(capacity, 16)
        base = .allocate(capacity: self.capacity)
        used = 0
    }

    deinit { base.deallocate() }

    /// The bytes written so far, as an array (a copy); setting it replaces them.
    package var bytes: [UInt8] {
        get { Array(UnsafeBufferPointer(start: base, count: used)) }
        set {
            used = 0
            newValue.withUnsafeBytes { append($0) }
        }
    }

    /// How many bytes are written.
    package var count: Int { used }

    /// Forgets what was written, keeping the memory for what comes next.
    package mutating func removeAll() { used = 0 }

    /// Forgets what was written after the first `byteCount` bytes.
    package mutating func removeAll(after byteCount: Int) {
        precondition(byteCount >= 0 && byteCount <= used)
        used = byteCount
    }

    /// Calls `body` with the bytes written (valid only during the call).
    package func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: base, count: used))
    }

    /// Makes room for `n` more bytes.
    @inline(__always)
    package mutating func reserve(_ n: Int) {
        if _slowPath(capacity &- used < n) { grow(n) }
    }

    @inline(never)
    mutating func grow(_ n: Int) {
        let newCapacity = Swift.max(capacity &* 2, used &+ n)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.initialize(from: base, count: used)
        base.deallocate()
        base = grown
        capacity = newCapacity
    }

    /// Appends `bytes` as they are.
    package mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(base + used).copyMemory(from: source, byteCount: bytes.count)
        used &+= bytes.count
    }

    /// Appends one byte as it is.
    @inline(__always)
    package mutating func append(_ byte: UInt8) {
        reserve(1)
        base[used] = byte
        used &+= 1
    }

    /// Appends the literal's bytes as they are (no quoting or escaping). Inlined, the length is a
    /// constant and the copy a few moves.
    @inline(__always)
    package mutating func raw(_ s: StaticString) {
        if s.hasPointerRepresentation {
            let n = s.utf8CodeUnitCount
            reserve(n)
            (base + used).initialize(from: s.utf8Start, count: n)
            used &+= n
        } else {
            rawScalar(s.unicodeScalar)
        }
    }

    /// A one-character literal (`"}"`), which Swift may hand over as a scalar.
    mutating func rawScalar(_ scalar: Unicode.Scalar) {
        for byte in UTF8.encode(scalar)! { append(byte) }
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
            append(0x5B)  // [
            a.withUnsafeBufferPointer { elements in
                for i in elements.indices {
                    if i != 0 { append(0x2C) }
                    write(elements[i])
                }
            }
            append(0x5D)  // ]
        case .object(let o):
            append(0x7B)  // {
            o._pairs.withUnsafeBufferPointer { pairs in
                for i in pairs.indices {
                    if i != 0 { append(0x2C) }
                    writeString(pairs[i].key)
                    append(0x3A)  // :
                    write(pairs[i].value)
                }
            }
            append(0x7D)  // }
        }
    }

    /// Writes `s` quoted. Escapes `"` `\` and control characters (`\n` `\r`
    /// `\t` `\b` `\f`, the rest as `\u00XX`); everything else, including
    /// non-ASCII, U+2028/U+2029 and DEL, is written as raw UTF-8.
    package mutating func writeString(_ s: String) {
        if s.utf8.withContiguousStorageIfAvailable({ writeQuoted($0) }) == nil {
            var s = s
            s.withUTF8 { writeQuoted($0) }
        }
    }

    private mutating func writeQuoted(_ u: UnsafeBufferPointer<UInt8>) {
        reserve(u.count &+ 2)
        if let n = Self.writeQuoted(u, to: freeSpace) {
            used &+= n
        } else {
            // Escapes made it longer: room for the longest it can be, every byte as \u00XX.
            reserve(u.count &* 6 &+ 2)
            used &+= Self.writeQuoted(u, to: freeSpace)!
        }
    }

    /// Integral values within ±2^53 are written as integers (`1`, not `1.0`;
    /// `-0` as `0`); other finite values as Swift's shortest round-trip form
    /// (e.g. `0.1`, `1e-07`, `1.5e+300`); NaN and infinities as `null`.
    package mutating func writeNumber(_ d: Double) {
        reserve(Self.longestNumber)
        used &+= Self.writeNumber(d, to: freeSpace)!
    }

    package mutating func writeInt(_ i: Int) {
        reserve(Self.longestInt)
        used &+= Self.writeInt(i, to: freeSpace)!
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

    /// The bytes written so far, as a String.
    package var string: String {
        String(decoding: UnsafeBufferPointer(start: base, count: used), as: UTF8.self)
    }
}

// MARK: - Writing into memory

extension JSONWriter {
    /// The bytes after those written, at least `n` of them: for a writer in another module to write
    /// into directly and then count (`didWrite`). Package code is not inlined across modules, so a
    /// writer making many small appends (`Decision.write`) makes them itself, with the functions
    /// below for what is not a literal.
    package mutating func freeSpace(atLeast n: Int) -> UnsafeMutableRawBufferPointer {
        reserve(n)
        return freeSpace
    }

    /// Counts the first `n` bytes of the free space as written.
    package mutating func didWrite(_ n: Int) {
        precondition(n >= 0 && n <= capacity &- used, "wrote past the free space")
        used &+= n
    }

    private var freeSpace: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: base + used, count: capacity &- used)
    }

    /// The most bytes `writeInt` writes (`-9223372036854775808`).
    package static let longestInt = 20
    /// The most bytes `writeNumber` writes (`-2.2250738585072014e-308`, with room to spare).
    package static let longestNumber = 32

    /// Writes `u` quoted and escaped, as `writeString` writes a string, at the start of `out`.
    /// Returns how many bytes, or nil when they do not fit (`out` holds then no sure bytes).
    package static func writeQuoted(_ u: UnsafeBufferPointer<UInt8>, to out: UnsafeMutableRawBufferPointer) -> Int? {
        let n = u.count
        guard let o = out.baseAddress, n &+ 2 <= out.count else { return nil }
        o.storeBytes(of: 0x22, as: UInt8.self)
        if let s = u.baseAddress {
            let clean = copyUnescaped(s, n, to: o + 1)
            if clean < n { return writeEscaped(s, n, from: clean, to: out) }
        }
        o.storeBytes(of: 0x22, toByteOffset: n &+ 1, as: UInt8.self)
        return n &+ 2
    }

    /// Copies `s[0..<n]` to `d` up to the first byte that needs escaping, and returns where that
    /// is (`n` when none does). Eight bytes at a time, the last word overlapping the one before;
    /// it may copy bytes after that first one, never past `n`.
    @inline(__always)
    private static func copyUnescaped(_ s: UnsafePointer<UInt8>, _ n: Int, to d: UnsafeMutableRawPointer) -> Int {
        let source = UnsafeRawPointer(s)
        @inline(__always) func word(_ at: Int) -> UInt64 {
            let w = source.loadUnaligned(fromByteOffset: at, as: UInt64.self)
            d.storeBytes(of: w, toByteOffset: at, as: UInt64.self)
            return escapeMask(UInt64(littleEndian: w))
        }
        if n >= 8 {
            var at = 0
            while at &+ 16 <= n {
                let m0 = word(at)
                let m1 = word(at &+ 8)
                if m0 | m1 != 0 {
                    return m0 != 0 ? at &+ m0.trailingZeroBitCount &>> 3 : at &+ 8 &+ m1.trailingZeroBitCount &>> 3
                }
                at &+= 16
            }
            if at &+ 8 < n {
                let m = word(at)
                if m != 0 { return at &+ m.trailingZeroBitCount &>> 3 }
            }
            if at < n {
                let m = word(n &- 8)
                if m != 0 { return n &- 8 &+ m.trailingZeroBitCount &>> 3 }
            }
            return n
        }
        if n >= 4 {
            // The first four bytes and the last four (overlapping) as one word.
            let low = source.loadUnaligned(as: UInt32.self)
            let high = source.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)
            d.storeBytes(of: low, as: UInt32.self)
            d.storeBytes(of: high, toByteOffset: n &- 4, as: UInt32.self)
            let m = escapeMask(UInt64(UInt32(littleEndian: low)) | UInt64(UInt32(littleEndian: high)) &<< 32)
            if m == 0 { return n }
            let k = m.trailingZeroBitCount &>> 3
            return k < 4 ? k : n &- 8 &+ k
        }
        var i = 0
        while i < n {
            let c = s[i]
            if needsEscape(c) { return i }
            d.storeBytes(of: c, toByteOffset: i, as: UInt8.self)
            i &+= 1
        }
        return n
    }

    /// `writeQuoted` from the first byte that needs escaping, `s[i]`, on (the quote and the bytes
    /// before it are written).
    @inline(never)
    private static func writeEscaped(
        _ s: UnsafePointer<UInt8>, _ n: Int, from i: Int, to out: UnsafeMutableRawBufferPointer
    ) -> Int? {
        let o = out.baseAddress!
        // o[0..<k] is written; the closing quote needs one more byte.
        var k = 1 &+ i
        var i = i
        func put(_ byte: UInt8) {
            o.storeBytes(of: byte, toByteOffset: k, as: UInt8.self)
            k &+= 1
        }
        while i < n {
            let c = s[i]
            let short: UInt8
            switch c {
            case 0x22: short = 0x22
            case 0x5C: short = 0x5C
            case 0x0A: short = 0x6E  // n
            case 0x0D: short = 0x72  // r
            case 0x09: short = 0x74  // t
            case 0x08: short = 0x62  // b
            case 0x0C: short = 0x66  // f
            default: short = 0
            }
            if short != 0 {
                guard k &+ 3 <= out.count else { return nil }
                put(0x5C)
                put(short)
            } else {
                guard k &+ 7 <= out.count else { return nil }
                let hexDigits: StaticString = "0123456789abcdef"
                let h = hexDigits.utf8Start
                put(0x5C)
                put(0x75)  // u
                put(0x30)
                put(0x30)
                put(h[Int(c &>> 4)])
                put(h[Int(c & 0xF)])
            }
            i &+= 1
            var clean = 0
            while i &+ clean < n && !needsEscape(s[i &+ clean]) { clean &+= 1 }
            guard k &+ clean &+ 1 <= out.count else { return nil }
            (o + k).copyMemory(from: s + i, byteCount: clean)
            k &+= clean
            i &+= clean
        }
        put(0x22)
        return k
    }

    /// High bit set in the bytes of `w` that are '"', '\\' or < 0x20; only the
    /// lowest flagged byte is exact (a byte that needs no escaping never flags a byte above it).
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
    private static func needsEscape(_ c: UInt8) -> Bool { c < 0x20 || c == 0x22 || c == 0x5C }

    /// Writes `i` at the start of `out`, as `writeInt` does; returns how many bytes, or nil when
    /// they do not fit.
    package static func writeInt(_ i: Int, to out: UnsafeMutableRawBufferPointer) -> Int? {
        guard let o = out.baseAddress else { return nil }
        if i >= 0 && i < 10 {
            guard out.count >= 1 else { return nil }
            o.storeBytes(of: 0x30 &+ UInt8(truncatingIfNeeded: i), as: UInt8.self)
            return 1
        }
        let digits = byteCount(ofInt: i.magnitude)
        let size = (i < 0 ? 1 : 0) &+ digits
        guard size <= out.count else { return nil }
        if i < 0 { o.storeBytes(of: 0x2D, as: UInt8.self) }
        // From the last digit back.
        var v = i.magnitude
        var k = size
        repeat {
            k &-= 1
            o.storeBytes(of: 0x30 &+ UInt8(truncatingIfNeeded: v % 10), toByteOffset: k, as: UInt8.self)
            v /= 10
        } while v != 0
        return size
    }

    /// Writes `d` at the start of `out`, as `writeNumber` does; returns how many bytes, or nil when
    /// they do not fit.
    package static func writeNumber(_ d: Double, to out: UnsafeMutableRawBufferPointer) -> Int? {
        guard d.isFinite else { return copy("null", to: out) }
        if d.magnitude <= 9_007_199_254_740_992 {
            // Int(d) truncates (no libm call, unlike `rounded`); in range here.
            let i = Int(d)
            if Double(i) == d { return writeInt(i, to: out) }
        }
        var text = d.description
        return text.withUTF8 { copy(UnsafeRawBufferPointer($0), to: out) }
    }

    private static func copy(_ bytes: UnsafeRawBufferPointer, to out: UnsafeMutableRawBufferPointer) -> Int? {
        guard bytes.count <= out.count else { return nil }
        if let source = bytes.baseAddress { out.baseAddress!.copyMemory(from: source, byteCount: bytes.count) }
        return bytes.count
    }

    private static func copy(_ literal: StaticString, to out: UnsafeMutableRawBufferPointer) -> Int? {
        copy(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount), to: out)
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
        (i < 0 ? 1 : 0) &+ byteCount(ofInt: i.magnitude)
    }

    /// The number of digits of `v`.
    static func byteCount(ofInt v: UInt) -> Int {
        var n = 1
        var v = v
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
