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
}
