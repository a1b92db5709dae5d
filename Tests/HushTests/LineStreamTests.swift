import Foundation
import Hush
import XCTest

/// Reading JSON Lines a chunk at a time must hand out exactly what reading bytes in memory does.
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

    func inMemory(_ bytes: [UInt8]) throws -> [(String, Int)] {
        var lines: [(String, Int)] = []
        try LineStream(bytes: bytes).forEachLine { line, number in
            lines.append((String(decoding: line, as: UTF8.self), number))
        }
        return lines
    }

    func testLinesAreSplitOnLFAndCRLFAndBlankOnesAreCountedNotHandedOut() throws {
        let got = try inMemory(Array("a\r\n\n  \t\nb\n\r\nc".utf8))
        XCTAssertEqual(got.map(\.0), ["a", "b", "c"])
        XCTAssertEqual(got.map(\.1), [1, 4, 6])
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
            let expected = try inMemory(bytes)
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

    /// `hush eval` fills its write-behind batches up to a number of bytes of input, across reads:
    /// a call stops once the lines it handed out reach its limit, never cutting one, and the bytes
    /// counted are the input's (line endings and blank lines included).
    func testAByteLimitStopsAfterTheLineThatReachesItAndCountsEveryByteOfInput() throws {
        let input = "aaaa\r\nbbbb\n\ncccc\ndddddddddd\ne"  // 6 + 5 + 1 + 5 + 11 + 1 bytes
        for chunkSize in [16, 1 << 20] {
            let fd = try descriptor(for: Array(input.utf8))
            defer { close(fd) }
            let stream = LineStream(descriptor: fd, chunkSize: chunkSize)
            var batches: [[String]] = [[]]
            var batchStart = 0
            while !stream.isFinished {
                if stream.needsRead {
                    try stream.readMore()
                    continue
                }
                stream.forEachLineInMemory(limit: .max, byteLimit: 7 - (stream.bytesHandedOut - batchStart)) {
                    line, _ in batches[batches.count - 1].append(String(decoding: line, as: UTF8.self))
                }
                if stream.bytesHandedOut - batchStart >= 7 {
                    batchStart = stream.bytesHandedOut
                    batches.append([])
                }
            }
            // "aaaa\r\n" is 6 bytes, under 7: "bbbb" follows; the blank line and "cccc" are 6, so
            // "dddddddddd" follows, though it passes the limit by 10 bytes; "e" ends the input.
            XCTAssertEqual(batches, [["aaaa", "bbbb"], ["cccc", "dddddddddd"], ["e"]], "chunk \(chunkSize)")
            XCTAssertEqual(stream.bytesHandedOut, input.utf8.count)
        }
    }
}
