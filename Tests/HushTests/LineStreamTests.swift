import Foundation
import Hush
import XCTest

/// Reading JSON Lines a chunk at a time must hand out exactly what reading the whole input does.
final class LineStreamTests: XCTestCase {
    /// A file holding `bytes`, open for reading; closed by the caller.
    func descriptor(for bytes: [UInt8]) throws -> Int32 {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("linestream-\(UUID().uuidString)")
        try Data(bytes).write(to: url)
        let fd = open(url.path, O_RDONLY)
        try FileManager.default.removeItem(at: url)
        XCTAssertGreaterThanOrEqual(fd, 0)
        return fd
    }

    func streamed(_ bytes: [UInt8], chunkSize: Int) throws -> [(String, Int)] {
        let fd = try descriptor(for: bytes)
        defer { close(fd) }
        var lines: [(String, Int)] = []
        try LineStream(descriptor: fd, chunkSize: chunkSize).forEachLine { line, number in
            lines.append((String(decoding: line, as: UTF8.self), number))
        }
        return lines
    }

    func whole(_ bytes: [UInt8]) -> [(String, Int)] {
        var lines: [(String, Int)] = []
        JSONLines.forEachLine(in: bytes) { line, number in lines.append((String(decoding: line, as: UTF8.self), number)) }
        return lines
    }

    func testEveryChunkSizeGivesTheLinesAndNumbersOfTheWholeInput() throws {
        let long = String(repeating: "x", count: 100)
        let inputs = [
            "a\nbb\r\nccc\n",
            "first\n\n  \t\nafter blanks\nno newline at the end",
            "\(long)\n\(long)\r\n\n\(long)",
            "\r\n\r\nx\r\n",
            "",
            "\n\n\n",
            "single",
            "é ü 日本\n{\"k\": \"v\"}\n",
        ]
        for input in inputs {
            let bytes = Array(input.utf8)
            let expected = whole(bytes)
            for chunkSize in [16, 17, 31, 64, 1 << 20] {
                let got = try streamed(bytes, chunkSize: chunkSize)
                XCTAssertEqual(got.map(\.0), expected.map(\.0), "input \(input.debugDescription), chunk \(chunkSize)")
                XCTAssertEqual(got.map(\.1), expected.map(\.1), "input \(input.debugDescription), chunk \(chunkSize)")
            }
        }
    }

    func testALineLongerThanManyChunksIsHandedOutWhole() throws {
        let line = String(repeating: "0123456789", count: 1000)
        let got = try streamed(Array("\(line)\nshort\n\(line)".utf8), chunkSize: 16)
        XCTAssertEqual(got.map(\.0), [line, "short", line])
        XCTAssertEqual(got.map(\.1), [1, 2, 3])
    }

    func testPeekingTheFirstLineDoesNotConsumeIt() throws {
        let fd = try descriptor(for: Array("{\n  \"app\": \"x\"\n}\r\nnext".utf8))
        defer { close(fd) }
        let stream = LineStream(descriptor: fd, chunkSize: 16)
        XCTAssertEqual(try stream.peekFirstLine(), Array("{".utf8))
        XCTAssertEqual(try stream.peekFirstLine(), Array("{".utf8))
        XCTAssertEqual(String(decoding: try stream.readRest(), as: UTF8.self), "{\n  \"app\": \"x\"\n}\r\nnext")
    }

    func testEmptyInputHasNoFirstLine() throws {
        let fd = try descriptor(for: [])
        defer { close(fd) }
        XCTAssertNil(try LineStream(descriptor: fd).peekFirstLine())
    }

    func testOnlyAFirstLineCutShortMayBeginOneDocument() {
        XCTAssertTrue(StreamInput.mayBeginDocument(Array("{".utf8)))
        XCTAssertTrue(StreamInput.mayBeginDocument(Array("{\"app\": \"x\",  ".utf8)))
        XCTAssertTrue(StreamInput.mayBeginDocument(Array("   ".utf8)))
        XCTAssertFalse(StreamInput.mayBeginDocument(Array("{\"app\": \"x\"}".utf8)), "a whole object is a JSON Lines line")
        XCTAssertFalse(StreamInput.mayBeginDocument(Array("garbage".utf8)), "wrong before its end: a bad line")
        XCTAssertFalse(StreamInput.mayBeginDocument(Array("{\"a\": 1}}".utf8)))
    }
}
