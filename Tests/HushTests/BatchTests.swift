import Foundation
import Hush
import HushJSON
import HushPolicy
import XCTest

/// The README's "Embedding" example of a batch, as an embedder writes it.
final class BatchTests: XCTestCase {
    func testARunOfEvaluationsInOneBatch() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hush-batch-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.sqlite").path
        let engine = try Engine(sources: [PolicySource(name: "policy.lua", text: "timezone \"UTC\"\n")])
        let store = try SQLiteStateStore(path: path)
        let session = try engine.makeSession(store: store)
        let context = EvaluationContext(now: RFC3339.parse("2026-11-23T10:00:00Z"))
        let envelopes = try (0..<3).map { i in
            try Envelope.decode(
                JSONParser.parse(
                    "{\"app\":\"com.example.chat\",\"id\":\"m\(i)\",\"payload\":{\"aps\":{\"alert\":\"hi\"}}}"),
                fallbackID: "unused")
        }

        let decisions = try store.batch {  // one commit for the run
            envelopes.map { try? session.evaluate($0, context: context) }
        }
        XCTAssertEqual(decisions.map { $0?.id }, ["m0", "m1", "m2"])
        // Committed: another store on the file sees every one.
        let other = try SQLiteStateStore(path: path)
        XCTAssertEqual(
            try (0..<3).compactMap { try other.delivered(user: "default", app: "com.example.chat", id: "m\($0)")?.id },
            ["m0", "m1", "m2"])
    }
}
