/// A text's two machine words: its bytes when it is short, else its storage and length. Equal
/// words are the same text for as long as the text compared against is still held; equal texts
/// in other storage differ. So a cache that holds its keys can find an entry by comparing two
/// words instead of hashing or comparing the bytes, and a miss costs only what the cache saves.
package struct TextWords: Equatable {
    package let first: UInt64
    package let second: UInt64

    @inline(__always)
    package init(_ text: String) {
        (first, second) = unsafeBitCast(text, to: (UInt64, UInt64).self)
    }

    /// A slot of a direct-mapped table of `2^bits` slots for this text and `owner` (what the
    /// table's entries are kept for: a directory, a pipeline). Not a keyed hash, and it needs none:
    /// texts flooding one slot only make every lookup a miss.
    @inline(__always)
    package func slot(owner: Int, bits: Int) -> Int {
        let mixed = (first &+ second &* 31 &+ UInt64(bitPattern: Int64(owner))) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> UInt64(64 - bits))
    }
}
