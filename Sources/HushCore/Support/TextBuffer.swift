/// A sentence written in pieces into one buffer of bytes, made a `String` once at the end. A
/// decision's reasons are written in five to ten pieces, and `+=` on a `String` cost about 300
/// instructions a piece, reserved capacity or not; appending bytes costs a copy.
struct TextBuffer {
    private var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    static func += (buffer: inout TextBuffer, text: String) {
        // In place (a short text from a copy on the stack): `withUTF8` on a copy costs more.
        if text.utf8.withContiguousStorageIfAvailable({ buffer.bytes.append(contentsOf: $0) }) == nil {
            var text = text
            text.withUTF8 { buffer.bytes.append(contentsOf: $0) }
        }
    }

    /// The pieces as one text (valid UTF-8: every piece was a `String`).
    var string: String { String(decoding: bytes, as: UTF8.self) }
}
