/// A JSON object kept as the text it was read from until its members are asked for. A
/// notification's payload is read for `aps` as it is decoded, and by a rule only a member or two
/// at a time: most payloads are never needed as trees, so they are not built as trees.
package struct DeferredJSONObject: Sendable {
    private enum Storage: Sendable {
        case object(JSONObject)
        /// The text of one object whose keys all differ and have no escapes, read whole by a
        /// `JSONCursor` (so the parser accepts it), and how many members it has. `othersFrom`:
        /// where the members after an `aps` that comes first begin (0: read from the start).
        case text([UInt8], count: Int, othersFrom: Int)
    }

    private var storage: Storage

    package init(_ object: JSONObject = JSONObject()) {
        storage = .object(object)
    }

    /// `text` is one JSON object that a `JSONCursor` read whole (`readObject`), with `count`
    /// members, none of whose keys (at any depth) has an escape. `afterFirstAPS`: when its first
    /// member is `aps`, the offset just past that member's value, where a look-up of any other
    /// member starts (a payload's `aps` comes first, and is most of it).
    package init(checkedText text: [UInt8], count: Int, afterFirstAPS: Int = 0) {
        storage = .text(text, count: count, othersFrom: afterFirstAPS)
    }

    /// The object, parsed from its text if it was kept as text.
    package var object: JSONObject {
        switch storage {
        case .object(let object): return object
        case .text(let text, _, _):
            // The cursor read the text whole, so it parses; an empty object is only a guard.
            guard case .object(let object)? = try? JSONParser.parse(text) else { return JSONObject() }
            return object
        }
    }

    /// How many members the object has.
    package var count: Int {
        switch storage {
        case .object(let object): object.count
        case .text(_, let count, _): count
        }
    }

    /// Whether the object is still text (then `member(exactly:)` reads one member without the rest).
    package var isText: Bool {
        if case .text = storage { return true }
        return false
    }

    /// The value of the member whose key has exactly the bytes of `key` (nil when there is none),
    /// parsing that member alone when the object is still text.
    package func member(exactly key: UnsafeRawBufferPointer) -> JSONValue? {
        switch storage {
        case .object(let object):
            for (name, value) in object where name.utf8.elementsEqual(key) { return value }
            return nil
        case .text(let text, _, let othersFrom):
            return text.withUnsafeBytes { bytes -> JSONValue? in
                var cursor = JSONCursor(bytes)
                do {
                    var first = true
                    // Keys all differ: a key other than `aps` is not the first member's.
                    if othersFrom > 0 && !(key.count == 3 && key.elementsEqual("aps".utf8)) {
                        cursor.move(to: othersFrom)
                        first = false
                    } else {
                        try cursor.beginObject()
                    }
                    while let name = try cursor.nextKey(&first) {
                        guard name.count == key.count, name.elementsEqual(key) else {
                            try cursor.skipValue()
                            continue
                        }
                        return try cursor.value()
                    }
                } catch {
                    // The text was read whole once: it reads again. Should it not, the tree decides.
                    return DeferredJSONObject(object).member(exactly: key)
                }
                return nil
            }
        }
    }
}

extension DeferredJSONObject: Hashable {
    package static func == (a: DeferredJSONObject, b: DeferredJSONObject) -> Bool { a.object == b.object }

    package func hash(into hasher: inout Hasher) { hasher.combine(object) }
}
