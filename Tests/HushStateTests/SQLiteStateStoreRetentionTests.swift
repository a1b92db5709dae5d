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

    func testTheDefaultRetention() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        XCTAssertEqual(store.retentionDays, 7)
        XCTAssertEqual(store.retention.seconds, 7 * day)
        XCTAssertEqual(store.retention.pruneEvery, 1000)
        XCTAssertEqual(store.retention.interval, day)
        XCTAssertEqual(store.retention.interactionSeconds, 90 * day)
    }
}
