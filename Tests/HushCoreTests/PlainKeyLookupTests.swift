import HushJSON
import XCTest

@testable import HushCore

/// `JSONObject.subscript(plainKey:)`, the envelope decoder's lookup, must find exactly what the
/// ordinary subscript finds.
final class PlainKeyLookupTests: XCTestCase {
    /// Its premise: `String` equality is canonical equivalence, and the only non-ASCII characters
    /// equal to an ASCII string (of one or two characters) are U+212A (K), U+037E (;) and
    /// U+1FEF (`), so a string equal to an ASCII key without K ; ` has that key's bytes.
    func testOnlyThreeNonASCIICharactersEqualASCIIText() {
        var ascii = Set<String>()
        for a in 0..<128 {
            let first = String(Unicode.Scalar(UInt8(a)))
            ascii.insert(first)
            for b in 0..<128 { ascii.insert(first + String(Unicode.Scalar(UInt8(b)))) }
        }
        var found: [UInt32: String] = [:]
        for v in UInt32(0x80)...0x10FFFF {
            guard let scalar = Unicode.Scalar(v) else { continue }
            let s = String(scalar)
            if ascii.contains(s) { found[v] = ascii.first { $0 == s } }
        }
        XCTAssertEqual(found, [0x212A: "K", 0x037E: ";", 0x1FEF: "`"])
        XCTAssertFalse(JSONObject._isPlainKey("Kind"))
        XCTAssertFalse(JSONObject._isPlainKey("a;b"))
        XCTAssertFalse(JSONObject._isPlainKey("`"))
        XCTAssertFalse(JSONObject._isPlainKey("é"))
        XCTAssertTrue(JSONObject._isPlainKey("apns-collapse-id"))
    }

    func testAgreesWithSubscript() {
        let storedKeys = [
            "app", "apps", "ap", "payload", "aps", "alert", "title", "body", "sound", "badge", "thread-id",
            "a very long key that is not small", "a very long key that is not smalL", "é", "e\u{301}",
            "\u{212A}ind", "kind", "ap\u{0070}", "app\u{301}", "", "user", "date", "id", "handle", "name",
        ]
        let lookups = [
            "app", "apps", "ap", "payload", "aps", "alert", "title", "body", "sound", "badge", "thread-id",
            "a very long key that is not small", "kind", "user", "date", "id", "handle", "name", "missing",
            "", "category", "mutable-content",
        ]
        var rng = SystemRandomNumberGenerator()
        for round in 0..<300 {
            // Small objects (linear scan) and big ones (index).
            let n =
                round % 3 == 0 ? Int.random(in: 17...storedKeys.count, using: &rng) : Int.random(in: 0...8, using: &rng)
            let pairs = storedKeys.shuffled(using: &rng).prefix(n).enumerated().map {
                ($1, JSONValue.number(Double($0)))
            }
            let object = JSONObject(pairs)
            for key in lookups {
                XCTAssertEqual(object[plainKey: key], object[key], "\(key) in \(pairs.map(\.0))")
            }
        }
    }
}
