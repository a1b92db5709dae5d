import Foundation
import HushCore
import HushJSON
import XCTest

/// The fast reader (`Envelope.read(line:fallbackID:)`) against parse + decode: on every line it
/// reads, the same envelope, with a generated id taken exactly when decode takes one; on every line
/// parse + decode refuse, nil. It must also read ordinary lines, or it is no fast path.
final class EnvelopeReaderTests: XCTestCase {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("examples")

    /// Compares the two ways for one line; returns whether the fast reader read it.
    @discardableResult
    func check(_ line: [UInt8], file: StaticString = #filePath, line number: UInt = #line) -> Bool {
        var fastTook = 0
        var slowTook = 0
        let fast = line.withUnsafeBytes { bytes in
            Envelope.read(
                line: bytes,
                fallbackID: {
                    fastTook += 1; return "generated"
                })
        }
        let slow = Result { () throws -> Envelope in
            try Envelope.decode(
                JSONParser.parse(line),
                fallbackID: {
                    slowTook += 1; return "generated"
                }(),
                sourceByteCount: line.count)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let fast else { return false }
        switch slow {
        case .success(let envelope):
            XCTAssertEqual(fast, envelope, text, file: file, line: number)
            XCTAssertEqual(fastTook, slowTook, "generated ids taken: \(text)", file: file, line: number)
        case .failure(let error):
            XCTFail("read a line that decode refuses (\(error)): \(text)", file: file, line: number)
        }
        return true
    }

    func exampleLines() throws -> [[UInt8]] {
        var lines: [[UInt8]] = []
        for name in ["stream.jsonl", "apps.jsonl", "week.jsonl"] {
            let text = try String(contentsOf: Self.examples.appendingPathComponent(name), encoding: .utf8)
            lines += text.split(separator: "\n").map { Array($0.utf8) }
        }
        return lines
    }

    func testEveryExampleLineIsReadAsDecodeReadsIt() throws {
        let lines = try exampleLines()
        XCTAssertGreaterThan(lines.count, 400)
        for line in lines { XCTAssertTrue(check(line), String(decoding: line, as: UTF8.self)) }
    }

    /// Lines that differ from an example in one place: a byte changed, cut short, a member doubled,
    /// a value of another type, escapes. Whatever the reader makes of them must be decode's.
    func testChangedLinesAreReadAsDecodeReadsThemOrLeftToIt() throws {
        let lines = try exampleLines()
        var read = 0
        var total = 0
        let replacements: [UInt8] = Array("\"\\{}[],:0-.eE nt\u{7f}".utf8) + [0x00, 0x0A, 0xC3, 0xFF]
        for line in lines.prefix(60) {
            for i in stride(from: 0, to: line.count, by: 7) {
                for byte in replacements {
                    var changed = line
                    changed[i] = byte
                    total += 1
                    if check(changed) { read += 1 }
                }
                total += 1
                if check(Array(line[..<i])) { read += 1 }
            }
        }
        XCTAssertGreaterThan(total, 10_000)
        XCTAssertGreaterThan(read, 0)
    }

    func testValuesOfEveryKindInEveryField() {
        let values = [
            "null", "true", "false", "0", "1", "-1", "1.0", "1.5", "1e2", "-0", "10", "5", "\"\"", "\"x\"", "\"10\"",
            "\"image\"", "\"call\"", "\"critical\"", "\"2026-11-24T10:00:00+01:00\"", "\"a\\u00e9\\n\"", "[]",
            "[\"a\"]", "[{\"type\":\"image\"}]", "{}", "{\"handle\":\"a\"}", "{\"name\":null}",
        ]
        let templates = [
            #"{"app":"a","id":"i","payload":{"aps":{"FIELD":VALUE}}}"#,
            #"{"app":"a","id":"i","payload":{"aps":{"alert":{"FIELD":VALUE}}}}"#,
            #"{"app":"a","id":"i","payload":{"aps":{"sound":{"FIELD":VALUE}}}}"#,
            #"{"app":"a","payload":{"aps":{}},"headers":{"FIELD":VALUE}}"#,
            #"{"app":"a","id":"i","payload":{},"communication":{"FIELD":VALUE}}"#,
            #"{"app":"a","id":"i","payload":{},"communication":{"sender":{"FIELD":VALUE}}}"#,
            // Recipients are checked as read and kept as text until asked for.
            #"{"app":"a","id":"i","payload":{},"communication":{"recipients":[{"FIELD":VALUE}]}}"#,
            #"{"app":"a","id":"i","payload":{},"communication":{"recipients":["h",{"FIELD":VALUE,"name":"n"}]}}"#,
            #"{"app":"a","id":"i","payload":{},"communication":{"recipients":[VALUE],"FIELD":1}}"#,
            #"{"app":"a","payload":{},"FIELD":VALUE}"#,
        ]
        let fields = [
            "alert", "badge", "sound", "thread-id", "category", "content-available", "mutable-content",
            "target-content-id", "interruption-level", "relevance-score", "filter-criteria", "title", "subtitle",
            "body", "summary-arg", "summary-arg-count", "critical", "name", "volume", "apns-push-type",
            "apns-collapse-id", "apns-priority", "apns-expiration", "kind", "sender", "recipients", "group",
            "conversation", "service", "handle", "contact", "aliases", "app", "id", "date", "user", "payload",
            "headers", "withdraw", "attachments", "communication", "other",
        ]
        var read = 0
        for template in templates {
            for field in fields {
                for value in values {
                    let line = template.replacingOccurrences(of: "FIELD", with: field)
                        .replacingOccurrences(of: "VALUE", with: value)
                    if check(Array(line.utf8)) { read += 1 }
                    // The same member twice: decode keeps the last.
                    let twice = line.replacingOccurrences(
                        of: "\"\(field)\":\(value)", with: "\"\(field)\":\(value),\"\(field)\":\(values[0])")
                    check(Array(twice.utf8))
                }
            }
        }
        XCTAssertGreaterThan(read, 1000)
    }

    /// The reader keeps a message's recipients as text: asked for, they are the people the line
    /// names, equal to (and hashed as) the same people decoded from the tree.
    func testRecipientsKeptAsTextAreThePeopleTheLineNames() throws {
        let line = Array(
            #"{"app":"a","id":"i","payload":{},"communication":{"recipients":["me@x",{"handle":"b@x","name":"B\u00e9","aliases":["+1 555"]},{"contact":"c1","name":null}]}}"#
                .utf8)
        XCTAssertTrue(check(line))
        let read = try XCTUnwrap(line.withUnsafeBytes { Envelope.read(line: $0, fallbackID: { "g" }) })
        let expected = [
            Person(handle: "me@x"), Person(handle: "b@x", name: "Bé", aliases: ["+1 555"]), Person(contact: "c1"),
        ]
        XCTAssertEqual(read.communication?.recipients, expected)
        let decoded = Communication(kind: .message, recipients: expected)
        XCTAssertEqual(read.communication, decoded)
        XCTAssertEqual(read.communication?.hashValue, decoded.hashValue)
        XCTAssertNotEqual(read.communication, Communication(kind: .message, recipients: Array(expected.prefix(2))))
    }

    func testAGeneratedIDIsTakenOnlyForALineThatGetsOne() {
        XCTAssertTrue(check(Array(#"{"app":"a","payload":{"aps":{"alert":"hi"}}}"#.utf8)))
        XCTAssertTrue(check(Array(#"{"app":"a","headers":{"apns-collapse-id":"c"},"payload":{}}"#.utf8)))
        // Refused after the id would be made: decode takes one, the reader leaves the line to it.
        XCTAssertFalse(check(Array(#"{"app":"a","payload":{},"date":"soon"}"#.utf8)))
    }

    /// A look-up in the payload's text starts after `aps` when `aps` comes first (keys all
    /// differ): every member, wherever `aps` is, and a missing one, read as the tree has them.
    func testEveryMemberOfThePayloadIsFoundWhereverItsApsIs() throws {
        let payloads = [
            #"{"aps":{"alert":{"title":"T"},"badge":1},"show":"s1","amount":7}"#,
            #"{ "aps" : {"alert":"hi"} , "show" : "s2" }"#,
            #"{"show":"s3","aps":{"alert":"hi"},"amount":[1,{"x":2}]}"#,
            #"{"show":"s4","amount":9,"aps":{"sound":"default"}}"#,
            #"{"aps":{"badge":3}}"#,
            #"{"show":"s5"}"#,
        ]
        for payload in payloads {
            let line = Array(#"{"app":"a","id":"i","payload":\#(payload)}"#.utf8)
            let envelope = try XCTUnwrap(line.withUnsafeBytes { Envelope.read(line: $0, fallbackID: { "" }) }, payload)
            XCTAssertTrue(envelope.payloadSource.isText, payload)
            guard case .object(let tree) = try JSONParser.parse(Array(payload.utf8)) else { return XCTFail(payload) }
            for key in ["aps", "show", "amount", "missing", "ap", "apsx"] {
                let found = Array(key.utf8).withUnsafeBytes { envelope.payloadSource.member(exactly: $0) }
                XCTAssertEqual(found, tree[key], "\(key) in \(payload)")
            }
        }
    }

    func testThePayloadIsKeptAsTextAndReadWhenAskedFor() throws {
        let line = Array(
            #"{"app":"a","id":"i","payload":{"aps":{"alert":"hi"},"amount":500,"deep":{"x":[1,2,{"y":null}]}}}"#.utf8)
        let envelope = try XCTUnwrap(line.withUnsafeBytes { Envelope.read(line: $0, fallbackID: { "" }) })
        XCTAssertEqual(envelope.payload["amount"], .number(500))
        XCTAssertEqual(envelope.payload["deep"]?["x"]?.arrayValue?.count, 3)
        XCTAssertTrue(envelope.hasAlertMember)
    }
}
