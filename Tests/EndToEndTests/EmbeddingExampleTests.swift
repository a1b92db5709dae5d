import Foundation
import XCTest

/// The README's embedding code is `Examples/Embedding/main.swift`, word for word, and it runs.
final class EmbeddingExampleTests: XCTestCase {
    var source: String {
        get throws {
            try String(
                contentsOf: HushBinary.root.appendingPathComponent("Examples/Embedding/main.swift"), encoding: .utf8)
        }
    }

    func testTheReadmeShowsTheExampleWordForWord() throws {
        let readme = try String(contentsOf: HushBinary.root.appendingPathComponent("README.md"), encoding: .utf8)
        XCTAssertTrue(
            readme.contains("```swift\n" + (try source) + "```\n"),
            "README.md's embedding block must be Examples/Embedding/main.swift exactly")
    }

    func testTheExampleDecidesAsHushEvalDoes() throws {
        let example = Process()
        example.executableURL = HushBinary.executable.deletingLastPathComponent().appendingPathComponent(
            "EmbeddingExample")
        example.currentDirectoryURL = HushBinary.root
        let out = Pipe()
        example.standardOutput = out
        try example.run()
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        example.waitUntilExit()
        XCTAssertEqual(example.terminationStatus, 0)
        let lines = printed.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, printed)
        XCTAssertEqual(
            lines.first,
            #"alert person ["Focus Work is on (context); Alice Doe is an allowed person", "alert: active, with sound"]"#
        )

        // The same notification (the multi-line string, indentation removed) through `hush eval`:
        // the same line, byte for byte.
        let text = try source
        let start = try XCTUnwrap(text.range(of: "let json = \"\"\"\n")).upperBound
        let end = try XCTUnwrap(text.range(of: "\n    \"\"\"", range: start..<text.endIndex)).lowerBound
        let json = text[start..<end].split(separator: "\n").map { $0.dropFirst(4) }.joined(separator: "\n")
        let context = try HushBinary.file(#"{"focus": "Work"}"#)
        let eval = try HushBinary.run(
            ["eval", "--ephemeral", "--policy", "policies/work.lua", "--context", context.path], stdin: json + "\n")
        XCTAssertEqual(eval.status, 0, eval.stderr)
        XCTAssertEqual(eval.lines, [lines[1]])
    }
}
