import Hush
import HushCore
import XCTest

/// A body that throws stops the input where it is, on every way of reading it (a closure shape
/// that Swift 6.3 miscompiled crashed here instead).
final class ThrowThroughStreamTests: XCTestCase {
    struct Stop: Error {}
    let bytes = Array("{\"app\":\"x\",\"payload\":{}}\n{\"app\": 3}\n{\"app\":\"y\",\"payload\":{}}\n".utf8)

    func testLines() throws {
        var seen: [Int] = []
        XCTAssertThrowsError(
            try LineStream(bytes: bytes).forEachLineInMemory(limit: .max) { _, number in
                seen.append(number)
                if number == 2 { throw Stop() }
            })
        XCTAssertEqual(seen, [1, 2])
    }

    func testItemsAndDocuments() throws {
        for stopAt in [1, 2] {
            var items: [Int] = []
            XCTAssertThrowsError(
                try DocumentStream(lines: LineStream(bytes: bytes)).forEachItemInMemory(limit: .max) { number, _ in
                    items.append(number)
                    if number == stopAt { throw Stop() }
                })
            XCTAssertEqual(items, Array(1...stopAt))
            var documents: [Int] = []
            XCTAssertThrowsError(
                try DocumentStream(lines: LineStream(bytes: bytes)).forEachInMemory(limit: .max) { number, _, _ in
                    documents.append(number)
                    if number == stopAt { throw Stop() }
                })
            XCTAssertEqual(documents, Array(1...stopAt))
            var items2: [Int] = []
            XCTAssertThrowsError(
                try StreamInput.forEachItem(in: LineStream(bytes: bytes)) { number, _ in
                    items2.append(number)
                    if number == stopAt { throw Stop() }
                })
            XCTAssertEqual(items2, Array(1...stopAt))
            let session = try Engine().makeSession()
            var envelopes: [Int] = []
            XCTAssertThrowsError(
                try session.forEachEnvelopeInMemory(
                    of: DocumentStream(lines: LineStream(bytes: bytes)), limit: .max
                ) { number, _ in
                    envelopes.append(number)
                    if number == stopAt { throw Stop() }
                })
            XCTAssertEqual(envelopes, Array(1...stopAt))
        }
    }
}
