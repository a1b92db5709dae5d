import HushJSON

/// The service's own answers as JSON (decisions and events are written where they are made).
package enum ServiceJSON {
    /// `{"error": message, "field": field or null, "problems": [...]}` (problems only when any).
    package static func error(_ message: String, field: String?, problems: [String] = []) -> [UInt8] {
        var w = JSONWriter(capacity: 128)
        w.raw("{\"error\":"); w.writeString(message)
        w.raw(",\"field\":"); optional(field, &w)
        if !problems.isEmpty {
            w.raw(",\"problems\":")
            strings(problems, &w)
        }
        w.raw("}")
        return w.bytes
    }

    /// The answer to a policy PUT: `{"user", "policy": "own", "focuses": [...]}`.
    package static func policyAccepted(user: String, focuses: [String]) -> [UInt8] {
        var w = JSONWriter(capacity: 128)
        w.raw("{\"user\":"); w.writeString(user)
        w.raw(",\"policy\":\"own\",\"focuses\":")
        strings(focuses, &w)
        w.raw("}")
        return w.bytes
    }

    /// The answer to donated interactions: how many were kept and every refused line; with any
    /// refused, `error` and `field` of the first, as every 400 has.
    package static func donated(kept: Int, errors: [(line: Int, message: String, field: String?)]) -> [UInt8] {
        var w = JSONWriter(capacity: 128)
        w.raw("{")
        if let first = errors.first {
            w.raw("\"error\":"); w.writeString("line \(first.line): \(first.message)")
            w.raw(",\"field\":"); optional(first.field, &w)
            w.raw(",")
        }
        w.raw("\"donated\":"); w.writeInt(kept)
        w.raw(",\"errors\":[")
        for (i, e) in errors.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{\"line\":"); w.writeInt(e.line)
            w.raw(",\"error\":"); w.writeString(e.message)
            w.raw(",\"field\":"); optional(e.field, &w)
            w.raw("}")
        }
        w.raw("]}")
        return w.bytes
    }

    private static func optional(_ s: String?, _ w: inout JSONWriter) {
        if let s { w.writeString(s) } else { w.writeNull() }
    }

    private static func strings(_ list: [String], _ w: inout JSONWriter) {
        w.raw("[")
        for (i, s) in list.enumerated() {
            if i > 0 { w.raw(",") }
            w.writeString(s)
        }
        w.raw("]")
    }
}
