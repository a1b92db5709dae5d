import HushCore
import HushJSON
import XCTest

final class EnvelopeDecodingTests: XCTestCase {
    func decode(_ json: String) throws -> Envelope {
        try Envelope.decode(try JSONParser.parse(json), fallbackID: "generated")
    }

    func assertError(_ json: String, field: String?, contains words: String, line: UInt = #line) {
        do {
            _ = try decode(json)
            XCTFail("expected an error for \(json)", line: line)
        } catch let error as InputError {
            XCTAssertEqual(error.field, field, line: line)
            XCTAssertTrue(error.description.contains(words), "\(error.description)", line: line)
        } catch {
            XCTFail("unexpected \(error)", line: line)
        }
    }

    func testEachErrorOfSpec() {
        assertError("{\"payload\":{}}", field: "app", contains: "required")
        assertError("{\"app\":\"a\"}", field: "payload", contains: "required")
        assertError("{\"app\":\"a\",\"payload\":{\"aps\":[]}}", field: "payload.aps", contains: "must be an object")
        assertError(
            "{\"app\":\"a\",\"payload\":{\"aps\":{\"interruption-level\":\"loud\"}}}",
            field: "payload.aps.interruption-level", contains: "\"loud\"")
        assertError(
            "{\"app\":\"a\",\"payload\":{\"aps\":{\"relevance-score\":1.5}}}", field: "payload.aps.relevance-score",
            contains: "0 to 1")
        assertError(
            "{\"app\":\"a\",\"payload\":{\"aps\":{\"relevance-score\":\"high\"}}}",
            field: "payload.aps.relevance-score", contains: "0 to 1")
        assertError(
            "{\"app\":\"a\",\"payload\":{\"aps\":{\"alert\":{\"summary-arg-count\":0}}}}",
            field: "payload.aps.alert.summary-arg-count", contains: "positive integer")
        assertError(
            "{\"app\":\"a\",\"payload\":{\"aps\":{\"alert\":{\"summary-arg-count\":1.5}}}}",
            field: "payload.aps.alert.summary-arg-count", contains: "positive integer")
        assertError(
            "{\"app\":\"a\",\"payload\":{\"aps\":{\"sound\":{\"critical\":1,\"volume\":2}}}}",
            field: "payload.aps.sound.volume", contains: "0.0 to 1.0")
        let big = String(repeating: "x", count: 4100)
        assertError("{\"app\":\"a\",\"payload\":{\"aps\":{\"alert\":\"\(big)\"}}}", field: "payload", contains: "4096")
        let collapse = String(repeating: "c", count: 65)
        assertError(
            "{\"app\":\"a\",\"headers\":{\"apns-collapse-id\":\"\(collapse)\"},\"payload\":{}}",
            field: "headers.apns-collapse-id", contains: "64")
        assertError("{\"app\":\"a\",\"date\":\"yesterday\",\"payload\":{}}", field: "date", contains: "RFC 3339")
        assertError(
            "{\"app\":\"a\",\"date\":\"2026-02-30T10:00:00Z\",\"payload\":{}}", field: "date", contains: "RFC 3339")
    }

    func testVoIPPayloadLimitIs5120() throws {
        let body = String(repeating: "x", count: 4500)
        let json =
            "{\"app\":\"a\",\"headers\":{\"apns-push-type\":\"voip\"},\"payload\":{\"aps\":{},\"data\":\"\(body)\"}}"
        XCTAssertNoThrow(try decode(json))
        assertError(json.replacingOccurrences(of: "voip", with: "alert"), field: "payload", contains: "4096")
    }

