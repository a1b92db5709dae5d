#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads one JSON text piece by piece, for a decoder that knows the shape it expects, without
/// building a tree. What it hands out is what `JSONParser` makes of the same bytes (it scans strings
/// and numbers with the parser's own routines); whatever it cannot vouch for — any error, a key
/// with an escape, nesting deeper than `maxDepth`, a value of another type than asked — ends the
/// read with `Unsure`, and the caller parses the text with `JSONParser`, which decides (and words
/// any error). A decoder on a cursor is therefore a fast path that is never the only path.
package struct JSONCursor {
    /// The cursor gave up: parse the text instead.
    package struct Unsure: Error {
        package init() {}
    }

    /// Containers deeper than this inside a skipped value give up (the parser allows 512).
    package static let maxDepth = 64

    let input: _JSONInput
    let keyCache: _JSONKeyCache?
    /// The next byte to read.
    package private(set) var position = 0

    /// `bytes` must stay valid while the cursor is used.
    package init(_ bytes: UnsafeRawBufferPointer) {
        // An empty text has no base address: any pointer does, as nothing is read from it.
        let base = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
        input = _JSONInput(p: base.assumingMemoryBound(to: UInt8.self), end: bytes.count)
        keyCache = _JSONKeyCache.take()
    }

    var p: UnsafePointer<UInt8> { input.p }
    var end: Int { input.end }

    @inline(__always)
    mutating func skipWhitespace() {
        while position < end {
            let c = p[position]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            position &+= 1
        }
    }

    /// The next byte that is not whitespace, left unread.
    @inline(__always)
    package mutating func peek() throws(Unsure) -> UInt8 {
        skipWhitespace()
        guard position < end else { throw Unsure() }
        return p[position]
    }

    @inline(__always)
    mutating func expect(_ byte: UInt8) throws(Unsure) {
        guard try peek() == byte else { throw Unsure() }
        position &+= 1
    }

    /// Whether nothing but whitespace is left.
    package mutating func isAtEnd() -> Bool {
        skipWhitespace()
        return position == end
    }

    /// Goes to `position`, a place this cursor's text was read past before (a member's end).
    package mutating func move(to position: Int) {
        self.position = position
    }

    /// The bytes from `start` up to the position, copied.
    package func bytes(from start: Int) -> [UInt8] {
        Array(UnsafeBufferPointer(start: p + start, count: position &- start))
    }

    /// The position of the next value's first byte (after whitespace).
    package mutating func valueStart() throws(Unsure) -> Int {
        _ = try peek()
        return position
    }

    // MARK: Containers

    /// Reads the `{` of an object.
    package mutating func beginObject() throws(Unsure) { try expect(0x7B) }

    /// Reads the `[` of an array.
    package mutating func beginArray() throws(Unsure) { try expect(0x5B) }

    /// The next member's key (its bytes, which stay valid with the text) with its `:` read, or nil
    /// once the object's `}` is read. `first` is true until the first call of an object.
    @inline(__always)
    package mutating func nextKey(_ first: inout Bool) throws(Unsure) -> UnsafeBufferPointer<UInt8>? {
        var c = try peek()
        if first {
            first = false
            if c == 0x7D {
                position &+= 1
                return nil
            }
        } else {
            position &+= 1
            if c == 0x7D { return nil }
            guard c == 0x2C else { throw Unsure() }
            c = try peek()
        }
        guard c == 0x22 else { throw Unsure() }
        let start = position &+ 1
        let close: Int
        do { close = try input.scanPlain(from: start) } catch { throw Unsure() }
        // A key with an escape is compared as the parser decodes it: let the parser read it.
        guard close < end, p[close] == 0x22 else { throw Unsure() }
        position = close &+ 1
        try expect(0x3A)
        return UnsafeBufferPointer(start: p + start, count: close &- start)
    }

    /// Reads an object whose members' keys must all differ (as a key seen twice could hide a
    /// member the parser would keep), calling `member` for each to read its value; returns how many
    /// members it has. More than `maxMembers` members give up.
    @inline(__always)
    package mutating func readObject(
        maxMembers: Int = 16,
        _ member: (_ key: UnsafeBufferPointer<UInt8>, _ cursor: inout JSONCursor) throws(Unsure) -> Void
    ) throws(Unsure) -> Int {
        try beginObject()
        return try withUnsafeTemporaryAllocation(of: UnsafeBufferPointer<UInt8>.self, capacity: maxMembers) {
            (keys) throws(Unsure) -> Int in
            var count = 0
            var first = true
            while let key = try nextKey(&first) {
                guard count < maxMembers else { throw Unsure() }
                for i in 0..<count where keys[i].count == key.count {
                    if memcmp(keys[i].baseAddress!, key.baseAddress!, key.count) == 0 { throw Unsure() }
                }
                keys[count] = key
                count &+= 1
                try member(key, &self)
            }
            return count
        }
    }

    /// Whether the array has another element (reading the `,` before it), or false once its `]`
    /// is read. `first` is true until the first call of an array.
    @inline(__always)
    package mutating func nextElement(_ first: inout Bool) throws(Unsure) -> Bool {
        let c = try peek()
        if first {
            first = false
            if c == 0x5D {
                position &+= 1
                return false
            }
            return true
        }
        position &+= 1
        if c == 0x5D { return false }
        guard c == 0x2C else { throw Unsure() }
        return true
    }

    // MARK: Scalars

    /// Reads `null` if it comes next.
    package mutating func readNull() throws(Unsure) -> Bool {
        guard try peek() == 0x6E else { return false }
        try literal("null")
        return true
    }

    /// A string value.
    package mutating func string() throws(Unsure) -> String {
        try expect(0x22)
        let start = position
        if let keyCache, let close = input.scanPlainKey(from: start) {
            // Short ASCII without escapes: made once per thread, as the parser does.
            position = close &+ 1
            let n = close &- start
            let fp = _JSONScanner.fingerprint(p + start, n, readable: end &- start)
            return keyCache.string(p + start, n, fingerprint: fp, isKey: false)
        }
        let close: Int
        do { close = try input.scanPlain(from: start) } catch { throw Unsure() }
        guard close < end else { throw Unsure() }
        if p[close] == 0x22 {
            position = close &+ 1
            return _JSONScanner.makeString(p + start, close &- start)
        }
        // Escapes: the parser decodes the string token on its own, exactly as it would in place.
        position = start &- 1
        let token = try stringToken()
        guard case .string(let s) = token else { throw Unsure() }
        return s
    }

    /// A string value without escapes, as its UTF-8 bytes (valid while the text is).
    package mutating func plainString() throws(Unsure) -> UnsafeBufferPointer<UInt8> {
        try expect(0x22)
        let start = position
        let close: Int
        do { close = try input.scanPlain(from: start) } catch { throw Unsure() }
        guard close < end, p[close] == 0x22 else { throw Unsure() }
        position = close &+ 1
        return UnsafeBufferPointer(start: p + start, count: close &- start)
    }

    /// A number value.
    package mutating func number() throws(Unsure) -> Double {
        let c = try peek()
        guard c == 0x2D || _JSONScanner.isDigit(c) else { throw Unsure() }
        do {
            let (value, next) = try input.scanNumber(from: position)
            position = next
            return value
        } catch {
            throw Unsure()
        }
    }

    /// A `true` or `false` value.
    package mutating func bool() throws(Unsure) -> Bool {
        switch try peek() {
        case 0x74:
            try literal("true")
            return true
        case 0x66:
            try literal("false")
            return false
        default: throw Unsure()
        }
    }

    /// The JSON value there is, built as the parser builds it (only for what a decoder does not
    /// expect, such as a number where a string may also be).
    package mutating func value() throws(Unsure) -> JSONValue {
        let start = try valueStart()
        try skipValue()
        do {
            return try JSONParser.parse(UnsafeRawBufferPointer(start: p + start, count: position &- start))
        } catch {
            throw Unsure()
        }
    }

    // MARK: Skipping

    /// Reads past the next value, checking it as the parser would.
    package mutating func skipValue() throws(Unsure) {
        try skipValue(depth: 0)
    }

    private mutating func skipValue(depth: Int) throws(Unsure) {
        switch try peek() {
        case 0x22:
            let start = position &+ 1
            let close: Int
            do { close = try input.scanPlain(from: start) } catch { throw Unsure() }
            guard close < end else { throw Unsure() }
            if p[close] == 0x22 {
                position = close &+ 1
            } else {
                _ = try stringToken()
            }
        case 0x7B:
            guard depth < Self.maxDepth else { throw Unsure() }
            position &+= 1
            var first = true
            while try nextKey(&first) != nil { try skipValue(depth: depth &+ 1) }
        case 0x5B:
            guard depth < Self.maxDepth else { throw Unsure() }
            position &+= 1
            var first = true
            while try nextElement(&first) { try skipValue(depth: depth &+ 1) }
        case 0x74: try literal("true")
        case 0x66: try literal("false")
        case 0x6E: try literal("null")
        default: _ = try number()
        }
    }

    @inline(__always)
    mutating func literal(_ text: StaticString) throws(Unsure) {
        let n = text.utf8CodeUnitCount
        guard end &- position >= n, memcmp(p + position, text.utf8Start, n) == 0 else { throw Unsure() }
        position &+= n
    }

    /// The string token at the position (its opening quote), which has escapes, parsed on its
    /// own by the parser; the position moves past it.
    private mutating func stringToken() throws(Unsure) -> JSONValue {
        let quote = position
        var i = quote &+ 1
        // Its end: every backslash takes the byte after it (a `\uXXXX` has no quote among its digits).
        while true {
            do { i = try input.scanPlain(from: i) } catch { throw Unsure() }
            guard i < end else { throw Unsure() }
            if p[i] == 0x22 { break }
            i &+= 2
            guard i < end else { throw Unsure() }
        }
        position = i &+ 1
        do {
            return try JSONParser.parse(UnsafeRawBufferPointer(start: p + quote, count: position &- quote))
        } catch {
            throw Unsure()
        }
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether these bytes are `text`'s (ASCII) bytes. Inlined where it is used (the readers
    /// compare every key they meet with a few names), and compared byte by byte: a key is short,
    /// and a call to `memcmp` cost more than the comparison.
    @inlinable @inline(__always)
    package func equals(_ text: StaticString) -> Bool {
        let n = text.utf8CodeUnitCount
        guard count == n else { return false }
        let other = text.utf8Start
        var i = 0
        while i < n {
            guard self[i] == other[i] else { return false }
            i &+= 1
        }
        return true
    }
}
