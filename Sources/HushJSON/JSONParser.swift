// A strict RFC 8259 JSON parser over raw bytes. No Foundation.
//
// - Exactly one value, optional whitespace (space, tab, LF, CR) around it.
// - No trailing commas, comments, NaN/Infinity, leading zeros, unescaped
//   control characters in strings, or lone surrogates in \u escapes.
// - UTF-8 is validated by the scanner itself (overlongs, UTF-8-encoded
//   surrogates, > U+10FFFF, truncated sequences, stray bytes), wherever the
//   scanner reaches.
// - Numbers are converted to the nearest Double (Clinger fast path, otherwise
//   the standard library's correctly rounded `Double(String)`); numbers that
//   overflow a Double are rejected.
// - The parser is iterative (explicit stack), so depth is bounded only by
//   `maxDepth` and never by the thread's stack.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A parse error: a human-readable message and the 0-based byte offset where
/// the input went wrong.
package struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package var offset: Int

    package init(message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    package var description: String { message }
}

package enum JSONParser {
    /// Parses one JSON document from UTF-8 bytes.
    package static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = 512) throws(JSONError) -> JSONValue {
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw JSONError(message: "invalid JSON: empty input", offset: 0)
        }
        let p = base.assumingMemoryBound(to: UInt8.self)
        // The scratch stacks start in stack memory (small documents never touch
        // the heap for them) and move to the heap if they outgrow it. Each stays
        // within 1 KiB, the size up to which withUnsafeTemporaryAllocation
        // reliably uses the stack.
        return try withUnsafeTemporaryAllocation(of: JSONValue.self, capacity: 40) {
            (values) throws(JSONError) -> JSONValue in
            try withUnsafeTemporaryAllocation(of: _JSONScanner.Key.self, capacity: 32) {
                (keys) throws(JSONError) -> JSONValue in
                try withUnsafeTemporaryAllocation(of: _JSONScanner.Frame.self, capacity: 16) {
                    (frames) throws(JSONError) -> JSONValue in
                    try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) {
                        (scratch) throws(JSONError) -> JSONValue in
                        let cache = _JSONKeyCache.take()
                        defer { _JSONKeyCache.putBack(cache) }
                        var scanner = _JSONScanner(
                            base: p, count: bytes.count, maxDepth: maxDepth,
                            values: _JSONStack(values), keys: _JSONStack(keys), frames: _JSONStack(frames),
                            buf: _JSONStack(scratch),
                            keyCache: cache)
                        return try scanner.parseDocument()
                    }
                }
            }
        }
    }

    package static func parse(_ bytes: [UInt8], maxDepth: Int = 512) throws(JSONError) -> JSONValue {
        let result: Result<JSONValue, JSONError> = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONError) -> JSONValue in try parse(raw, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    package static func parse(_ text: String, maxDepth: Int = 512) throws(JSONError) -> JSONValue {
        var text = text
        let result: Result<JSONValue, JSONError> = text.withUTF8 { buf in
            Result { () throws(JSONError) -> JSONValue in
                try parse(UnsafeRawBufferPointer(buf), maxDepth: maxDepth)
            }
        }
        return try result.get()
    }
}

// MARK: - Scanner

/// A growable stack over manually managed memory: starts in a caller-provided
/// (usually stack-allocated) buffer, moves to the heap when it outgrows it.
/// Elements are moved in and out, never copied.
@usableFromInline
package struct _JSONStack<Element>: ~Copyable {
    var base: UnsafeMutablePointer<Element>
    var count: Int
    var capacity: Int
    var ownsMemory: Bool

    init(_ initial: UnsafeMutableBufferPointer<Element>) {
        base = initial.baseAddress!
        count = 0
        capacity = initial.count
        ownsMemory = false
    }

    deinit {
        base.deinitialize(count: count)
        if ownsMemory { base.deallocate() }
    }

    @inline(__always)
    mutating func push(_ element: consuming Element) {
        if count == capacity { grow(minimumCapacity: count &+ 1) }
        (base + count).initialize(to: element)
        count &+= 1
    }

    @inline(__always)
    mutating func popLast() -> Element {
        count &-= 1
        return (base + count).move()
    }

    @inline(never)
    mutating func grow(minimumCapacity: Int) {
        let newCapacity = Swift.max(capacity &* 2, minimumCapacity)
        let newBase = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        newBase.moveInitialize(from: base, count: count)
        if ownsMemory { base.deallocate() }
        base = newBase
        capacity = newCapacity
        ownsMemory = true
    }

    /// Moves the elements from `start` to the top into a new array.
    @inline(__always)
    mutating func popArray(from start: Int) -> [Element] {
        // reserveCapacity + append gets specialized in this module, while
        // Array(unsafeUninitializedCapacity:) allocates through an unspecialized
        // stdlib entry point that looks up generic metadata on every call.
        var result: [Element] = []
        result.reserveCapacity(count &- start)
        var i = start
        while i < count {
            result.append((base + i).move())
            i &+= 1
        }
        count = start
        return result
    }
}