    func testFieldsAndDefaults() throws {
        let e = try decode(
            """
            {"app":"com.example.chat","headers":{"apns-collapse-id":"c-1","apns-priority":"10"},
             "payload":{"aps":{"alert":{"title":"T","subtitle":"S","body":"B","summary-arg":"Alice","summary-arg-count":2},
                               "badge":3,"sound":"ping.caf","thread-id":"th","category":"MESSAGE","relevance-score":0.5,
                               "filter-criteria":"work","interruption-level":"time-sensitive"},"custom":{"k":1}},
             "communication":{"kind":"call","sender":{"handle":"+1 617 555 1212","name":"Alice","aliases":["a@x.com"]}},
             "attachments":[{"type":"image"}]}
            """)
        XCTAssertEqual(e.id, "c-1")
        XCTAssertFalse(e.idIsGenerated)
        XCTAssertEqual(e.user, "default")
        XCTAssertNil(e.date)
        XCTAssertEqual(e.title, "T"); XCTAssertEqual(e.subtitle, "S"); XCTAssertEqual(e.body, "B")
        XCTAssertEqual(e.summaryArgument, "Alice"); XCTAssertEqual(e.summaryArgumentCount, 2)
        XCTAssertEqual(e.badge, 3); XCTAssertEqual(e.sound?.name, "ping.caf")
        XCTAssertEqual(e.threadID, "th"); XCTAssertEqual(e.category, "MESSAGE"); XCTAssertEqual(e.relevance, 0.5)
        XCTAssertEqual(e.filterCriteria, "work"); XCTAssertEqual(e.requestedLevel, .timeSensitive)
        XCTAssertEqual(e.communication?.kind, .call); XCTAssertEqual(e.communication?.sender?.aliases, ["a@x.com"])
        XCTAssertEqual(e.attachments, ["image"]); XCTAssertEqual(e.priority, 10)
        XCTAssertEqual(e.payload["custom"]?["k"], .number(1))
        let generated = try decode("{\"app\":\"a\",\"payload\":{\"aps\":{\"alert\":\"hi\"}}}")
        XCTAssertEqual(generated.id, "generated"); XCTAssertTrue(generated.idIsGenerated);
        XCTAssertEqual(generated.body, "hi")
    }

