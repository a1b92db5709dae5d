import Foundation
import Hush
import XCTest

/// The one way from input bytes to envelopes: a line (`Session.envelope(fromLine:number:)`), and
/// INPUT as `hush eval` reads it (`Session.forEachEnvelope(in:)`).
final class EnvelopeReadingTests: XCTestCase {
    let session = try! Engine(sources: [Engine.defaultPolicySource]).makeSession()

    func envelope(_ line: String, number: Int = 1) throws -> Envelope {
        try Array(line.utf8).withUnsafeBytes { try session.envelope(fromLine: $0, number: number) }
    }

    func testALineBecomesAnEnvelope() throws {
        let e = try envelope(#"{"app":"com.example.chat","id":"m1","user":"ana","payload":{"aps":{"alert":"hi"}}}"#)
        XCTAssertEqual(e.app, "com.example.chat")
        XCTAssertEqual(e.id, "m1")
        XCTAssertEqual(e.user, "ana")
        XCTAssertFalse(e.idIsGenerated)
    }

    func testANotificationWithoutAnIDIsGivenOneUniqueToTheSession() throws {
        let line = #"{"app":"x","payload":{"aps":{"alert":"hi"}}}"#
        let first = try envelope(line), second = try envelope(line, number: 2)
        XCTAssertTrue(first.idIsGenerated)
        XCTAssertTrue(first.id.hasPrefix("hush-"))
        XCTAssertNotEqual(first.id, second.id)
    }

    func testARefusedLineNamesItsNumberAndTheField() {
        XCTAssertThrowsError(try envelope(#"{"app": 3}"#, number: 7)) { error in
            let error = error as? LineError
            XCTAssertEqual(error?.line, 7)
            XCTAssertEqual(error?.reason.field, "app")
            XCTAssertEqual(error?.description, "line 7: app: must be a non-empty string, got 3")
        }
        XCTAssertThrowsError(try envelope("{\"app\":", number: 3)) { error in
            XCTAssertEqual((error as? LineError)?.line, 3)
            XCTAssertNil((error as? LineError)?.reason.field)
            XCTAssertEqual((error as? LineError)?.reason.message, "invalid JSON: unexpected end of input at column 8")
        }
    }

    // MARK: INPUT as hush eval reads it

    struct Read {
        /// Each line's number, and its envelope's id or its error.
        var items: [(Int, String)] = []
        /// How often the reader was about to read more input (only while streaming).
        var waits = 0
    }

    func read(_ text: String, chunkSize: Int = 16, batch: Int? = nil) throws -> Read {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("input-\(UUID().uuidString)")
        try Data(text.utf8).write(to: url)
        let fd = open(url.path, O_RDONLY)
        try FileManager.default.removeItem(at: url)
        defer { close(fd) }
        var read = Read()
        if let batch {
            // As `hush eval` reads: what is in memory, a batch at a time, then a read.
            let input = try DocumentStream(lines: LineStream(descriptor: fd, chunkSize: chunkSize))
            while !input.isFinished {
                if input.needsRead {
                    read.waits += 1
                    try input.readMore()
                    continue
                }
                let count = session.forEachEnvelopeInMemory(of: input, limit: batch) { number, decoded in
                    switch consume decoded {
                    case .success(let envelope): read.items.append((number, envelope.id))
                    case .failure(let error): read.items.append((number, error.reason.description))
                    }
                }
                XCTAssertLessThanOrEqual(count, batch)
            }
            return read
        }
        try session.forEachEnvelope(
            in: LineStream(descriptor: fd, chunkSize: chunkSize),
            { number, decoded in
                switch decoded {
                case .success(let envelope): read.items.append((number, envelope.id))
                case .failure(let error): read.items.append((number, error.reason.description))
                }
            }, beforeReading: { read.waits += 1 })
        return read
    }

    func testJSONLinesAreStreamedWithTheirLineNumbers() throws {
        let read = try read(
            "{\"app\":\"x\",\"id\":\"a\",\"payload\":{}}\n\n{\"app\": 3}\r\n{\"app\":\"x\",\"id\":\"b\",\"payload\":{}}"
        )
        XCTAssertEqual(read.items.map(\.0), [1, 3, 4])
        XCTAssertEqual(read.items.map(\.1), ["a", "app: must be a non-empty string, got 3", "b"])
        XCTAssertGreaterThan(read.waits, 0, "read a chunk at a time")
    }

    func testOneObjectOverSeveralLinesIsLineOne() throws {
        let read = try read("{\n  \"app\": \"x\",\r\n  \"id\": \"pretty\",\n  \"payload\": {}\n}\n")
        XCTAssertEqual(read.items.map(\.0), [1])
        XCTAssertEqual(read.items.map(\.1), ["pretty"])
        XCTAssertEqual(read.waits, 0, "the whole input is read before anything is handed out")
    }

    func testAFirstLineCutShortThatBeginsNoObjectIsReadAsJSONLines() throws {
        let read = try read("{\"app\":\n\"x\"}\n{\"app\":\"x\",\"id\":\"c\",\"payload\":{}}\n")
        XCTAssertEqual(read.items.map(\.0), [1, 2, 3])
        XCTAssertEqual(
            read.items.map(\.1),
            [
                "invalid JSON: unexpected end of input at column 8",
                "invalid JSON: trailing characters at column 4", "c",
            ])
    }

    func testAFirstLineWrongBeforeItsEndIsABadLineAndTheRestIsStreamed() throws {
        let read = try read("garbage\n{\"app\":\"x\",\"id\":\"d\",\"payload\":{}}\n")
        XCTAssertEqual(read.items.map(\.0), [1, 2])
        XCTAssertEqual(read.items.last?.1, "d")
        XCTAssertGreaterThan(read.waits, 0)
    }

    func testEmptyInputHasNoNotifications() throws {
        XCTAssertTrue(try read("").items.isEmpty)
        XCTAssertTrue(try read("\n \n").items.isEmpty)
    }

    func testReadingABatchAtATimeHandsOutWhatStreamingDoes() throws {
        let line = "{\"app\":\"x\",\"id\":\"n\",\"payload\":{\"aps\":{\"alert\":\"a longer line than a chunk\"}}}"
        let inputs = [
            "{\"app\":\"x\",\"id\":\"a\",\"payload\":{}}\n\n{\"app\": 3}\r\n{\"app\":\"x\",\"id\":\"b\",\"payload\":{}}",
            "{\n  \"app\": \"x\",\r\n  \"id\": \"pretty\",\n  \"payload\": {}\n}\n",
            "{\"app\":\n\"x\"}\n{\"app\":\"x\",\"id\":\"c\",\"payload\":{}}\n",
            "garbage\n{\"app\":\"x\",\"id\":\"d\",\"payload\":{}}\n",
            "", "\n \n", "\n\n" + line,
            Array(repeating: line, count: 7).joined(separator: "\n") + "\n\n  \n",
        ]
        for input in inputs {
            for chunkSize in [16, 31, 1 << 20] {
                let streamed = try read(input, chunkSize: chunkSize)
                for batch in [1, 2, 1000] {
                    let batched = try read(input, chunkSize: chunkSize, batch: batch)
                    XCTAssertEqual(
                        batched.items.map(\.0), streamed.items.map(\.0), "\(input.debugDescription) \(batch)")
                    XCTAssertEqual(
                        batched.items.map(\.1), streamed.items.map(\.1), "\(input.debugDescription) \(batch)")
                    XCTAssertEqual(batched.waits, streamed.waits, "a read whenever nothing is left in memory")
                }
            }
        }
    }
}
