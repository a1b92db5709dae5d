/// How large a decision can get, whatever a policy or a payload does (docs/security.md, "Output
/// bounds"): every text a rule or a policy puts in a decision is cut to `textBytes`, and the lists
/// rules add to are cut to a count, each with a last entry saying how many were left out.
package enum OutputBounds {
    /// A reason, an error, a note, a trace line, a rule's name: at most this many bytes of UTF-8.
    package static let textBytes = 1024
    /// Reasons given by rules in one decision (the built-in steps' own reasons always follow).
    package static let ruleReasons = 16
    /// Errors in one decision.
    package static let errors = 16
    /// Names in `rules`.
    package static let ruleNames = 32
    /// Steps in one decision's trace.
    package static let traceSteps = 256
    /// `id`, `app` and `user` of an input line: longer ones are refused.
    package static let identifierBytes = 1024

    /// `text`, or its first bytes up to a character boundary followed by "…", at most `maxBytes`
    /// bytes in all.
    package static func cut(_ text: String, maxBytes: Int = textBytes) -> String {
        let utf8 = text.utf8
        guard utf8.count > maxBytes else { return text }
        // "…" is 3 bytes; back up to the first byte of a character (not 10xxxxxx).
        var end = utf8.index(utf8.startIndex, offsetBy: maxBytes - 3)
        while end > utf8.startIndex, utf8[end] & 0xC0 == 0x80 { end = utf8.index(before: end) }
        return String(text[..<end]) + "…"
    }
}
