import Foundation
import HushCore
import HushJSON
import Synchronization
import XCTest

// MARK: - Helpers

private func num(_ d: Double) -> JSONValue { .number(d) }
private func str(_ s: String) -> JSONValue { .string(s) }
private func arr(_ a: JSONValue...) -> JSONValue { .array(a) }
private func obj(_ pairs: (String, JSONValue)...) -> JSONValue { .object(JSONObject(pairs)) }

private func parseBytes(_ b: [UInt8]) -> Result<JSONValue, JSONError> {
    Result { () throws(JSONError) -> JSONValue in try JSONParser.parse(b) }
}

/// Deterministic generator (SplitMix64) so the property tests are reproducible.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Bit-exact structural equality (distinguishes -0.0 from 0.0, keeps key order).
private func identical(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.null, .null): return true
    case (.bool(let x), .bool(let y)): return x == y
    case (.number(let x), .number(let y)): return x.bitPattern == y.bitPattern
    case (.string(let x), .string(let y)): return Array(x.utf8) == Array(y.utf8)
    case (.array(let x), .array(let y)):
        return x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
    case (.object(let x), .object(let y)):
        return x.keys == y.keys && zip(x.values, y.values).allSatisfy { identical($0, $1) }
    default: return false
    }
}

private let apnsLine =
    #"{"id":"7f9c2ba4-e88f-4a1b-9f1c-3d2e1b0a9c8d","device_token":"#
    + #""5c1f3e9a7b2d4c6e8f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e","#
    + #""topic":"app.hush.ios","push_type":"alert","priority":10,"expiration":1735689600,"#
    + #""collapse_id":"chat-42","payload":{"aps":{"alert":{"title":"New message","#
    + #""body":"Hey, are we still on for tonight? \ud83c\udf89 \u00e9t\u00e9"},"badge":3,"sound":"default","#
    + #""thread-id":"chat-42","mutable-content":1},"sender":"alice","msg_id":123456789,"#
    + #""score":0.75,"tags":["a","b"],"silent":false,"meta":null}}"#

final class JSONTests: XCTestCase {

    // MARK: Valid documents