extension _JSONStack where Element == UInt8 {
    @inline(__always)
    mutating func append(_ bytes: UnsafePointer<UInt8>, _ n: Int) {
        if count &+ n > capacity { grow(minimumCapacity: count &+ n) }
        (base + count).initialize(from: bytes, count: n)
        count &+= n
    }
}

@usableFromInline
package struct _JSONScanner: ~Copyable {
    /// An open container that is not the innermost one.
    @usableFromInline
    package struct Frame {
        var isObject: Bool
        var mayHaveDuplicates: Bool
        var valueStart: Int
        var keyStart: Int
        var bloom: UInt64
    }

    /// An object key waiting for its object to close, with its fingerprint.
    @usableFromInline
    package struct Key {
        var key: String
        var fingerprint: UInt64
    }

    let input: _JSONInput
    /// Object keys made by earlier parses, reused instead of building the
    /// same String again; nil when another thread holds the cache.
    let keyCache: _JSONKeyCache?
    var p: UnsafePointer<UInt8> { input.p }
    var end: Int { input.end }
    let maxDepth: Int
    var pos: Int = 0

    // The values / keys gathered so far for every open container (each
    // container owns a suffix), and the enclosing containers.
    var values: _JSONStack<JSONValue>
    var keys: _JSONStack<Key>
    var frames: _JSONStack<Frame>
    /// Scratch for strings with escapes.
    var buf: _JSONStack<UInt8>

    // Where the last string's raw (unescaped) bytes are, for key fingerprints.
    var lastStringStart: Int = 0
    var lastStringCount: Int = 0
    var lastStringEscaped: Bool = false

    init(
        base: UnsafePointer<UInt8>, count: Int, maxDepth: Int,
        values: consuming _JSONStack<JSONValue>, keys: consuming _JSONStack<Key>,
        frames: consuming _JSONStack<Frame>, buf: consuming _JSONStack<UInt8>,
        keyCache: _JSONKeyCache? = nil
    ) {
        self.keyCache = keyCache
        self.input = _JSONInput(p: base, end: count)
        self.maxDepth = maxDepth
        self.values = values
        self.keys = keys
        self.frames = frames
        self.buf = buf
    }

    // MARK: Document

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        skipWhitespace()
        if pos >= end {
            throw JSONError(message: "invalid JSON: empty input", offset: pos)
        }
        let value = try parseValueTree()
        skipWhitespace()
        if pos < end {
            throw input.errorTrailing(at: pos)
        }
        return value
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while pos < end {
            let c = p[pos]
            if c > 0x20 { return }
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 {
                pos &+= 1
            } else {
                return
            }
        }
    }

    /// Parses one value (with everything nested in it) starting at `pos`,
    /// without recursion. The innermost open container lives in locals; the
    /// enclosing ones are on `frames`.
    mutating func parseValueTree() throws(JSONError) -> JSONValue {
        var depth = 0  // open containers
        var isObject = false
        var mayHaveDuplicates = false
        var valueStart = 0
        var keyStart = 0
        var bloom: UInt64 = 0

        outer: while true {
            var value: JSONValue
            skipWhitespace()
            guard pos < end else { throw input.errorUnexpected(at: pos) }
            let c = p[pos]
            switch c {
            case 0x22:  // "
                if let keyCache, let close = input.scanPlainKey(from: pos &+ 1) {
                    // A short ASCII string without escapes: p[pos + 1 ..< close] are its bytes.
                    let start = pos &+ 1
                    let n = close &- start
                    let fp = Self.fingerprint(p + start, n, readable: end &- start)
                    value = .string(keyCache.string(p + start, n, fingerprint: fp, isKey: false))
                    pos = close &+ 1
                } else {
                    value = .string(try parseString())
                }
            case 0x7B, 0x5B:  // { [
                if depth >= maxDepth { throw input.errorTooDeep(at: pos, maxDepth: maxDepth) }
                pos &+= 1
                skipWhitespace()
                let opensObject = c == 0x7B
                if pos < end && p[pos] == (opensObject ? 0x7D : 0x5D) {
                    pos &+= 1
                    value = opensObject ? .object(JSONObject()) : .array([])
                } else {
                    if depth > 0 {
                        frames.push(
                            Frame(
                                isObject: isObject, mayHaveDuplicates: mayHaveDuplicates,
                                valueStart: valueStart, keyStart: keyStart, bloom: bloom))
                    }
                    depth &+= 1
                    isObject = opensObject
                    mayHaveDuplicates = false
                    valueStart = values.count
                    keyStart = keys.count
                    bloom = 0
                    if opensObject {
                        try parseKeyAndColon(keyStart: keyStart, bloom: &bloom, mayHaveDuplicates: &mayHaveDuplicates)
                    }
                    continue outer
                }
            case 0x74:  // t
                try expectLiteral("true")
                value = .bool(true)
            case 0x66:  // f
                try expectLiteral("false")
                value = .bool(false)
            case 0x6E:  // n
                try expectLiteral("null")
                value = .null
            case 0x2D, 0x30...0x39:
                value = .number(try parseNumber())
            default:
                throw input.errorUnexpected(at: pos)
            }

            // Attach `value` to the innermost open container; close containers as
            // long as their closing bracket follows.
            while true {
                if depth == 0 { return value }
                values.push(consume value)
                skipWhitespace()
                guard pos < end else { throw input.errorUnexpected(at: pos) }
                let c = p[pos]
                if c == 0x2C {  // ,
                    pos &+= 1
                    if isObject {
                        try parseKeyAndColon(keyStart: keyStart, bloom: &bloom, mayHaveDuplicates: &mayHaveDuplicates)
                    }
                    continue outer
                }
                if isObject {
                    guard c == 0x7D else { throw input.errorUnexpected(at: pos) }
                    value = .object(
                        makeObject(valueStart: valueStart, keyStart: keyStart, mayHaveDuplicates: mayHaveDuplicates))
                } else {
                    guard c == 0x5D else { throw input.errorUnexpected(at: pos) }
                    value = .array(values.popArray(from: valueStart))
                }
                pos &+= 1
                depth &-= 1
                if depth > 0 {
                    let f = frames.popLast()
                    isObject = f.isObject
                    mayHaveDuplicates = f.mayHaveDuplicates
                    valueStart = f.valueStart
                    keyStart = f.keyStart
                    bloom = f.bloom
                }
            }
        }
    }

    @inline(__always)
    mutating func makeObject(valueStart: Int, keyStart: Int, mayHaveDuplicates: Bool) -> JSONObject {
        let n = values.count &- valueStart
        let vs = values.base + valueStart
        let ks = keys.base + keyStart
        var pairs: [JSONObject._Pair] = []
        pairs.reserveCapacity(n)
        for i in 0..<n {
            pairs.append(JSONObject._Pair(key: (ks + i).move().key, value: (vs + i).move()))
        }
        values.count = valueStart
        keys.count = keyStart
        return JSONObject(_pairs: pairs, mayHaveDuplicates: mayHaveDuplicates)
    }

    /// Parses `"key"` and `:` for the innermost (object) container.
    @inline(__always)
    mutating func parseKeyAndColon(
        keyStart: Int, bloom: inout UInt64, mayHaveDuplicates: inout Bool
    ) throws(JSONError) {
        skipWhitespace()
        guard pos < end, p[pos] == 0x22 else { throw input.errorUnexpected(at: pos) }
        let key: String
        let fp: UInt64
        if let keyCache, let close = input.scanPlainKey(from: pos &+ 1) {
            // A short ASCII key without escapes: p[pos + 1 ..< close] are its bytes.
            let start = pos &+ 1
            let n = close &- start
            fp = Self.fingerprint(p + start, n, readable: end &- start)
            key = keyCache.string(p + start, n, fingerprint: fp, isKey: true)
            pos = close &+ 1
        } else {
            key = try parseString()
            fp =
                lastStringEscaped
                ? Self.fingerprint(buf.base, buf.count, readable: buf.count)
                : Self.fingerprint(p + lastStringStart, lastStringCount, readable: end &- lastStringStart)
        }

        // Duplicate detection for small objects (bigger ones are checked when the
        // object's index is built): fingerprint + bloom filter, string compare
        // only on a fingerprint match.
        if keys.count &- keyStart < JSONObject.indexThreshold {
            let bit: UInt64 = 1 &<< ((fp &* 0x9E37_79B9_7F4A_7C15) &>> 58)
            if bloom & bit != 0 {
                var j = keyStart
                while j < keys.count {
                    if keys.base[j].fingerprint == fp && keys.base[j].key == key {
                        mayHaveDuplicates = true
                        break
                    }
                    j &+= 1
                }
            }
            bloom |= bit
        }
        keys.push(Key(key: consume key, fingerprint: fp))

        skipWhitespace()
        guard pos < end, p[pos] == 0x3A else { throw input.errorUnexpected(at: pos) }
        pos &+= 1
    }

    /// A cheap fingerprint of a key's bytes: equal keys have equal
    /// fingerprints, and distinct keys shorter than 8 bytes distinct ones.
    /// `readable` is how many bytes may be read from `s` (at least `n`).
    @inline(__always)
    static func fingerprint(_ s: UnsafePointer<UInt8>, _ n: Int, readable: Int) -> UInt64 {
        if n >= 8 {
            let a = UnsafeRawPointer(s).loadUnaligned(as: UInt64.self)
            let b = UnsafeRawPointer(s + (n &- 8)).loadUnaligned(as: UInt64.self)
            return a ^ (b &<< 29 | b &>> 35) ^ (UInt64(truncatingIfNeeded: n) &* 0x9E37_79B9_7F4A_7C15)
        }
        if readable >= 8 {
            // One load, keeping the key's n bytes (little-endian: the low ones).
            let w = UInt64(littleEndian: UnsafeRawPointer(s).loadUnaligned(as: UInt64.self))
            let mask: UInt64 = (1 &<< (UInt64(truncatingIfNeeded: n) &* 8)) &- 1
            return (w & mask) ^ (UInt64(truncatingIfNeeded: n) &<< 56)
        }
        var a: UInt64 = 0
        var k = 0
        while k < n {
            a |= UInt64(s[k]) &<< (UInt64(truncatingIfNeeded: k) &* 8)
            k &+= 1
        }
        return a ^ (UInt64(truncatingIfNeeded: n) &<< 56)
    }

    @inline(__always)
    mutating func expectLiteral(_ lit: StaticString) throws(JSONError) {
        let n = lit.utf8CodeUnitCount
        let l = lit.utf8Start
        var k = 0
        while k < n {
            let i = pos &+ k
            guard i < end, p[i] == l[k] else { throw input.errorUnexpected(at: i) }
            k &+= 1
        }
        pos &+= n
    }

    // MARK: Strings

    /// Parses a string whose opening quote is at `pos`.
    mutating func parseString() throws(JSONError) -> String {
        let quote = pos
        let start = quote &+ 1
        var i = try input.scanPlain(from: start)
        guard i < end else { throw input.errorUnterminated(at: quote) }
        if p[i] == 0x22 {
            pos = i &+ 1
            lastStringStart = start
            lastStringCount = i &- start
            lastStringEscaped = false
            return Self.makeString(p + start, i &- start)
        }
        // p[i] is a backslash: slow path through the scratch buffer.
        buf.count = 0
        buf.append(p + start, i &- start)
        while true {
            try decodeEscape(at: &i, quote: quote)
            let j = try input.scanPlain(from: i)
            if j > i {
                buf.append(p + i, j &- i)
            }
            i = j
            guard i < end else { throw input.errorUnterminated(at: quote) }
            if p[i] == 0x22 {
                pos = i &+ 1
                lastStringEscaped = true
                return Self.makeString(buf.base, buf.count)
            }
        }
    }

    /// A String of the `n` (valid UTF-8) bytes at `s`. Strings that fit in a
    /// small string (at most 15 bytes) are built inline: for ASCII ones that
    /// skips the standard library's out-of-line decoding entry point, which
    /// costs several times more than the copy. Longer ones go through
    /// `String(decoding:as:)`.
    @inline(__always)
    static func makeString(_ s: UnsafePointer<UInt8>, _ n: Int) -> String {
        if n <= 15 {
            if n == 0 { return "" }
            return String(unsafeUninitializedCapacity: n) { out in
                out.baseAddress!.initialize(from: s, count: n)
                return n
            }
        }
        return String(decoding: UnsafeBufferPointer(start: s, count: n), as: UTF8.self)
    }

    /// Mask with the high bit set in every byte of `w` that is '"', '\\',
    /// < 0x20 or >= 0x80. Only the lowest flagged byte is exact (borrows can
    /// flag bytes above it), which is all we use.
    @inline(__always)
    static func specialMask(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let q = w ^ (ones &* 0x22)
        let b = w ^ (ones &* 0x5C)
        let hasQuote = (q &- ones) & ~q
        let hasBackslash = (b &- ones) & ~b
        let hasControl = (w &- ones &* 0x20) & ~w
        return (hasQuote | hasBackslash | hasControl | w) & high
    }

    /// Decodes the escape whose backslash is at `i` into `buf`; advances `i`.
    mutating func decodeEscape(at i: inout Int, quote: Int) throws(JSONError) {
        guard i &+ 1 < end else { throw input.errorUnterminated(at: quote) }
        let e = p[i &+ 1]
        switch e {
        case 0x22, 0x5C, 0x2F: buf.push(e)  // " \ /
        case 0x62: buf.push(0x08)  // b
        case 0x66: buf.push(0x0C)  // f
        case 0x6E: buf.push(0x0A)  // n
        case 0x72: buf.push(0x0D)  // r
        case 0x74: buf.push(0x09)  // t
        case 0x75:  // u
            guard let u = input.hex4(at: i &+ 2) else { throw input.errorBadUnicodeEscape(at: i) }
            var scalar = u
            var consumed = 6
            if u >= 0xD800 && u <= 0xDBFF {
                let j = i &+ 6
                guard j &+ 1 < end, p[j] == 0x5C, p[j &+ 1] == 0x75 else {
                    throw input.errorLoneSurrogate(u, at: i)
                }
                guard let lo = input.hex4(at: j &+ 2) else { throw input.errorBadUnicodeEscape(at: j) }
                guard lo >= 0xDC00 && lo <= 0xDFFF else { throw input.errorLoneSurrogate(u, at: i) }
                scalar = 0x10000 &+ ((u &- 0xD800) &<< 10) &+ (lo &- 0xDC00)
                consumed = 12
            } else if u >= 0xDC00 && u <= 0xDFFF {
                throw input.errorLoneSurrogate(u, at: i)
            }
            appendUTF8(scalar)
            i &+= consumed
            return
        default:
            throw input.errorBadEscape(at: i)
        }
        i &+= 2
    }

    @inline(__always)
    mutating func appendUTF8(_ s: UInt32) {
        if buf.count &+ 4 > buf.capacity { buf.grow(minimumCapacity: buf.count &+ 4) }
        let out = buf.base + buf.count
        if s < 0x80 {
            out[0] = UInt8(truncatingIfNeeded: s)
            buf.count &+= 1
        } else if s < 0x800 {
            out[0] = UInt8(truncatingIfNeeded: 0xC0 | (s &>> 6))
            out[1] = UInt8(truncatingIfNeeded: 0x80 | (s & 0x3F))
            buf.count &+= 2
        } else if s < 0x10000 {
            out[0] = UInt8(truncatingIfNeeded: 0xE0 | (s &>> 12))
            out[1] = UInt8(truncatingIfNeeded: 0x80 | ((s &>> 6) & 0x3F))
            out[2] = UInt8(truncatingIfNeeded: 0x80 | (s & 0x3F))
            buf.count &+= 3
        } else {
            out[0] = UInt8(truncatingIfNeeded: 0xF0 | (s &>> 18))
            out[1] = UInt8(truncatingIfNeeded: 0x80 | ((s &>> 12) & 0x3F))
            out[2] = UInt8(truncatingIfNeeded: 0x80 | ((s &>> 6) & 0x3F))
            out[3] = UInt8(truncatingIfNeeded: 0x80 | (s & 0x3F))
            buf.count &+= 4
        }
    }

    // MARK: Numbers

    static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    @inline(__always)
    static func isDigit(_ c: UInt8) -> Bool { c &- 0x30 < 10 }

    /// Parses a number starting at `pos` ('-' or a digit).
    @inline(__always)
    mutating func parseNumber() throws(JSONError) -> Double {
        let (value, next) = try input.scanNumber(from: pos)
        pos = next
        return value
    }
}