    /// The aps fields are gathered in one pass over the members; every field must be found
    /// whatever the order and whatever other keys (same lengths, near misses, non-ASCII, more
    /// than the 16 keys an object gets an index at) sit beside it.
    func testEveryAPSFieldIsFoundAmongOtherKeys() throws {
        let fields: [(String, String)] = [
            ("alert", "{\"title\":\"T\",\"body\":\"B\"}"), ("badge", "4"),
            ("sound", "{\"critical\":1,\"name\":\"n\",\"volume\":0.25}"),
            ("thread-id", "\"th\""), ("category", "\"CAT\""), ("content-available", "1"), ("mutable-content", "true"),
            ("target-content-id", "\"tc\""), ("interruption-level", "\"passive\""), ("relevance-score", "0.75"),
            ("filter-criteria", "\"fc\""),
        ]
        let others: [(String, String)] = [
            ("alerts", "1"), ("Alert", "1"), ("sounD", "\"x\""), ("bad\\u00e9", "1"), ("b\u{E4}dge", "1"),
            ("categorY", "2"), ("thread-ix", "3"),
            ("mutable-contenT", "0"), ("relevance-scorE", "9"), ("content-availablE", "7"),
            ("interruption-leveL", "\"x\""),
            ("k1", "1"), ("k2", "2"), ("k3", "3"), ("k4", "4"), ("k5", "5"), ("k6", "6"), ("k7", "7"),
        ]
        var rng = SystemRandomNumberGenerator()
        for round in 0..<60 {
            let members = (fields + others.prefix(round % (others.count + 1))).shuffled(using: &rng)
            let aps = members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",")
            let e = try decode("{\"app\":\"a\",\"payload\":{\"aps\":{\(aps)}}}")
            XCTAssertEqual(e.title, "T"); XCTAssertEqual(e.body, "B"); XCTAssertEqual(e.badge, 4)
            XCTAssertEqual(e.sound?.name, "n"); XCTAssertEqual(e.sound?.critical, true);
            XCTAssertEqual(e.sound?.volume, 0.25)
            XCTAssertEqual(e.threadID, "th"); XCTAssertEqual(e.category, "CAT")
            XCTAssertTrue(e.contentAvailable); XCTAssertTrue(e.mutableContent)
            XCTAssertEqual(e.targetContentID, "tc"); XCTAssertEqual(e.interruptionLevel, .passive)
            XCTAssertEqual(e.relevance, 0.75); XCTAssertEqual(e.filterCriteria, "fc")
        }
        let none = try decode("{\"app\":\"a\",\"payload\":{\"aps\":{\"Alert\":1,\"sounds\":2,\"thread_id\":3}}}")
        XCTAssertNil(none.body); XCTAssertNil(none.sound); XCTAssertNil(none.threadID);
        XCTAssertFalse(none.hasVisibleContent)
    }

    /// The top-level members are gathered in one pass too.
    func testEveryTopLevelFieldIsFoundAmongOtherKeys() throws {
        let fields: [(String, String)] = [
            ("app", "\"com.example.a\""), ("payload", "{\"aps\":{\"alert\":\"hi\"}}"),
            ("headers", "{\"apns-priority\":5}"),
            ("id", "\"n-1\""), ("date", "\"2026-11-23T10:00:00Z\""), ("user", "\"u1\""),
            (
                "communication",
                "{\"sender\":\"bob\",\"recipients\":[\"x\",{\"name\":\"Y\",\"aliases\":[\"y@x\"]}],\"group\":\"G\"}"
            ),
            ("attachments", "[{\"type\":\"audio\"}]"),
        ]
        let others: [(String, String)] = [
            ("apps", "1"), ("App", "1"), ("ip", "\"x\""), ("i\\u0065", "1"), ("data", "2"), ("usr", "3"),
            ("users", "3"),
            ("payloaD", "0"), ("header", "9"), ("communicatioN", "7"), ("attachmentS", "\"x\""), ("\u{E4}pp", "1"),
            ("k1", "1"), ("k2", "2"), ("k3", "3"), ("k4", "4"), ("k5", "5"), ("k6", "6"), ("k7", "7"), ("k8", "8"),
        ]
        var rng = SystemRandomNumberGenerator()
        for round in 0..<60 {
            let members = (fields + others.prefix(round % (others.count + 1))).shuffled(using: &rng)
            let e = try decode("{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
            XCTAssertEqual(e.app, "com.example.a"); XCTAssertEqual(e.body, "hi"); XCTAssertEqual(e.priority, 5)
            XCTAssertEqual(e.id, "n-1"); XCTAssertEqual(e.date, RFC3339.parse("2026-11-23T10:00:00Z"));
            XCTAssertEqual(e.user, "u1")
            XCTAssertEqual(e.communication?.sender, Person(handle: "bob"))
            XCTAssertEqual(e.communication?.recipients, [Person(handle: "x"), Person(name: "Y", aliases: ["y@x"])])
            XCTAssertEqual(e.communication?.group, "G"); XCTAssertEqual(e.attachments, ["audio"])
        }
    }

    func testContextDecoding() throws {
        let c = try EvaluationContext.decode(
            try JSONParser.parse(
                "{\"now\":\"2026-11-23T10:00:00+01:00\",\"timezone\":\"Europe/Berlin\",\"focus\":\"Work\",\"locked\":false,\"ringer\":\"silent\",\"audio\":\"carplay\"}"
            ))
        XCTAssertEqual(c.focus, .on("Work")); XCTAssertFalse(c.locked); XCTAssertEqual(c.ringer, .silent);
        XCTAssertEqual(c.audio, .carplay)
        XCTAssertEqual(try EvaluationContext.decode(try JSONParser.parse("{\"focus\":false}")).focus, .off)
        XCTAssertEqual(try EvaluationContext.decode(try JSONParser.parse("{}")), EvaluationContext())
        XCTAssertThrowsError(try EvaluationContext.decode(try JSONParser.parse("{\"timezone\":\"Mars/Olympus\"}")))
        XCTAssertThrowsError(try EvaluationContext.decode(try JSONParser.parse("{\"ringer\":\"loud\"}")))
        XCTAssertThrowsError(try EvaluationContext.decode(try JSONParser.parse("{\"lockd\":true}")))
    }

    func testHandles() {
        XCTAssertTrue(Handle("+1 617 555 1212").matches(Handle("6175551212")))
        XCTAssertTrue(Handle("tel:(617) 555-1212").matches(Handle("+16175551212")))
        XCTAssertTrue(Handle("mailto:Alice@Example.com").matches(Handle("alice@example.com")))
        XCTAssertFalse(Handle("6175551212").matches(Handle("6175551213")))
        XCTAssertFalse(Handle("555 1212").matches(Handle("+1 617 555 1212")))  // too short to be the same number
        XCTAssertFalse(Handle("app-user-17").matches(Handle("app-user-1")))
        XCTAssertTrue(Handle("App-User-17").matches(Handle("app-user-17")))
    }

    func testRFC3339() {
        XCTAssertEqual(RFC3339.parse("1970-01-01T00:00:00Z"), 0)
        XCTAssertEqual(RFC3339.parse("2026-11-23T10:00:00+01:00"), RFC3339.parse("2026-11-23T09:00:00Z"))
        XCTAssertEqual(RFC3339.parse("2026-11-23T09:00:00.5Z"), RFC3339.parse("2026-11-23T09:00:00Z")! + 0.5)
        XCTAssertNil(RFC3339.parse("2026-11-23 09:00"))
        XCTAssertEqual(
            RFC3339.format(RFC3339.parse("2026-11-23T09:00:00Z")!, offset: 3600), "2026-11-23T10:00:00+01:00")
        XCTAssertEqual(RFC3339.format(0, offset: 0), "1970-01-01T00:00:00Z")
    }
}

