// A JSON document model. No Foundation.

/// A parsed (or constructed) JSON value.
package enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

// MARK: - Conveniences

extension JSONValue {
    /// The member `key` when `self` is an object that has it; nil otherwise.
    @inlinable
    package subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    @inlinable
    package var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    @inlinable
    package var doubleValue: Double? {
        if case .number(let d) = self { return d }
        return nil
    }

    /// The number as an `Int`, only when it is integral and fits (`-0` gives `0`).
    @inlinable
    package var intValue: Int? {
        // Not `Int(exactly:)`: that calls libm's trunc, and this module must not
        // need libm at link time.
        guard case .number(let d) = self,
            d >= -9_223_372_036_854_775_808.0, d < 9_223_372_036_854_775_808.0
        else { return nil }
        let i = Int(d)  // truncates; in range here
        return Double(i) == d ? i : nil
    }

    @inlinable
    package var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    @inlinable
    package var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    @inlinable
    package var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    @inlinable
    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// "null", "boolean", "number", "string", "array" or "object", for error messages.
    package var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

// MARK: - JSONObject

/// An object that keeps its keys in input order (duplicate keys: the last wins,
/// at the first key's position).
///
/// Storage is one contiguous array of (key, value) pairs. Lookup is a linear
/// scan while the object has at most `JSONObject.indexThreshold` (16) keys,
/// and goes through a `[String: Int]` index above that.
///
/// Equality is order-insensitive (same set of keys, equal values), as JSON
/// objects are unordered; hashing is consistent with that.
package struct JSONObject: Sendable {
    package typealias Element = (key: String, value: JSONValue)

    /// A member. (A struct, not a tuple: arrays of tuples go through slow
    /// generic runtime paths for metadata and destruction.)
    @usableFromInline
    package struct _Pair: Sendable {
        @usableFromInline package var key: String
        @usableFromInline package var value: JSONValue
        @inlinable init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    @usableFromInline package var _pairs: [_Pair]
    /// key -> position; non-nil exactly when `_pairs.count > indexThreshold`.
    @usableFromInline package var _index: [String: Int]?

    /// Objects with more keys than this get a dictionary index.
    @usableFromInline package static var indexThreshold: Int { 16 }

    @inlinable
    package init() {
        _pairs = []
        _index = nil
    }

    /// Builds an object from pairs in order; for a repeated key the last value
    /// wins, kept at the position where the key first appeared.
    package init(_ pairs: [(String, JSONValue)]) {
        self.init(_pairs: pairs.map { _Pair(key: $0.0, value: $0.1) }, mayHaveDuplicates: true)
    }

    /// When `mayHaveDuplicates` is false the caller guarantees that there are
    /// no duplicate keys *if* `pairs.count <= indexThreshold` (bigger objects
    /// are always checked while their index is built).
    package init(_pairs pairs: [_Pair], mayHaveDuplicates: Bool) {
        let n = pairs.count
        if n <= JSONObject.indexThreshold {
            if !mayHaveDuplicates || !JSONObject._hasDuplicatesSmall(pairs) {
                _pairs = pairs
                _index = nil
                return
            }
        } else {
            var index = [String: Int](minimumCapacity: n)
            var dup = false
            for i in 0..<n where index.updateValue(i, forKey: pairs[i].key) != nil {
                dup = true
                break
            }
            if !dup {
                _pairs = pairs
                _index = index
                return
            }
        }
        // Slow path: duplicates present. Last value wins, at the first position.
        var out: [_Pair] = []
        var position = [String: Int](minimumCapacity: n)
        out.reserveCapacity(n)
        for pair in pairs {
            if let j = position[pair.key] {
                out[j].value = pair.value
            } else {
                position[pair.key] = out.count
                out.append(pair)
            }
        }
        _pairs = out
        _index = out.count > JSONObject.indexThreshold ? position : nil
    }

    package static func _hasDuplicatesSmall(_ pairs: [_Pair]) -> Bool {
        let n = pairs.count
        if n < 2 { return false }
        for i in 1..<n {
            let k = pairs[i].key
            for j in 0..<i where pairs[j].key == k { return true }
        }
        return false
    }

    @inlinable
    package func _position(of key: String) -> Int? {
        if let index = _index { return index[key] }
        return _pairs.withUnsafeBufferPointer { buf -> Int? in
            var i = 0
            let n = buf.count
            while i < n {
                if buf[i].key == key { return i }
                i &+= 1
            }
            return nil
        }
    }

    /// The value for `key`; assigning nil removes the key.
    @inlinable
    package subscript(key: String) -> JSONValue? {
        get {
            guard let i = _position(of: key) else { return nil }
            return _pairs[i].value
        }
        set {
            if let newValue {
                if let i = _position(of: key) {
                    _pairs[i].value = newValue
                } else {
                    _append(key, newValue)
                }
            } else if let i = _position(of: key) {
                _remove(at: i)
            }
        }
    }

    /// The value for `key`, like the subscript, but faster for the decoders'
    /// literal keys: a member whose key differs in UTF-8 length is skipped
    /// without a string comparison.
    ///
    /// Only for keys that are ASCII and contain none of `K`, `;` and `` ` ``.
    /// `String` equality is canonical equivalence, and the only non-ASCII
    /// characters canonically equivalent to ASCII ones are U+212A KELVIN SIGN
    /// (K), U+037E GREEK QUESTION MARK (;) and U+1FEF GREEK VARIA (`); so a
    /// string equal to such a key has exactly the key's bytes, and in
    /// particular its UTF-8 length. (JSONTests checks this against the
    /// standard library's tables.)
    @inlinable @inline(__always)
    package subscript(plainKey key: String) -> JSONValue? {
        assert(JSONObject._isPlainKey(key), "not a plain key: \(key)")
        if let index = _index {
            guard let i = index[key] else { return nil }
            return _pairs[i].value
        }
        let n = key.utf8.count
        return _pairs.withUnsafeBufferPointer { buf -> JSONValue? in
            var i = 0
            let count = buf.count
            while i < count {
                if buf[i].key.utf8.count == n && buf[i].key == key { return buf[i].value }
                i &+= 1
            }
            return nil
        }
    }

    /// Whether `key` may be used with `subscript(plainKey:)`.
    @usableFromInline
    package static func _isPlainKey(_ key: String) -> Bool {
        key.utf8.allSatisfy { $0 < 0x80 && $0 != 0x4B && $0 != 0x3B && $0 != 0x60 }
    }

    @usableFromInline
    package mutating func _append(_ key: String, _ value: JSONValue) {
        _pairs.append(_Pair(key: key, value: value))
        if _index != nil {
            _index![key] = _pairs.count - 1
        } else if _pairs.count > JSONObject.indexThreshold {
            _rebuildIndex()
        }
    }

    @usableFromInline
    package mutating func _remove(at i: Int) {
        _pairs.remove(at: i)
        if _pairs.count > JSONObject.indexThreshold {
            _rebuildIndex()
        } else {
            _index = nil
        }
    }

    package mutating func _rebuildIndex() {
        var index = [String: Int](minimumCapacity: _pairs.count)
        for (i, pair) in _pairs.enumerated() { index[pair.key] = i }
        _index = index
    }

    /// Keys in order.
    @inlinable package var keys: [String] { _pairs.map(\.key) }
    /// Values in key order.
    @inlinable package var values: [JSONValue] { _pairs.map(\.value) }
    @inlinable package var count: Int { _pairs.count }
    @inlinable package var isEmpty: Bool { _pairs.isEmpty }
}

extension JSONObject: Sequence {
    /// Iterates `(key:value:)` pairs in order.
    package struct Iterator: IteratorProtocol {
        @usableFromInline package var _base: IndexingIterator<[_Pair]>

        @inlinable
        package init(_base: IndexingIterator<[_Pair]>) { self._base = _base }

        @inlinable
        package mutating func next() -> (key: String, value: JSONValue)? {
            guard let pair = _base.next() else { return nil }
            return (key: pair.key, value: pair.value)
        }
    }

    @inlinable
    package func makeIterator() -> Iterator { Iterator(_base: _pairs.makeIterator()) }

    @inlinable
    package var underestimatedCount: Int { _pairs.count }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    package init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }
}

extension JSONObject: Hashable {
    package static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        let n = lhs._pairs.count
        guard n == rhs._pairs.count else { return false }
        // Same order (the common case): compare pairwise.
        var i = 0
        while i < n {
            let l = lhs._pairs[i]
            let r = rhs._pairs[i]
            if l.key != r.key { break }
            if l.value != r.value { return false }
            i += 1
        }
        if i == n { return true }
        // Different order (or different keys): keys are unique, so checking that
        // every remaining lhs member is in rhs with an equal value is enough.
        while i < n {
            let l = lhs._pairs[i]
            guard let v = rhs[l.key], v == l.value else { return false }
            i += 1
        }
        return true
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(_pairs.count)
        // Order-insensitive: combine per-member hashes commutatively.
        var acc: UInt = 0
        for pair in _pairs {
            var h = Hasher()
            h.combine(pair.key)
            h.combine(pair.value)
            acc &+= UInt(bitPattern: h.finalize())
        }
        hasher.combine(acc)
    }
}
