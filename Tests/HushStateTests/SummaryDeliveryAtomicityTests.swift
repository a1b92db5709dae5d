import Foundation
import HushCore
import HushState
import XCTest

/// Taking a due summary and recording its delivery are one transaction: before, a crash (or a write
/// that failed, e.g. another process holding the lock past the busy timeout) between the two lost
/// the summary's notifications, already acknowledged as `summary` decisions: gone from the queue,
/// never in the delivered list.
final class SummaryDeliveryAtomicityTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    struct Refused: Error {}

    private func queueTwo(_ store: any StateStore) throws -> Double {
        let at = t0 + 3600
        try store.apply([
            .enqueue(note("a", date: t0, summaryAt: at)), .enqueue(note("b", date: t0 + 1, summaryAt: at)),
        ])
        return at
    }

    private func delivering(_ batch: SummaryBatch) -> [StateChange] {
        batch.notifications.map { n in
            var n = n
            n.groupID = "g"
            return .deliver(n)
        }
    }

    func testDeliveringTakesAndRecordsTogether() throws {
        for store: any StateStore in [try SQLiteStateStore(path: directory.path("ok.sqlite")), InMemoryStateStore()] {
            let at = try queueTwo(store)
            XCTAssertEqual(try store.deliverDueSummaries(user: "u", upTo: at - 1, recording: delivering), [])
            let batches = try store.deliverDueSummaries(user: "u", upTo: at, recording: delivering)
            XCTAssertEqual(batches.map { $0.notifications.map(\.id) }, [["b", "a"]])
            XCTAssertEqual(try store.queuedNotifications(user: "u"), [])
            XCTAssertEqual(Set(try store.groupMembers(user: "u", groupID: "g").map(\.id)), ["a", "b"])
            XCTAssertEqual(try store.deliverDueSummaries(user: "u", upTo: at, recording: delivering), [])
        }
    }

    func testAFailedDeliveryLeavesTheSummaryQueued() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        let at = try queueTwo(store)
        XCTAssertThrowsError(try store.deliverDueSummaries(user: "u", upTo: at) { _ in throw Refused() })
        XCTAssertEqual(try store.queuedNotifications(user: "u").map(\.id), ["a", "b"], "rolled back: still waiting")
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g"), [])

        // Also as another process sees the file, and the next attempt delivers it.
        let reopened = try SQLiteStateStore(path: path)
        XCTAssertEqual(try reopened.queuedNotifications(user: "u").map(\.id), ["a", "b"])
        XCTAssertEqual(try reopened.deliverDueSummaries(user: "u", upTo: at, recording: delivering).count, 1)
        XCTAssertEqual(Set(try reopened.groupMembers(user: "u", groupID: "g").map(\.id)), ["a", "b"])
    }
}