/// The input bytes, and everything that only reads them: the hot scanning
/// helpers and the (cold) error builders. Kept apart from the non-copyable
/// scanner so that calling them never copies the scanner.
@usableFromInline
package struct _JSONInput {
    let p: UnsafePointer<UInt8>
    let end: Int

    /// Advances over string content with no escapes, validating UTF-8 and
    /// rejecting control characters. Returns the index of the first '"' or
    /// '\\', or `end`.
    @inline(__always)
    func scanPlain(from start: Int) throws(JSONError) -> Int {
        var i = start
        while true {
            while i &+ 8 <= end {
                let w = UInt64(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self))
                let m = _JSONScanner.specialMask(w)
                if m != 0 {
                    i &+= m.trailingZeroBitCount &>> 3
                    break
                }
                i &+= 8
            }
            guard i < end else { return i }
            let c = p[i]
            if c == 0x22 || c == 0x5C { return i }
            if c < 0x20 { throw errorControl(at: i) }
            if c >= 0x80 {
                let n = utf8SequenceLength(at: i)
                if n == 0 { throw errorUTF8(at: i) }
                i &+= n
            } else {
                i &+= 1
            }
        }
    }

    /// For a string starting at `start` (after its quote) that is ASCII with
    /// no escapes or control characters and at most `_JSONKeyCache.maxCount`
    /// bytes long: the index of its closing quote. Otherwise nil, and the
    /// caller parses it the general way (which also reports any error).
    @inline(__always)
    func scanPlainKey(from start: Int) -> Int? {
        var i = start
        let limit = Swift.min(end, start &+ _JSONKeyCache.maxCount &+ 1)
        while i &+ 8 <= limit {
            let w = UInt64(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self))
            let m = _JSONScanner.specialMask(w)
            if m != 0 {
                i &+= m.trailingZeroBitCount &>> 3
                return p[i] == 0x22 ? i : nil
            }
            i &+= 8
        }
        while i < limit {
            let c = p[i]
            if c == 0x22 { return i }
            if c == 0x5C || c < 0x20 || c >= 0x80 { return nil }
            i &+= 1
        }
        return nil
    }

    /// Length of the well-formed UTF-8 sequence starting at `i` (whose first
    /// byte is >= 0x80), or 0 if it is ill-formed (Unicode Table 3-7).
    @inline(__always)
    func utf8SequenceLength(at i: Int) -> Int {
        let c0 = p[i]
        if c0 < 0xC2 { return 0 }  // continuation byte, or overlong 2-byte lead
        if c0 < 0xE0 {
            guard i &+ 1 < end, p[i &+ 1] & 0xC0 == 0x80 else { return 0 }
            return 2
        }
        if c0 < 0xF0 {
            guard i &+ 2 < end else { return 0 }
            let c1 = p[i &+ 1]
            let lo: UInt8 = c0 == 0xE0 ? 0xA0 : 0x80  // overlong
            let hi: UInt8 = c0 == 0xED ? 0x9F : 0xBF  // surrogates
            guard c1 >= lo, c1 <= hi, p[i &+ 2] & 0xC0 == 0x80 else { return 0 }
            return 3
        }
        if c0 < 0xF5 {
            guard i &+ 3 < end else { return 0 }
            let c1 = p[i &+ 1]
            let lo: UInt8 = c0 == 0xF0 ? 0x90 : 0x80  // overlong
            let hi: UInt8 = c0 == 0xF4 ? 0x8F : 0xBF  // > U+10FFFF
            guard c1 >= lo, c1 <= hi, p[i &+ 2] & 0xC0 == 0x80, p[i &+ 3] & 0xC0 == 0x80 else { return 0 }
            return 4
        }
        return 0
    }

    @inline(__always)
    func hex4(at k: Int) -> UInt32? {
        guard k &+ 4 <= end else { return nil }
        var v: UInt32 = 0
        for j in 0..<4 {
            let c = p[k &+ j]
            let d: UInt8
            if c &- 0x30 < 10 {
                d = c &- 0x30
            } else if (c | 0x20) &- 0x61 < 6 {
                d = (c | 0x20) &- 0x61 &+ 10
            } else {
                return nil
            }
            v = v &<< 4 | UInt32(d)
        }
        return v
    }

    /// The number starting at `start` ('-' or a digit) and the index just past it. `JSONCursor`
    /// reads numbers with it too, so both read every number alike.
    @inline(__always)
    func scanNumber(from start: Int) throws(JSONError) -> (Double, Int) {
        var i = start
        let negative = p[i] == 0x2D
        if negative {
            i &+= 1
            guard i < end, _JSONScanner.isDigit(p[i]) else { throw errorNumber("expected digit after '-'", at: i) }
        }

        var mantissa: UInt64 = 0
        var significant = 0  // significant digits taken into `mantissa`
        var truncated = false  // more than 19 significant digits
        var exponent = 0

        if p[i] == 0x30 {
            i &+= 1
            if i < end && _JSONScanner.isDigit(p[i]) {
                throw errorNumber("leading zero in number", at: i &- 1)
            }
        } else {
            repeat {
                let d = UInt64(p[i] &- 0x30)
                if significant < 19 {
                    mantissa = mantissa &* 10 &+ d
                    significant &+= 1
                } else {
                    truncated = true
                }
                i &+= 1
            } while i < end && _JSONScanner.isDigit(p[i])
        }

        if i < end && p[i] == 0x2E {  // .
            i &+= 1
            guard i < end, _JSONScanner.isDigit(p[i]) else {
                throw errorNumber("expected digit after decimal point", at: i)
            }
            repeat {
                let d = UInt64(p[i] &- 0x30)
                if significant < 19 {
                    mantissa = mantissa &* 10 &+ d
                    if mantissa != 0 { significant &+= 1 }
                    exponent &-= 1
                } else {
                    truncated = true
                }
                i &+= 1
            } while i < end && _JSONScanner.isDigit(p[i])
        }

        if i < end && (p[i] | 0x20) == 0x65 {  // e E
            i &+= 1
            var expNegative = false
            if i < end && (p[i] == 0x2B || p[i] == 0x2D) {
                expNegative = p[i] == 0x2D
                i &+= 1
            }
            guard i < end, _JSONScanner.isDigit(p[i]) else {
                throw errorNumber("expected digit in exponent", at: i)
            }
            var e = 0
            repeat {
                if e < 1_000_000 { e = e &* 10 &+ Int(p[i] &- 0x30) }
                i &+= 1
            } while i < end && _JSONScanner.isDigit(p[i])
            exponent &+= expNegative ? -e : e
        }

        if !truncated {
            if mantissa == 0 { return (negative ? -0.0 : 0.0, i) }
            // Clinger's fast path: mantissa and 10^|e| are exact, one rounding.
            if mantissa <= 1 << 53 && exponent >= -22 && exponent <= 22 {
                var d = Double(mantissa)
                if exponent < 0 {
                    d /= _JSONScanner.powersOfTen[-exponent]
                } else {
                    d *= _JSONScanner.powersOfTen[exponent]
                }
                return (negative ? -d : d, i)
            }
        }
        return (try slowNumber(from: start, to: i), i)
    }

    @inline(never)
    func slowNumber(from start: Int, to stop: Int) throws(JSONError) -> Double {
        let text = String(decoding: UnsafeBufferPointer(start: p + start, count: stop &- start), as: UTF8.self)
        guard let d = Double(text), d.isFinite else {
            throw errorNumber("number out of range", at: start)
        }
        return d
    }

    // MARK: Errors (cold)

    /// "column N" (1-based byte column) or, when the input has a newline
    /// before `offset`, "line L, column N".
    @inline(never)
    func location(_ offset: Int) -> String {
        var k = min(offset, end) &- 1
        while k >= 0 && p[k] != 0x0A { k &-= 1 }
        if k < 0 { return "column \(offset + 1)" }
        let lineStart = k + 1
        var line = 1
        for j in 0..<lineStart where p[j] == 0x0A { line += 1 }
        return "line \(line), column \(offset - lineStart + 1)"
    }

    @inline(never)
    func errorUTF8(at i: Int) -> JSONError {
        JSONError(message: "invalid UTF-8 at byte \(i)", offset: i)
    }

    static func hex(_ v: UInt32, digits: Int) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - s.count)) + s
    }

    /// Describes the character at `i` for a message: 'x' for printable ASCII,
    /// U+XXXX otherwise; nil when the bytes there are not valid UTF-8.
    func describeCharacter(at i: Int) -> String? {
        let c = p[i]
        if c >= 0x21 && c <= 0x7E { return "'\(Character(Unicode.Scalar(c)))'" }
        if c < 0x80 { return "U+" + Self.hex(UInt32(c), digits: 4) }
        let n = utf8SequenceLength(at: i)
        if n == 0 { return nil }
        var v = UInt32(c) & (0xFF &>> (n &+ 1))
        for j in 1..<n { v = v &<< 6 | UInt32(p[i &+ j] & 0x3F) }
        return "U+" + Self.hex(v, digits: 4)
    }

    @inline(never)
    func errorUnexpected(at i: Int) -> JSONError {
        if i >= end {
            return JSONError(message: "invalid JSON: unexpected end of input at \(location(end))", offset: end)
        }
        guard let what = describeCharacter(at: i) else { return errorUTF8(at: i) }
        return JSONError(message: "invalid JSON: unexpected character \(what) at \(location(i))", offset: i)
    }

    @inline(never)
    func errorTrailing(at i: Int) -> JSONError {
        if describeCharacter(at: i) == nil { return errorUTF8(at: i) }
        return JSONError(message: "invalid JSON: trailing characters at \(location(i))", offset: i)
    }

    @inline(never)
    func errorTooDeep(at i: Int, maxDepth: Int) -> JSONError {
        JSONError(message: "invalid JSON: nesting deeper than \(maxDepth) levels", offset: i)
    }

    @inline(never)
    func errorUnterminated(at quote: Int) -> JSONError {
        JSONError(message: "invalid JSON: unterminated string at \(location(quote))", offset: quote)
    }

    @inline(never)
    func errorControl(at i: Int) -> JSONError {
        JSONError(
            message:
                "invalid JSON: unescaped control character U+\(Self.hex(UInt32(p[i]), digits: 4)) in string at \(location(i))",
            offset: i)
    }

    @inline(never)
    func errorBadEscape(at i: Int) -> JSONError {
        // i is the backslash; i + 1 < end here.
        let c = p[i &+ 1]
        if c >= 0x80 && utf8SequenceLength(at: i &+ 1) == 0 { return errorUTF8(at: i &+ 1) }
        let what = (c >= 0x21 && c <= 0x7E) ? " '\\\(Character(Unicode.Scalar(c)))'" : ""
        return JSONError(message: "invalid JSON: invalid escape\(what) at \(location(i))", offset: i)
    }

    @inline(never)
    func errorBadUnicodeEscape(at i: Int) -> JSONError {
        JSONError(message: "invalid JSON: invalid \\u escape at \(location(i))", offset: i)
    }

    @inline(never)
    func errorLoneSurrogate(_ u: UInt32, at i: Int) -> JSONError {
        JSONError(
            message: "invalid JSON: lone surrogate \\u\(Self.hex(u, digits: 4)) at \(location(i))", offset: i)
    }

    @inline(never)
    func errorNumber(_ what: String, at i: Int) -> JSONError {
        if i < end && p[i] >= 0x80 && utf8SequenceLength(at: i) == 0 { return errorUTF8(at: i) }
        return JSONError(message: "invalid JSON: \(what) at \(location(i))", offset: i)
    }
}

