import HushJSON
import XCTest

/// The writer's raw buffer and its writing into memory (`freeSpace`, `writeQuoted(_:to:)`...), held
/// to a plain escaper written byte by byte.
final class JSONWriterTests: XCTestCase {
    /// `s` quoted as JSON, the obvious way: the reference for the word-at-a-time writer.
    static func quoted(_ s: String) -> [UInt8] {
        var out: [UInt8] = [0x22]
        for c in s.utf8 {
            switch c {
            case 0x22: out += Array(#"\""#.utf8)
            case 0x5C: out += Array(#"\\"#.utf8)
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0x08: out += Array(#"\b"#.utf8)
            case 0x0C: out += Array(#"\f"#.utf8)
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array(#"\u00"#.utf8) + [hex[Int(c >> 4)], hex[Int(c & 0xF)]]
            default: out.append(c)
            }
        }
        out.append(0x22)
        return out
    }

    /// Strings of every length up to 40 with each byte that needs escaping at every position, and
    /// with several of them, and with text that needs none (ASCII, UTF-8, DEL, U+2028).
    static var samples: [String] {
        var samples: [String] = []
        let specials = ["\"", "\\", "\n", "\r", "\t", "\u{8}", "\u{C}", "\u{0}", "\u{1}", "\u{1F}"]
        for n in 0...40 {
            let plain = String((0..<n).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })
            samples.append(plain)
            for special in specials {
                for at in 0...n {
                    let chars = Array(plain)
                    samples.append(String(chars[..<at]) + special + String(chars[at...]))
                }
            }
            samples.append(String(repeating: "\"\\\n", count: n))
            samples.append(String(repeating: "é日\u{7F}\u{2028}😀", count: n / 4 + 1))
            samples.append(String(repeating: "ab\u{1}", count: n))
        }
        return samples
    }

    func testWriteStringEscapesAsTheReferenceDoesAtEveryLengthAndPosition() {
        for s in Self.samples {
            // Short ones are stored in the String itself, longer ones in memory of their own.
            for text in [s, s + String(repeating: " ", count: 20)] {
                var w = JSONWriter(capacity: 16)
                w.raw("[")
                w.writeString(text)
                XCTAssertEqual(w.bytes, [UInt8(ascii: "[")] + Self.quoted(text), text.debugDescription)
            }
        }
    }

    func testWriteQuotedIntoMemoryWritesAllOrTellsThatItDoesNotFit() {
        for s in Self.samples where s.utf8.count <= 24 {
            let expected = Self.quoted(s)
            for room in 0...(expected.count + 8) {
                var out = [UInt8](repeating: 0xEE, count: room)
                let written = out.withUnsafeMutableBytes { out in
                    Array(s.utf8).withUnsafeBufferPointer { JSONWriter.writeQuoted($0, to: out) }
                }
                if room < expected.count {
                    XCTAssertNil(written, "\(s.debugDescription) in \(room) bytes")
                } else {
                    XCTAssertEqual(written, expected.count, s.debugDescription)
                    XCTAssertEqual(Array(out.prefix(expected.count)), expected, s.debugDescription)
                    XCTAssertTrue(out.dropFirst(expected.count).allSatisfy { $0 == 0xEE }, "wrote past its text")
                }
            }
        }
    }

    func testNumbersIntoMemory() {
        let ints = [0, 7, 9, 10, 99, 100, -1, -10, 12345, Int.max, Int.min]
        for i in ints {
            let expected = Array(String(i).utf8)
            for room in 0...22 {
                var out = [UInt8](repeating: 0, count: room)
                let written = out.withUnsafeMutableBytes { JSONWriter.writeInt(i, to: $0) }
                XCTAssertEqual(written, room < expected.count ? nil : expected.count, "\(i) in \(room)")
                if written != nil { XCTAssertEqual(Array(out.prefix(expected.count)), expected) }
            }
        }
        for (d, text) in [
            (1.5, "1.5"), (-0.0, "0"), (.nan, "null"), (1e300, "1e+300"),
            (-2.2250738585072014e-308, "-2.2250738585072014e-308"),
        ] {
            var out = [UInt8](repeating: 0, count: JSONWriter.longestNumber)
            let written = out.withUnsafeMutableBytes { JSONWriter.writeNumber(d, to: $0) }
            XCTAssertEqual(written.map { String(decoding: out.prefix($0), as: UTF8.self) }, text)
            var short = [UInt8](repeating: 0, count: text.utf8.count - 1)
            XCTAssertNil(short.withUnsafeMutableBytes { JSONWriter.writeNumber(d, to: $0) })
        }
    }

    func testTheBufferGrowsAndCanBeWrittenInPlace() {
        var w = JSONWriter(capacity: 1)
        for i in 0..<1000 {
            w.raw("{\"i\":")
            w.writeInt(i)
            w.raw("}")
            w.append(10)
        }
        let expected = (0..<1000).map { "{\"i\":\($0)}\n" }.joined()
        XCTAssertEqual(w.string, expected)
        XCTAssertEqual(w.count, expected.utf8.count)

        // In place: what is written in the free space counts once told.
        let mark = w.count
        let space = w.freeSpace(atLeast: 5000)
        XCTAssertGreaterThanOrEqual(space.count, 5000)
        for k in 0..<3 { space[k] = UInt8(ascii: "x") }
        w.didWrite(3)
        XCTAssertEqual(w.count, mark + 3)
        XCTAssertTrue(w.string.hasSuffix("}\nxxx"))
        w.removeAll(after: mark)
        XCTAssertEqual(w.string, expected)

        w.bytes = Array("new".utf8)
        XCTAssertEqual(w.string, "new")
        w.removeAll()
        XCTAssertEqual(w.count, 0)
        XCTAssertEqual(w.bytes, [])
        w.raw("}")  // a one-character literal
        XCTAssertEqual(w.string, "}")
    }
}