    func testValidDocuments() throws {
        let cases: [(String, JSONValue)] = [
            ("null", .null),
            ("true", .bool(true)),
            ("false", .bool(false)),
            ("0", num(0)),
            ("1", num(1)),
            ("-1", num(-1)),
            ("1.5", num(1.5)),
            ("-12.25e1", num(-122.5)),
            ("1e3", num(1000)),
            ("1E+3", num(1000)),
            ("1e-3", num(0.001)),
            ("0.1", num(0.1)),
            ("0e0", num(0)),
            ("0.000001", num(0.000001)),
            ("9007199254740993", num(9_007_199_254_740_992)),  // ties to even
            ("123456789012345678", num(1.2345678901234568e17)),
            ("1e300", num(1e300)),
            ("5e-324", num(.leastNonzeroMagnitude)),
            ("1e-400", num(0)),
            ("1.7976931348623157e308", num(1.7976931348623157e308)),
            ("3.141592653589793238462643383279", num(3.141592653589793)),
            (#""""#, str("")),
            (#""abc""#, str("abc")),
            (#""\"\\\/\b\f\n\r\t""#, str("\"\\/\u{8}\u{C}\n\r\t")),
            (#""\u0041\u00e9\u00E9\u4e2d""#, str("Aéé中")),
            (#""\u0000""#, str("\u{0}")),
            (#""\ud83d\ude00""#, str("😀")),
            (#""\uD83D\uDE00x\uDBFF\uDFFF""#, str("😀x\u{10FFFF}")),
            (#""héllo 😀 中文""#, str("héllo 😀 中文")),
            ("\"\u{2028}\u{2029}\u{7F}\"", str("\u{2028}\u{2029}\u{7F}")),
            (
                #""a long string without escapes, longer than eight bytes""#,
                str("a long string without escapes, longer than eight bytes")
            ),
            (#""escape at the end of a long string\n""#, str("escape at the end of a long string\n")),
            ("[]", .array([])),
            ("{}", .object(JSONObject())),
            (" \t\r\n[ 1 , 2 ]\n ", arr(num(1), num(2))),
            ("[[[]]]", arr(arr(arr()))),
            (#"{"a":[1,{"b":null}],"c":"d"}"#, obj(("a", arr(num(1), obj(("b", .null)))), ("c", str("d")))),
            (#"{ "a" : true , "b" : false }"#, obj(("a", .bool(true)), ("b", .bool(false)))),
            (
                #"[{},[],"",0,-0.5,true,false,null]"#,
                arr(.object(JSONObject()), arr(), str(""), num(0), num(-0.5), .bool(true), .bool(false), .null)
            ),
        ]
        for (text, expected) in cases {
            do {
                let v = try JSONParser.parse(text)
                XCTAssertTrue(identical(v, expected), "\(text) -> \(v.jsonString()), expected \(expected.jsonString())")
                // Same result through the [UInt8] and raw-buffer entry points.
                XCTAssertEqual(try JSONParser.parse(Array(text.utf8)), expected, text)
                let viaRaw = try Array(text.utf8).withUnsafeBytes { try JSONParser.parse($0) }
                XCTAssertEqual(viaRaw, expected, text)
            } catch {
                XCTFail("\(text): unexpected error \(error)")
            }
        }
        // The sign of zero is kept.
        XCTAssertEqual(try JSONParser.parse("-0").doubleValue?.sign, .minus)
        XCTAssertEqual(try JSONParser.parse("-0.0e5").doubleValue?.sign, .minus)
    }

    func testKeyOrderAndDuplicates() throws {
        let v = try JSONParser.parse(#"{"b":1,"a":2,"b":3,"c":4,"a":5}"#)
        let o = try XCTUnwrap(v.objectValue)
        XCTAssertEqual(o.keys, ["b", "a", "c"])
        XCTAssertEqual(o.values, [num(3), num(5), num(4)])
        XCTAssertEqual(v.jsonString(), #"{"b":3,"a":5,"c":4}"#)
        XCTAssertEqual(Array(o.map(\.key)), ["b", "a", "c"])

        // Escaped and unescaped spellings of the same key are the same key.
        let e = try JSONParser.parse(#"{"ab":1,"\u0061b":2}"#)
        XCTAssertEqual(e.jsonString(), #"{"ab":2}"#)
        // Long keys (8+ bytes) that differ only in the middle are different keys.
        let m = try JSONParser.parse(#"{"abcdefghXijklmnop":1,"abcdefghYijklmnop":2}"#)
        XCTAssertEqual(m.objectValue?.count, 2)

        // Large objects (dictionary index), with a duplicate past the threshold
        // and one before it.
        var text = "{"
        for i in 0..<40 { text += "\"k\(i)\":\(i)," }
        text += #""k3":"x","k39":"y","k40":40}"#
        let big = try XCTUnwrap(JSONParser.parse(text).objectValue)
        XCTAssertEqual(big.count, 41)
        XCTAssertEqual(big.keys.first, "k0")
        XCTAssertEqual(big.keys.last, "k40")
        XCTAssertEqual(big["k3"], str("x"))
        XCTAssertEqual(big["k39"], str("y"))
        XCTAssertEqual(big["k17"], num(17))
        XCTAssertNil(big["nope"])
        XCTAssertEqual(big.keys[3], "k3")

        // Exactly at the threshold and one above, with a late duplicate.
        for n in [15, 16, 17] {
            var t = "{"
            for i in 0..<n { t += "\"key\(i)\":\(i)," }
            t += "\"key0\":\"last\"}"
            let o = try XCTUnwrap(JSONParser.parse(t).objectValue)
            XCTAssertEqual(o.count, n, "n=\(n)")
            XCTAssertEqual(o["key0"], str("last"))
            XCTAssertEqual(o.keys.first, "key0")
        }
    }

    func testJSONObjectAPI() {
        var o: JSONObject = ["x": num(1), "y": .null]
        XCTAssertEqual(o.count, 2)
        XCTAssertFalse(o.isEmpty)
        XCTAssertEqual(o["x"], num(1))
        XCTAssertEqual(o["y"], .null)
        XCTAssertNil(o["z"])
        o["z"] = str("zz")
        o["x"] = .bool(true)
        XCTAssertEqual(o.keys, ["x", "y", "z"])
        o["y"] = nil
        XCTAssertEqual(o.keys, ["x", "z"])
        o["missing"] = nil
        XCTAssertEqual(o.count, 2)
        XCTAssertTrue(JSONObject().isEmpty)
        var seen: [String] = []
        for (key, value) in o {
            seen.append(key)
            XCTAssertEqual(o[key], value)
        }
        XCTAssertEqual(seen, ["x", "z"])

        // Grow past the index threshold, then shrink below it again.
        var big = JSONObject()
        for i in 0..<50 { big["k\(i)"] = num(Double(i)) }
        XCTAssertEqual(big.count, 50)
        for i in 0..<50 { XCTAssertEqual(big["k\(i)"], num(Double(i))) }
        big["k10"] = str("ten")
        XCTAssertEqual(big.keys[10], "k10")
        for i in stride(from: 0, to: 50, by: 2) { big["k\(i)"] = nil }
        XCTAssertEqual(big.count, 25)
        XCTAssertNil(big["k10"])
        XCTAssertEqual(big["k11"], num(11))
        for i in stride(from: 1, to: 40, by: 2) { big["k\(i)"] = nil }
        XCTAssertEqual(big.keys, ["k41", "k43", "k45", "k47", "k49"])
        XCTAssertEqual(big["k45"], num(45))

        // Duplicate pairs in the initializer: last wins at first position.
        let d = JSONObject([("a", num(1)), ("b", num(2)), ("a", num(3))])
        XCTAssertEqual(d.keys, ["a", "b"])
        XCTAssertEqual(d["a"], num(3))

        // Equality ignores order; hashing agrees.
        let p: JSONObject = ["a": num(1), "b": num(2)]
        let q: JSONObject = ["b": num(2), "a": num(1)]
        XCTAssertEqual(p, q)
        XCTAssertEqual(p.hashValue, q.hashValue)
        XCTAssertNotEqual(p, ["a": num(1), "b": num(3)] as JSONObject)
        XCTAssertNotEqual(p, ["a": num(1), "c": num(2)] as JSONObject)
        XCTAssertNotEqual(p, ["a": num(1)] as JSONObject)
        XCTAssertEqual(Set([JSONValue.object(p), .object(q)]).count, 1)
    }

    func testConveniences() throws {
        let v = try JSONParser.parse(
            #"{"s":"x","n":42,"f":1.5,"b":true,"z":null,"a":[1],"o":{"k":-0},"big":1e30,"neg":-7}"#)
        XCTAssertEqual(v["s"]?.stringValue, "x")
        XCTAssertEqual(v["n"]?.intValue, 42)
        XCTAssertEqual(v["neg"]?.intValue, -7)
        XCTAssertEqual(v["n"]?.doubleValue, 42)
        XCTAssertNil(v["f"]?.intValue)
        XCTAssertEqual(v["f"]?.doubleValue, 1.5)
        XCTAssertNil(v["big"]?.intValue)
        XCTAssertEqual(v["o"]?["k"]?.intValue, 0)
        XCTAssertEqual(v["b"]?.boolValue, true)
        XCTAssertEqual(v["z"]?.isNull, true)
        XCTAssertEqual(v["a"]?.arrayValue, [num(1)])
        XCTAssertEqual(v["o"]?.objectValue?.keys, ["k"])
        XCTAssertNil(v["missing"])
        XCTAssertNil(v["s"]?["k"])
        XCTAssertNil(v["s"]?.intValue)
        XCTAssertNil(v["n"]?.stringValue)
        XCTAssertFalse(v.isNull)
        XCTAssertEqual(num(-9.223372036854775808e18).intValue, Int.min)
        XCTAssertNil(num(9.223372036854775808e18).intValue)
        XCTAssertNil(num(.nan).intValue)
        XCTAssertNil(num(.infinity).intValue)
        XCTAssertEqual(
            [JSONValue.null, .bool(true), num(1), str(""), arr(), .object(JSONObject())].map(\.typeName),
            ["null", "boolean", "number", "string", "array", "object"])
    }

    // MARK: Errors

    func testErrors() {
        let cases: [(String, String, Int)] = [
            ("", "invalid JSON: empty input", 0),
            (" \n\t", "invalid JSON: empty input", 3),
            ("[1,2,]", "invalid JSON: unexpected character ']' at column 6", 5),
            (#"{"id":1,"name":2,}"#, "invalid JSON: unexpected character '}' at column 18", 17),
            (#"{"a":1,,"b":2}"#, "invalid JSON: unexpected character ',' at column 8", 7),
            ("[,]", "invalid JSON: unexpected character ',' at column 2", 1),
            ("[1 2]", "invalid JSON: unexpected character '2' at column 4", 3),
            (#"{"a" 1}"#, "invalid JSON: unexpected character '1' at column 6", 5),
            (#"{"a":1 "b":2}"#, "invalid JSON: unexpected character '\"' at column 8", 7),
            ("{1:2}", "invalid JSON: unexpected character '1' at column 2", 1),
            ("{'a':1}", "invalid JSON: unexpected character ''' at column 2", 1),
            ("[1}", "invalid JSON: unexpected character '}' at column 3", 2),
            (#"{"a":1]"#, "invalid JSON: unexpected character ']' at column 7", 6),
            ("]", "invalid JSON: unexpected character ']' at column 1", 0),
            ("// c\n1", "invalid JSON: unexpected character '/' at column 1", 0),
            ("[1,/*x*/2]", "invalid JSON: unexpected character '/' at column 4", 3),
            ("NaN", "invalid JSON: unexpected character 'N' at column 1", 0),
            ("Infinity", "invalid JSON: unexpected character 'I' at column 1", 0),
            ("-Infinity", "invalid JSON: expected digit after '-' at column 2", 1),
            ("+1", "invalid JSON: unexpected character '+' at column 1", 0),
            (".5", "invalid JSON: unexpected character '.' at column 1", 0),
            ("-", "invalid JSON: expected digit after '-' at column 2", 1),
            ("01", "invalid JSON: leading zero in number at column 1", 0),
            ("[-012]", "invalid JSON: leading zero in number at column 3", 2),
            ("1.", "invalid JSON: expected digit after decimal point at column 3", 2),
            ("1.e5", "invalid JSON: expected digit after decimal point at column 3", 2),
            ("1e", "invalid JSON: expected digit in exponent at column 3", 2),
            ("[1e+]", "invalid JSON: expected digit in exponent at column 5", 4),
            ("1e400", "invalid JSON: number out of range at column 1", 0),
            ("[-1e309]", "invalid JSON: number out of range at column 2", 1),
            ("0x10", "invalid JSON: trailing characters at column 2", 1),
            ("tru", "invalid JSON: unexpected end of input at column 4", 3),
            ("trux", "invalid JSON: unexpected character 'x' at column 4", 3),
            ("nul", "invalid JSON: unexpected end of input at column 4", 3),
            ("True", "invalid JSON: unexpected character 'T' at column 1", 0),
            ("true false", "invalid JSON: trailing characters at column 6", 5),
            ("{} {}", "invalid JSON: trailing characters at column 4", 3),
            ("1 2", "invalid JSON: trailing characters at column 3", 2),
            ("[1]\n]", "invalid JSON: trailing characters at line 2, column 1", 4),
            ("{\n  \"a\": 1,\n  }", "invalid JSON: unexpected character '}' at line 3, column 3", 14),
            ("[", "invalid JSON: unexpected end of input at column 2", 1),
            ("[1,", "invalid JSON: unexpected end of input at column 4", 3),
            (#"{"a":"#, "invalid JSON: unexpected end of input at column 6", 5),
            (#"{"a""#, "invalid JSON: unexpected end of input at column 5", 4),
            ("{", "invalid JSON: unexpected end of input at column 2", 1),
            (#""abc"#, "invalid JSON: unterminated string at column 1", 0),
            (#"  "abc"#, "invalid JSON: unterminated string at column 3", 2),
            (#"["a\"#, "invalid JSON: unterminated string at column 2", 1),
            (#"["a\""#, "invalid JSON: unterminated string at column 2", 1),
            (#""\x""#, #"invalid JSON: invalid escape '\x' at column 2"#, 1),
            (#""\'""#, #"invalid JSON: invalid escape '\'' at column 2"#, 1),
            (#""ab\u12G4""#, #"invalid JSON: invalid \u escape at column 4"#, 3),
            (#""\u12""#, #"invalid JSON: invalid \u escape at column 2"#, 1),
            (#""\u""#, #"invalid JSON: invalid \u escape at column 2"#, 1),
            (#""\uD800""#, #"invalid JSON: lone surrogate \uD800 at column 2"#, 1),
            (#""\ud800x""#, #"invalid JSON: lone surrogate \uD800 at column 2"#, 1),
            (#""\uDC00""#, #"invalid JSON: lone surrogate \uDC00 at column 2"#, 1),
            (#""\uD800\u0041""#, #"invalid JSON: lone surrogate \uD800 at column 2"#, 1),
            (#""\uD800\uD800""#, #"invalid JSON: lone surrogate \uD800 at column 2"#, 1),
            (#""\uDBFF\n""#, #"invalid JSON: lone surrogate \uDBFF at column 2"#, 1),
            (#""\uD800\uZZZZ""#, #"invalid JSON: invalid \u escape at column 8"#, 7),
            (#"{"k":"x\uDFFFy"}"#, #"invalid JSON: lone surrogate \uDFFF at column 8"#, 7),
            ("\"a\nb\"", "invalid JSON: unescaped control character U+000A in string at column 3", 2),
            ("\"\t\"", "invalid JSON: unescaped control character U+0009 in string at column 2", 1),
            ("\"0123456789abc\u{1F}\"", "invalid JSON: unescaped control character U+001F in string at column 15", 14),
            ("\"\\n\u{0}\"", "invalid JSON: unescaped control character U+0000 in string at column 4", 3),
            ("\u{0}", "invalid JSON: unexpected character U+0000 at column 1", 0),
            ("[1,\u{B}2]", "invalid JSON: unexpected character U+000B at column 4", 3),
            ("\u{FEFF}1", "invalid JSON: unexpected character U+FEFF at column 1", 0),
            ("[é]", "invalid JSON: unexpected character U+00E9 at column 2", 1),
        ]
        for (text, message, offset) in cases {
            do {
                let v = try JSONParser.parse(text)
                XCTFail("\(text.debugDescription): expected an error, got \(v.jsonString())")
            } catch {
                XCTAssertEqual(error.message, message, text.debugDescription)
                XCTAssertEqual(error.offset, offset, text.debugDescription)
                XCTAssertEqual(error.description, message)
            }
        }
        // Empty raw buffer.
        let empty = [UInt8]().withUnsafeBytes { raw in
            Result { () throws(JSONError) -> JSONValue in try JSONParser.parse(raw) }
        }
        XCTAssertEqual(empty, .failure(JSONError(message: "invalid JSON: empty input", offset: 0)))
    }

    func testNesting() throws {
        // 100 000 '[' fails cleanly (no stack overflow), at the 513th bracket.
        for text in [String(repeating: "[", count: 100_000), String(repeating: "{\"a\":", count: 100_000)] {
            XCTAssertThrowsError(try JSONParser.parse(text)) { error in
                let e = error as! JSONError
                XCTAssertEqual(e.message, "invalid JSON: nesting deeper than 512 levels")
                XCTAssertEqual(e.offset, text.hasPrefix("[") ? 512 : 512 * 5)
            }
        }
        // Exactly 512 levels is fine; 513 is not.
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        var v = try JSONParser.parse(ok)
        var depth = 0
        while case .array(let a) = v {
            depth += 1
            guard let first = a.first else { break }
            v = first
        }
        XCTAssertEqual(depth, 512)
        XCTAssertThrowsError(try JSONParser.parse("[" + ok + "]"))
        // Custom limit.
        XCTAssertNoThrow(try JSONParser.parse("[[1]]", maxDepth: 2))
        XCTAssertThrowsError(try JSONParser.parse(#"[{"a":[1]}]"#, maxDepth: 2)) { error in
            XCTAssertEqual((error as! JSONError).message, "invalid JSON: nesting deeper than 2 levels")
            XCTAssertEqual((error as! JSONError).offset, 6)
        }
        XCTAssertEqual(try JSONParser.parse("7", maxDepth: 0), num(7))
        // Deep but allowed with a raised limit: the parser does not recurse.
        let deep = String(repeating: "[", count: 20_000) + String(repeating: "]", count: 20_000)
        XCTAssertNoThrow(try JSONParser.parse(deep, maxDepth: 20_000))
    }

    // MARK: UTF-8

    func testInvalidUTF8() {
        let q: UInt8 = 0x22
        let cases: [([UInt8], Int)] = [
            ([q, 0xFF, q], 1),
            ([q, 0xFE, q], 1),
            ([q, 0x80, q], 1),  // lone continuation byte
            ([q, 0xBF, q], 1),
            ([q, 0xC0, 0x80, q], 1),  // overlong NUL
            ([q, 0xC1, 0xBF, q], 1),  // overlong 2-byte
            ([q, 0xE0, 0x80, 0x80, q], 1),  // overlong 3-byte
            ([q, 0xE0, 0x9F, 0xBF, q], 1),
            ([q, 0xF0, 0x80, 0x80, 0x80, q], 1),  // overlong 4-byte
            ([q, 0xF0, 0x8F, 0xBF, 0xBF, q], 1),
            ([q, 0xED, 0xA0, 0x80, q], 1),  // UTF-8-encoded surrogate U+D800
            ([q, 0xED, 0xBF, 0xBF, q], 1),  // U+DFFF
            ([q, 0xF4, 0x90, 0x80, 0x80, q], 1),  // U+110000
            ([q, 0xF5, 0x80, 0x80, 0x80, q], 1),
            ([q, 0xF8, 0x88, 0x80, 0x80, 0x80, q], 1),
            ([q, 0xC3, q], 1),  // truncated 2-byte
            ([q, 0xE2, 0x82, q], 1),  // truncated 3-byte
            ([q, 0xF0, 0x9F, 0x98, q], 1),  // truncated 4-byte
            ([q, 0xC3], 1),  // truncated at end of input
            ([q, 0xF0, 0x9F], 1),
            ([q, 0x61, 0xC3, 0x28, q], 2),
            ([q, 0xE2, 0x28, 0xA1, q], 1),
            ([q] + Array("abcdefghijklmnop".utf8) + [0xFF, q], 17),  // found by the 8-byte scan
            ([q] + Array("abcdefgh".utf8) + [0xC3, 0xA9] + Array("abcdefgh".utf8) + [0xED, 0xA0, 0x80, q], 19),
            (Array(#""k\n"#.utf8) + [0xFF, q], 4),  // after an escape (slow path)
            (Array(#"["\u00e9"#.utf8) + [0xC0, 0xAF, q, 0x5D], 8),
            ([0x5B, 0xFF, 0x5D], 1),  // outside a string
            ([0xC3], 0),
            ([0x31, 0x20, 0xFF], 2),  // trailing position
            (Array("[1,".utf8) + [0xE0, 0x80, 0x80] + [0x5D], 3),
            (Array("-".utf8) + [0xFF], 1),
            (Array(#""\"#.utf8) + [0xFF, q], 2),  // after a backslash
        ]
        for (bytes, offset) in cases {
            switch parseBytes(bytes) {
            case .success(let v):
                XCTFail("\(bytes): expected invalid UTF-8, got \(v.jsonString())")
            case .failure(let e):
                XCTAssertEqual(e.message, "invalid UTF-8 at byte \(offset)", "\(bytes)")
                XCTAssertEqual(e.offset, offset, "\(bytes)")
            }
        }
        // Boundary cases that are valid.
        let valid: [([UInt8], String)] = [
            ([q, 0xC2, 0x80, q], "\u{80}"),
            ([q, 0xDF, 0xBF, q], "\u{7FF}"),
            ([q, 0xE0, 0xA0, 0x80, q], "\u{800}"),
            ([q, 0xED, 0x9F, 0xBF, q], "\u{D7FF}"),
            ([q, 0xEE, 0x80, 0x80, q], "\u{E000}"),
            ([q, 0xEF, 0xBF, 0xBF, q], "\u{FFFF}"),
            ([q, 0xF0, 0x90, 0x80, 0x80, q], "\u{10000}"),
            ([q, 0xF4, 0x8F, 0xBF, 0xBF, q], "\u{10FFFF}"),
        ]
        for (bytes, expected) in valid {
            XCTAssertEqual(try parseBytes(bytes).get(), str(expected), "\(bytes)")
        }
    }

    /// The scanner's UTF-8 validation agrees with the standard library's on
    /// every 1- and 2-byte sequence and on random short byte strings.
    func testUTF8AgreesWithStandardLibrary() {
        func check(_ content: [UInt8]) {
            let ok = String(validating: content, as: UTF8.self)
            switch parseBytes([0x22] + content + [0x22]) {
            case .success(let v):
                XCTAssertEqual(v.stringValue, ok, "\(content)")
            case .failure(let e):
                XCTAssertNil(ok, "\(content): \(e.message)")
                XCTAssertTrue(e.message.hasPrefix("invalid UTF-8 at byte "), "\(content): \(e.message)")
            }
        }
        // Only bytes that are legal unescaped string content when ASCII.
        let legal = (0x20...0xFF).map(UInt8.init).filter { $0 != 0x22 && $0 != 0x5C }
        for a in legal {
            check([a])
            for b in legal { check([a, b]) }
        }
        var rng = SplitMix64(seed: 0xC0FFEE)
        let leads: [UInt8] = [0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0x80, 0xBF, 0x41]
        let conts: [UInt8] = [0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0x41]
        for _ in 0..<20_000 {
            var content: [UInt8] = []
            for _ in 0..<Int.random(in: 1...12, using: &rng) {
                if Bool.random(using: &rng) {
                    content.append(leads.randomElement(using: &rng)!)
                } else {
                    content.append(conts.randomElement(using: &rng)!)
                }
            }
            check(content)
        }
    }

    // MARK: Numbers vs Foundation

    func testNumbersMatchFoundation() throws {
        let texts = [
            "0.1", "0.2", "0.3", "1e300", "-0.0", "-0", "123456789012345678", "5e-324", "4.9e-324", "2.5e-324",
            "1.7976931348623157e308", "2.2250738585072014e-308", "2.2250738585072011e-308", "9007199254740993",
            "9007199254740992", "18446744073709551615", "18446744073709551616", "1e23", "8.98846567431158e307",
            "0.30000000000000004", "3.14159265358979323846264338327950288", "1e-22", "1e22", "123.456e-7",
            "100000000000000000000000000000000000000001e-40", "7.2057594037927933e16", "-42", "1E2", "2.5e0",
        ]
        for t in texts {
            let mine = try XCTUnwrap(JSONParser.parse(t).doubleValue, t)
            let array = try JSONSerialization.jsonObject(with: Data("[\(t)]".utf8)) as! [Any]
            let number = array[0] as! NSNumber
            // swift-corelibs-foundation returns an NSDecimalNumber for numbers with
            // many digits, and its `doubleValue` is not correctly rounded (it gives
            // 0.3000000000000001 for 0.30000000000000004). Compare against the exact
            // decimal it read, rounded correctly, in that case.
            let theirs = number is NSDecimalNumber ? Double(number.stringValue)! : number.doubleValue
            let stdlib = try XCTUnwrap(Double(t))
            XCTAssertEqual(mine.bitPattern, stdlib.bitPattern, "\(t): \(mine) vs Double(String) \(stdlib)")
            if t == "-0" {
                // Foundation reads "-0" as the integer 0; the sign of zero is ours to keep.
                XCTAssertEqual(mine, theirs, t)
            } else {
                XCTAssertEqual(mine.bitPattern, theirs.bitPattern, "\(t): \(mine) vs Foundation \(theirs)")
            }
        }
    }

    /// The fast path agrees bit for bit with the standard library's correctly
    /// rounded conversion on random decimal strings.
    func testRandomNumbersMatchStandardLibrary() throws {
        var rng = SplitMix64(seed: 42)
        for i in 0..<100_000 {
            var t = Bool.random(using: &rng) ? "-" : ""
            let intDigits = Int.random(in: 1...20, using: &rng)
            if Int.random(in: 0..<4, using: &rng) == 0 {
                t += "0"
            } else {
                t += String(Int.random(in: 1...9, using: &rng))
                for _ in 1..<intDigits { t += String(Int.random(in: 0...9, using: &rng)) }
            }
            if Bool.random(using: &rng) {
                t += "."
                for _ in 0..<Int.random(in: 1...20, using: &rng) { t += String(Int.random(in: 0...9, using: &rng)) }
            }
            if Bool.random(using: &rng) {
                t += ["e", "E", "e+", "e-", "E-"].randomElement(using: &rng)!
                t += String(Int.random(in: 0...(i % 2 == 0 ? 30 : 330), using: &rng))
            }
            guard let expected = Double(t), expected.isFinite else {
                XCTAssertThrowsError(try JSONParser.parse(t), t)
                continue
            }
            let mine = try JSONParser.parse(t).doubleValue!
            XCTAssertEqual(mine.bitPattern, expected.bitPattern, t)
            if mine.bitPattern != expected.bitPattern { return }
        }
        // Every finite Double survives write -> parse exactly (modulo -0 -> 0).
        for _ in 0..<100_000 {
            let d = Double(bitPattern: rng.next())
            guard d.isFinite else { continue }
            var w = JSONWriter()
            w.writeNumber(d)
            let back = try JSONParser.parse(w.bytes).doubleValue!
            XCTAssertEqual(back, d, w.string)
            if back != d { return }
        }
    }

    // MARK: Writer

    func testWriter() throws {
        XCTAssertEqual(
            arr(num(1), num(-0.0), num(1.5), num(-2), num(1e21), num(0.1), num(1e-7)).jsonString(),
            "[1,0,1.5,-2,1e+21,0.1,1e-07]")
        XCTAssertEqual(arr(num(.nan), num(.infinity), num(-.infinity)).jsonString(), "[null,null,null]")
        XCTAssertEqual(num(9_007_199_254_740_992).jsonString(), "9007199254740992")
        XCTAssertEqual(num(-9_007_199_254_740_992).jsonString(), "-9007199254740992")
        XCTAssertEqual(num(18_014_398_509_481_984).jsonString(), "1.8014398509481984e+16")
        XCTAssertEqual(num(.leastNonzeroMagnitude).jsonString(), "5e-324")
        XCTAssertEqual(num(1.7976931348623157e308).jsonString(), "1.7976931348623157e+308")
        XCTAssertEqual(
            str("a\"b\\c/d\n\r\t\u{8}\u{C}\u{0}\u{1F}\u{7F}é😀\u{2028}").jsonString(),
            "\"a\\\"b\\\\c/d\\n\\r\\t\\b\\f\\u0000\\u001f\u{7F}é😀\u{2028}\"")
        // Escapes at every position around the 8-byte scan.
        for n in 0..<20 {
            for special in ["\"", "\\", "\n", "\u{1}"] {
                let s = String(repeating: "x", count: n) + special + String(repeating: "y", count: 19 - n)
                let text = str(s).jsonString()
                XCTAssertEqual(try JSONParser.parse(text).stringValue, s)
                XCTAssertEqual(text.utf8.count, 2 + 19 + (special == "\u{1}" ? 6 : 2))
            }
        }
        XCTAssertEqual(
            obj(("b", .null), ("a", .bool(true)), ("c", obj()), ("d", arr())).jsonString(),
            #"{"b":null,"a":true,"c":{},"d":[]}"#)

        var w = JSONWriter(capacity: 16)
        w.raw("{\"id\":")
        w.writeInt(Int.min)
        w.raw(",\"n\":")
        w.writeInt(Int.max)
        w.raw(",\"z\":")
        w.writeInt(0)
        w.raw(",\"m\":")
        w.writeInt(-7)
        w.raw(",\"b\":")
        w.writeBool(false)
        w.raw(",\"t\":")
        w.writeBool(true)
        w.raw(",\"x\":")
        w.writeNull()
        w.raw(",\"s\":")
        w.writeString("hi")
        w.raw("}")
        XCTAssertEqual(
            w.string,
            #"{"id":-9223372036854775808,"n":9223372036854775807,"z":0,"m":-7,"b":false,"t":true,"x":null,"s":"hi"}"#)
        XCTAssertEqual(w.bytes, Array(w.string.utf8))
        XCTAssertNoThrow(try JSONParser.parse(w.bytes))

        // The APNs line: parse -> write -> parse is stable, and Foundation agrees.
        let v = try JSONParser.parse(apnsLine)
        let out = v.jsonString()
        XCTAssertEqual(try JSONParser.parse(out), v)
        XCTAssertEqual(try JSONParser.parse(out).jsonString(), out)
        let f1 = try JSONSerialization.jsonObject(with: Data(apnsLine.utf8)) as! NSDictionary
        let f2 = try JSONSerialization.jsonObject(with: Data(out.utf8)) as! NSDictionary
        XCTAssertEqual(f1, f2)
    }

    // MARK: Round trip (property test)

    private func randomString(_ rng: inout SplitMix64) -> String {
        let pool: [Unicode.Scalar] = [
            "a", "b", "z", "A", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{1}", "\u{8}", "\u{C}",
            "\u{1F}", "\u{7F}", "é", "ß", "中", "\u{2028}", "\u{2029}", "\u{FEFF}", "\u{FFFF}", "😀", "\u{10FFFF}",
        ]
        var s = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...24, using: &rng) {
            if Int.random(in: 0..<4, using: &rng) == 0 {
                s.append(Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &rng)))
            } else {
                s.append(pool.randomElement(using: &rng)!)
            }
        }
        return String(s)
    }

    private func randomNumber(_ rng: inout SplitMix64) -> Double {
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: return Double(Int.random(in: -1000...1000, using: &rng))
        case 1: return Double(Int64.random(in: -(1 << 53)...(1 << 53), using: &rng))
        case 2: return Double(Int.random(in: -100_000...100_000, using: &rng)) / 100
        case 3: return Double.random(in: -1e6...1e6, using: &rng)
        case 4:
            let d = Double(bitPattern: rng.next())
            return d.isFinite ? d : 0.5
        default:
            return [0.1, -0.0, .leastNonzeroMagnitude, 1.7976931348623157e308, 1e21, 1e-7, 1.2345678901234568e17]
                .randomElement(using: &rng)!
        }
    }

    private func randomValue(_ rng: inout SplitMix64, depth: Int) -> JSONValue {
        let kind = Int.random(in: 0..<(depth < 5 ? 7 : 5), using: &rng)
        switch kind {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2, 3: return .number(randomNumber(&rng))
        case 4: return .string(randomString(&rng))
        case 5:
            return .array((0..<Int.random(in: 0...6, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) })
        default:
            // Sometimes more than the index threshold, sometimes with duplicate keys.
            let n = Int.random(in: 0...(Int.random(in: 0..<8, using: &rng) == 0 ? 40 : 8), using: &rng)
            var pairs: [(String, JSONValue)] = []
            for _ in 0..<n {
                let key = Bool.random(using: &rng) ? "k\(Int.random(in: 0..<12, using: &rng))" : randomString(&rng)
                pairs.append((key, randomValue(&rng, depth: depth + 1)))
            }
            return .object(JSONObject(pairs))
        }
    }

    /// The parser reuses the Strings of keys and short values it saw in earlier
    /// documents (a small cache keyed by a fingerprint of the bytes); whatever
    /// the cache holds, every string must come out exactly as written. The long keys that
    /// differ only in the middle share a fingerprint.
    func testStringsRepeatedAcrossDocumentsComeOutAsWritten() {
        let keys = [
            "", "a", "b", "id", "app", "abcdefg", "abcdefgh", "abcdefgi", "abcdefghi", "payload", "aaaaaaaa_X_bbbbbbbb",
            "aaaaaaaa_Y_bbbbbbbb", "aaaaaaaaXbbbbbbbb", "aaaaaaaaYbbbbbbbb", String(repeating: "k", count: 31),
            String(repeating: "k", count: 32), String(repeating: "k", count: 33),
            "k" + String(repeating: "q", count: 30) + "k",
            "é", "tab\there", "q\"uote", "\u{1F600}", "x\\y", "ctl\u{1}", "ctl\u{2}", "\u{7F}",
        ]
        @Sendable func document(_ chosen: [String]) -> [UInt8] {
            var w = JSONWriter()
            w.raw("{")
            for (i, key) in chosen.enumerated() {
                if i > 0 { w.raw(", ") }
                w.writeString(key)
                w.raw(":")
                // Nested objects too, so keys also repeat within a document.
                if i % 3 == 0 {
                    w.raw("{")
                    w.writeString(chosen[(i + 1) % chosen.count])
                    w.raw(":true}")
                } else if i % 3 == 1 {
                    // String values are reused the same way.
                    w.writeString(chosen[(i + 2) % chosen.count])
                } else {
                    w.writeInt(i)
                }
            }
            w.raw("}")
            return w.bytes
        }
        @Sendable func check(_ chosen: [String]) -> Bool {
            guard case .object(let o)? = try? JSONParser.parse(document(chosen)) else { return false }
            guard o.keys.map({ Array($0.utf8) }) == chosen.map({ Array($0.utf8) }) else { return false }
            for (i, key) in chosen.enumerated() where i % 3 == 0 {
                guard case .object(let inner)? = o[key],
                    inner.keys.map({ Array($0.utf8) }) == [Array(chosen[(i + 1) % chosen.count].utf8)]
                else { return false }
            }
            for (i, key) in chosen.enumerated() where i % 3 == 1 {
                guard case .string(let s)? = o[key], Array(s.utf8) == Array(chosen[(i + 2) % chosen.count].utf8) else {
                    return false
                }
            }
            return true
        }
        var rng = SplitMix64(seed: 99)
        var rounds: [[String]] = []
        for _ in 0..<500 {
            rounds.append(Array(keys.shuffled(using: &rng).prefix(Int.random(in: 1...keys.count, using: &rng))))
        }
        for (i, chosen) in rounds.enumerated() {
            XCTAssertTrue(check(chosen), "round \(i): \(chosen)")
        }
        let allRounds = rounds
        // From several threads at once (one of them holds the cache, the others parse without it).
        let failures = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for chosen in allRounds where !check(chosen) { failures.add(1, ordering: .relaxed) }
            _ = t
        }
        XCTAssertEqual(failures.load(ordering: .relaxed), 0)
    }

    /// `JSONWriter.byteCount(of:)` is what the envelope decoder checks the
    /// APNs size limit with; it must agree with what the writer writes.
    func testByteCountMatchesWriter() {
        func check(_ value: JSONValue, _ label: String, line: UInt = #line) {
            var w = JSONWriter()
            w.write(value)
            XCTAssertEqual(JSONWriter.byteCount(of: value), w.bytes.count, "\(label): \(w.string)", line: line)
        }
        let numbers: [Double] = [
            0, -0.0, 1, -1, 9, 10, -10, 99, 100, 0.1, -0.1, 0.5, 1.5e-7, 1e-7, 1e21, 1e22, 1e300, -1e300,
            123_456_789_012, -123_456_789_012, 9_007_199_254_740_992, -9_007_199_254_740_992, 9_007_199_254_740_994,
            9_223_372_036_854_775_808, -9_223_372_036_854_775_808, 1.7976931348623157e308, .leastNonzeroMagnitude,
            .nan, .infinity, -.infinity, 1.2345678901234568e17, 4.35, 1234.5678,
        ]
        for d in numbers { check(.number(d), "\(d)") }
        let strings = [
            "", "a", "abcdefg", "abcdefgh", "abcdefghi", "\"", "\\", "/", "\n", "\r", "\t", "\u{8}", "\u{C}", "\u{0}",
            "\u{1}", "\u{1F}", "\u{7F}", "é", "e\u{301}", "中文", "😀", "\u{2028}\u{2029}", "\u{10FFFF}",
            "0123456789abcdef\"0123456789abcdef\\x", "tab\there and \u{1} there, quote \" and \u{1F}\u{1F}",
            String(repeating: "\u{1}", count: 17), String(repeating: "a\"", count: 13),
            String(repeating: "é", count: 9),
            "\u{212A}", "ends with a control\u{2}", "\u{3}starts with one",
        ]
        for s in strings {
            check(.string(s), s.debugDescription)
            check(.object(JSONObject([(s, .string(s))])), "key " + s.debugDescription)
        }
        check(.array([]), "[]")
        check(.object(JSONObject()), "{}")
        check(.array([.null, .bool(true), .bool(false)]), "literals")
        check(.array(numbers.map { .number($0) } + strings.map { .string($0) }), "everything")
        for i in [0, 1, -1, 9, 10, -9, -10, 99, 100, 12345, Int.max, Int.min] {
            var w = JSONWriter()
            w.writeInt(i)
            XCTAssertEqual(JSONWriter.byteCount(ofInt: i), w.bytes.count, "\(i)")
        }
        var rng = SplitMix64(seed: 4096)
        for iteration in 0..<3000 {
            check(randomValue(&rng, depth: 0), "iteration \(iteration)")
        }
    }

    func testRoundTripProperty() throws {
        var rng = SplitMix64(seed: 2024)
        for iteration in 0..<2000 {
            let value = randomValue(&rng, depth: 0)
            var w = JSONWriter()
            w.write(value)
            let text = w.string
            let parsed: JSONValue
            do {
                parsed = try JSONParser.parse(w.bytes)
            } catch {
                XCTFail("iteration \(iteration): \(error) for \(text)")
                return
            }
            XCTAssertEqual(parsed, value, "iteration \(iteration): \(text)")
            // Writing again gives the same bytes (keys kept in order).
            XCTAssertEqual(parsed.jsonString(), text, "iteration \(iteration)")
            // Foundation accepts what we write.
            if iteration % 10 == 0 {
                XCTAssertNoThrow(
                    try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]), text)
            }
        }
    }

    func testLargeInputs() throws {
        // A 10 MB line parses.
        var big = "["
        big.reserveCapacity(11_000_000)
        var i = 0
        while big.utf8.count < 10_000_000 {
            big += #"{"i":\#(i),"s":"some text \u00e9 \"q\"","f":1.25e-3},"#
            i += 1
        }
        big += "null]"
        let v = try JSONParser.parse(big)
        XCTAssertEqual(v.arrayValue?.count, i + 1)
        XCTAssertEqual(v.arrayValue?[i - 1]["i"]?.intValue, i - 1)

        // A 10 MB string parses, and an unterminated one fails cleanly.
        let long = String(repeating: "abcdefghé", count: 1_000_000)
        XCTAssertEqual(try JSONParser.parse("\"" + long + "\"").stringValue?.utf8.count, long.utf8.count)
        XCTAssertThrowsError(try JSONParser.parse("[\"" + long)) { error in
            XCTAssertEqual((error as! JSONError).message, "invalid JSON: unterminated string at column 2")
        }

        // Long strings with escapes (the escape scratch buffer grows), also as keys.
        let piece = #"line \"one\"\n\ttab \u00e9 \ud83d\ude00 "#
        let decodedPiece = "line \"one\"\n\ttab é 😀 "
        let escaped = String(repeating: piece, count: 20_000)
        let doc = "{\"" + escaped + "\":\"" + escaped + "\",\"k\":1}"
        let o = try XCTUnwrap(JSONParser.parse(doc).objectValue)
        let expected = String(repeating: decodedPiece, count: 20_000)
        XCTAssertEqual(o.keys, [expected, "k"])
        XCTAssertEqual(o[expected]?.stringValue, expected)

        // A 10 MB line with the error at its very end.
        XCTAssertThrowsError(try JSONParser.parse(String(big.dropLast()))) { error in
            XCTAssertEqual((error as! JSONError).offset, big.utf8.count - 1)
        }
    }
}