/// The payload's size is measured only when the line it came from could hold one over the limit:
/// the bound that rests on must hold for any text, and a line long enough is still measured.
final class PayloadSizeShortcutTests: XCTestCase {
    func testCompactJSONIsNeverMoreThanFourTimesItsSource() throws {
        let texts = [
            "1e15", "-1e15", "9E15", "[1e15,1e15,1e15]", "{\"a\":1e15,\"b\":-9e15}", "1e9", "1e16", "1e22", "0.1",
            "1e-7", "5e-324", "-0", "1E+2", "[ 1 , 2 ]", "\"\\/\"", "\"\\u00e9\"", "\"\\ud83d\\ude00\"",
            "{\"a\":1,\"a\":2}", "{\"x\" : [true, false, null]}", "123456789.125", "1.5e300",
        ]
        for text in texts {
            let compact = JSONWriter.byteCount(of: try JSONParser.parse(text))
            XCTAssertLessThanOrEqual(compact, Envelope.compactGrowthBound * text.utf8.count, text)
        }
        // The bound is reached: 4 bytes of text can make 16.
        XCTAssertEqual(JSONWriter.byteCount(of: try JSONParser.parse("1e15")), 16)
    }

    func testAPayloadOverTheLimitIsRefusedWhenItsLineIsGiven() throws {
        let big = String(repeating: "x", count: 4100)
        let text = "{\"app\":\"a\",\"payload\":{\"aps\":{\"alert\":\"\(big)\"}}}"
        let json = try JSONParser.parse(text)
        XCTAssertThrowsError(try Envelope.decode(json, fallbackID: "g", sourceByteCount: text.utf8.count)) { error in
            XCTAssertEqual((error as? InputError)?.field, "payload")
        }
        // A number-heavy payload at the limit of the shortcut is measured and kept.
        let numbers = Array(repeating: "1e15", count: 40).joined(separator: ",")
        let short = "{\"app\":\"a\",\"payload\":{\"aps\":{},\"n\":[\(numbers)]}}"
        XCTAssertNoThrow(
            try Envelope.decode(JSONParser.parse(short), fallbackID: "g", sourceByteCount: short.utf8.count))
    }
}