// MARK: - Key cache

/// Object keys and short string values recently made by the parser, so that
/// the same string in the next document is a table lookup instead of a new
/// String (JSON Lines input repeats the same few dozen keys, and many values,
/// such as app ids and handles, on every line).
///
/// Two tables (keys; values), each two-way set associative, of ASCII
/// strings of 0...`maxCount` bytes, indexed by the scanner's fingerprint. An entry matches when its length and
/// fingerprint are equal and (for keys of 8 bytes or more, whose fingerprint
/// is not exact) its bytes are equal too. There is one cache per thread
/// (about 110 KB, freed when the thread ends).
@usableFromInline
package struct _JSONKeyCache {
    /// Slots 0..<512 hold keys, 512..<1536 values.
    static let slots = 1536
    static let maxCount = 32

    struct Entry {
        var fingerprint: UInt64
        var count: Int  // 0: empty
        var string: String
    }

    let entries: UnsafeMutablePointer<Entry>
    /// `maxCount` bytes per entry: the key's bytes.
    let bytes: UnsafeMutableRawPointer

    /// One cache per thread that parses: a string a parse makes is shared only with later parses
    /// on the same thread. (One cache for the process made, say, "com.example.calendar" one object
    /// for every thread, whose reference count then went back and forth between the cores.)
    private static let threadKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            let entries = pointer.assumingMemoryBound(to: Entry.self)
            entries.deinitialize(count: _JSONKeyCache.slots)
            UnsafeMutableRawPointer(entries).deallocate()
        }
        return key
    }()

    private static func allocate() -> UnsafeMutablePointer<Entry> {
        // One block: the entries, then the bytes.
        let entries = UnsafeMutableRawPointer.allocate(
            byteCount: slots * (MemoryLayout<Entry>.stride + maxCount), alignment: MemoryLayout<Entry>.alignment
        ).bindMemory(to: Entry.self, capacity: slots)
        entries.initialize(repeating: Entry(fingerprint: 0, count: 0, string: ""), count: slots)
        return entries
    }

    private init(_ entries: UnsafeMutablePointer<Entry>) {
        self.entries = entries
        self.bytes = UnsafeMutableRawPointer(entries + _JSONKeyCache.slots)
    }

    /// This thread's cache (made on its first parse).
    @inline(__always)
    static func take() -> _JSONKeyCache? {
        if let pointer = pthread_getspecific(threadKey) {
            return _JSONKeyCache(pointer.assumingMemoryBound(to: Entry.self))
        }
        let entries = allocate()
        guard pthread_setspecific(threadKey, entries) == 0 else {
            entries.deinitialize(count: slots)
            UnsafeMutableRawPointer(entries).deallocate()
            return nil
        }
        return _JSONKeyCache(entries)
    }

    @inline(__always)
    static func putBack(_ cache: _JSONKeyCache?) {}

    /// The string whose `n` bytes (ASCII, 0...maxCount of them) are at `s`.
    @inline(__always)
    func string(_ s: UnsafePointer<UInt8>, _ n: Int, fingerprint fp: UInt64, isKey: Bool) -> String {
        // Two-way set associative: a string may sit in either slot of its pair, so
        // two frequent ones that hash alike do not keep evicting each other.
        let h = fp &* 0x9E37_79B9_7F4A_7C15
        let first =
            isKey
            ? Int(truncatingIfNeeded: h &>> 55) & ~1  // 0..<512, even
            : 512 &+ Int(truncatingIfNeeded: h &>> 54) & ~1  // 512..<1536, even
        if let hit = lookup(first, s, n, fp) { return hit }
        if let hit = lookup(first | 1, s, n, fp) { return hit }
        // Miss: fill the first slot if it is free, else the second.
        let slot = entries[first].count == 0 ? first : first | 1
        let string = _JSONScanner.makeString(s, n)
        let e = entries + slot
        (bytes + slot &* _JSONKeyCache.maxCount).copyMemory(from: s, byteCount: n)
        e.pointee.fingerprint = fp
        e.pointee.count = n
        e.pointee.string = string
        return string
    }

    @inline(__always)
    private func lookup(_ slot: Int, _ s: UnsafePointer<UInt8>, _ n: Int, _ fp: UInt64) -> String? {
        let e = entries + slot
        if e.pointee.count == n && e.pointee.fingerprint == fp
            && (n < 8 || Self.sameBytes(bytes + slot &* _JSONKeyCache.maxCount, s, n))
        {
            return e.pointee.string
        }
        return nil
    }

    /// Whether the `n` (8...maxCount) bytes at `a` and `b` are equal.
    @inline(__always)
    static func sameBytes(_ a: UnsafeMutableRawPointer, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        let b = UnsafeRawPointer(b)
        var k = 0
        while k &+ 8 < n {
            if a.loadUnaligned(fromByteOffset: k, as: UInt64.self)
                != b.loadUnaligned(fromByteOffset: k, as: UInt64.self)
            {
                return false
            }
            k &+= 8
        }
        // The last 8 bytes (overlapping the previous word when n is not a multiple of 8).
        return a.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
            == b.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
    }
}
