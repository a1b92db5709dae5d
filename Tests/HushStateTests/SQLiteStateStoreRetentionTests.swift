import Foundation
import HushCore
import XCTest

@testable import HushState

/// What is particular to the SQLite store's retention (the rest is in the conformance suite): the
/// last prune is kept in the file, so short-lived processes prune too.
final class SQLiteStateStoreRetentionTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private let day = 86400.0

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    private func isDelivered(_ store: SQLiteStateStore, _ id: String, user: String = "u") throws -> Bool {
        try store.delivered(user: user, app: "com.example.chat", id: id) != nil
    }

    func testPrunesWhenTimeMovesOnEvenAcrossProcesses() throws {
        let path = directory.path("state.sqlite")
        let ana = Person(handle: "+1555")
        do {
            let store = try SQLiteStateStore(path: path, retentionDays: 2)
            try store.apply([
                .deliver(note("old", date: t0, group: "g")),
                .enqueue(note("queued", date: t0, summaryAt: t0 + 30 * day)),
                .recordCall(CallRecord(user: "u", date: t0, app: "phone", caller: ana)),
            ])
            try store.addInteractions([
                Interaction(user: "u", date: t0 - 100 * day, direction: .outgoing, kind: .call, people: [ana]),
                Interaction(user: "u", date: t0 - 10 * day, direction: .outgoing, kind: .call, people: [ana]),
            ])
        }
        // A later, short-lived process: its first apply three days on prunes.
        let store = try SQLiteStateStore(path: path, retentionDays: 2)
        try store.apply([.deliver(note("new", date: t0 + 3 * day, group: "g"))])
        XCTAssertFalse(try isDelivered(store, "old"))
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["new"])
        XCTAssertEqual(try store.calls(user: "u", since: 0), [])
        XCTAssertEqual(try store.recent(user: "u", since: 0).map(\.id), ["new"])
        XCTAssertNotNil(try store.queued(user: "u", app: "com.example.chat", id: "queued"))
        // Interactions are kept as long as suggestions look back (90 days).
        XCTAssertEqual(try store.interactions(user: "u", since: 0).map(\.date), [t0 - 10 * day])
    }

    /// A prune skips the user's delivered rows while the cached list holds none older than its
    /// cutoff; what the last prune kept, and what arrives older later, are still deleted from the
    /// file when they fall behind (read back by a second store, not the first one's memory).
    func testAPruneThatSkipsTheDeliveredRowsStillDeletesThemOnceTheyAreOld() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path, retentionDays: 1, pruneEvery: 1)
        func inFile() throws -> [String] {
            let other = try SQLiteStateStore(path: path, retentionDays: 1)
            return try ["x", "a", "b", "c", "older", "d"].filter { try isDelivered(other, $0) }
        }
        try store.apply([
            .deliver(note("x", date: t0)), .deliver(note("a", date: t0 + 1.5 * day)),
            .deliver(note("b", date: t0 + 1.6 * day)),
        ])
        XCTAssertEqual(try inFile(), ["a", "b"])  // behind t0 + 0.6 days
        try store.apply([.deliver(note("c", date: t0 + 2 * day))])  // nothing behind t0 + 1 day
        XCTAssertEqual(try inFile(), ["a", "b", "c"])
        try store.apply([.deliver(note("d", date: t0 + 2.55 * day))])  // "a" is behind t0 + 1.55 days
        XCTAssertEqual(try inFile(), ["b", "c", "d"])
        try store.apply([.deliver(note("older", date: t0 + 1.56 * day))])
        try store.apply([.deliver(note("d", date: t0 + 2.7 * day))])  // both behind t0 + 1.7 days
        XCTAssertEqual(try inFile(), ["c", "d"])
        XCTAssertFalse(try isDelivered(store, "older"))
    }

    /// Arrivals are keyed by (user, seq) too: a prune skips them while nothing written is older
    /// than its cutoff. One written late with an older date (out of order, or through the queue)
    /// must still go at the next prune that reaches it.
    func testAPruneThatSkipsTheArrivalsStillDeletesOneWrittenLateWithAnOlderDate() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path, retentionDays: 1, pruneEvery: 1)
        // Read only at the end: another store opening the file makes this one read its users again.
        try store.apply([.deliver(note("a", date: t0 + 1.0 * day))])  // cutoff t0: nothing older
        try store.apply([.deliver(note("b", date: t0 + 1.2 * day))])  // cutoff t0 + 0.2 days
        try store.apply([.enqueue(note("late", date: t0 + 0.5 * day, summaryAt: t0 + 3 * day))])
        try store.apply([.deliver(note("early", date: t0 + 0.4 * day))])  // kept: after t0 + 0.2
        XCTAssertEqual(try store.recent(user: "u", since: -.infinity).map(\.id), ["a", "b", "late", "early"])
        try store.apply([.deliver(note("c", date: t0 + 1.45 * day))])  // "early" is behind t0 + 0.45
        XCTAssertEqual(try store.recent(user: "u", since: -.infinity).map(\.id), ["a", "b", "late", "c"])
        try store.apply([.deliver(note("d", date: t0 + 1.6 * day))])  // "late" is behind t0 + 0.6
        let other = try SQLiteStateStore(path: path, retentionDays: 1)
        XCTAssertEqual(try other.recent(user: "u", since: -.infinity).map(\.id), ["a", "b", "c", "d"])
    }

    func testTheDefaultRetention() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        XCTAssertEqual(store.retentionDays, 7)
        XCTAssertEqual(store.retention.seconds, 7 * day)
        XCTAssertEqual(store.retention.pruneEvery, 1000)
        XCTAssertEqual(store.retention.interval, day)
        XCTAssertEqual(store.retention.interactionSeconds, 90 * day)
    }
}
