/// A JSON object kept as the text it was read from until its members are asked for. A
/// notification's payload is read for `aps` as it is decoded, and by a rule only when the rule
/// looks into it: most payloads are never needed as trees, so they are not built as trees.
package struct DeferredJSONObject: Sendable {
    private enum Storage: Sendable {
        case object(JSONObject)
        /// The text of one object, read whole by a `JSONCursor` (so the parser accepts it).
        case text([UInt8])
    }

    private var storage: Storage

    package init(_ object: JSONObject = JSONObject()) {
        storage = .object(object)
    }

    /// `text` is one JSON object that a `JSONCursor` read without giving up.
    package init(checkedText text: [UInt8]) {
        storage = .text(text)
    }

    /// The object, parsed from its text if it was kept as text.
    package var object: JSONObject {
        switch storage {
        case .object(let object): return object
        case .text(let text):
            // The cursor read the text whole, so it parses; an empty object is only a guard.
            guard case .object(let object)? = try? JSONParser.parse(text) else { return JSONObject() }
            return object
        }
    }
}

extension DeferredJSONObject: Hashable {
    package static func == (a: DeferredJSONObject, b: DeferredJSONObject) -> Bool { a.object == b.object }

    package func hash(into hasher: inout Hasher) { hasher.combine(object) }
}
