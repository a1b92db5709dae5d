import Foundation
import GRDB
import HushCore
import XCTest

@testable import HushState

/// Schema v6: a delivered row stands for its notification's arrival (`arrival_seq`) until it is
/// replaced or withdrawn, when the arrival is written to `arrivals`. `hush.recent` must see the
/// same arrivals as before, in the same order, from memory and from the file.
final class SQLiteStateStoreArrivalTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    /// What `hush.recent` counts by, in order.
    private func arrivals(_ store: any StateStore) throws -> [String] {
        try store.recent(user: "u", since: 0).map { "\($0.id)@\($0.date) \($0.threadID ?? "-") \($0.sender ?? "-")" }
    }

    private func rows(_ path: String, _ sql: String) throws -> [String] {
        try DatabaseQueue(path: path).read { db in try String.fetchAll(db, sql: sql) }
    }

    func testADeliveredRowStandsForItsArrivalUntilItIsReplacedOrWithdrawn() throws {
        let path = directory.path("state.sqlite")
        let changes: [[StateChange]] = [
            [.deliver(note("a", date: t0, thread: "t1", sender: "s1"))],
            [.enqueue(note("q", date: t0 + 1, summaryAt: t0 + 3600))],
            [.deliver(note("b", date: t0 + 2, sender: "s2")), .deliver(note("c", date: t0 + 3))],
            // Replaced (collapsed): the arrival keeps what `a` was when it arrived.
            [.replace(note("a", date: t0 + 4, thread: "t2", sender: "s9"), queued: false)],
            [.withdraw(user: "u", app: "com.example.chat", id: "b")],
            // The same key delivered again: a second arrival, and the first one kept.
            [.deliver(note("c", date: t0 + 5, thread: "t3"))],
            // A summary delivering a notification of a delivered one's key.
            [.deliver(note("d", date: t0 + 6)), .deliver(note("d", date: t0 + 7, summaryAt: t0 + 7))],
            [.deliver(note("e", date: t0 + 8))],
        ]
        let memory = InMemoryStateStore()
        for batch in changes { try memory.apply(batch) }
        let expected = try arrivals(memory)
        XCTAssertEqual(expected.count, 7)

        do {
            let store = try SQLiteStateStore(path: path)
            for batch in changes { try store.apply(batch) }
            XCTAssertEqual(try arrivals(store), expected, "from memory")
        }
        // Only the arrivals of rows replaced or deleted, and the queued one, have rows of their own.
        XCTAssertEqual(
            try rows(path, "SELECT id || ' ' || seq FROM arrivals ORDER BY seq"), ["a 1", "q 2", "b 3", "c 4", "d 6"])
        XCTAssertEqual(
            try rows(path, "SELECT id || ' ' || arrival_seq FROM delivered WHERE arrival_seq IS NOT NULL ORDER BY 1"),
            ["c 5", "e 7"])

        // From the file, and written on: the next arrival comes after the delivered rows' own.
        let reopened = try SQLiteStateStore(path: path)
        XCTAssertEqual(try arrivals(reopened), expected, "from the file")
        try reopened.apply([.deliver(note("f", date: t0 + 9))])
        try reopened.apply([.withdraw(user: "u", app: "com.example.chat", id: "e")])
        try memory.apply([.deliver(note("f", date: t0 + 9))])
        try memory.apply([.withdraw(user: "u", app: "com.example.chat", id: "e")])
        XCTAssertEqual(try arrivals(reopened), try arrivals(memory))
        XCTAssertEqual(try arrivals(SQLiteStateStore(path: path)), try arrivals(memory))
        XCTAssertEqual(try rows(path, "SELECT id FROM arrivals WHERE seq = 7"), ["e"])
        XCTAssertEqual(try rows(path, "SELECT arrival_seq FROM delivered WHERE id = 'f'"), ["8"])
    }

    func testArrivalsStoodForByDeliveredRowsArePrunedWithThem() throws {
        let path = directory.path("state.sqlite")
        let day = 86400.0
        let store = try SQLiteStateStore(path: path, retentionDays: 1, pruneEvery: 1)
        try store.apply([.deliver(note("old", date: t0)), .deliver(note("kept", date: t0 + 1))])
        try store.apply([.replace(note("kept", date: t0 + 2, title: "newer"), queued: false)])
        try store.apply([.deliver(note("new", date: t0 + 2 * day))])
        XCTAssertEqual(try store.recent(user: "u", since: 0).map(\.id), ["new"])
        XCTAssertEqual(try SQLiteStateStore(path: path).recent(user: "u", since: 0).map(\.id), ["new"])
        XCTAssertEqual(try rows(path, "SELECT id FROM arrivals"), [])
    }

    /// A file of schema v5 keeps every arrival in `arrivals`: after the migration, those and the
    /// new ones are the user's arrivals, in order, and the seqs go on after the old ones.
    func testArrivalsOfAnOlderFileAreKeptAndFollowed() throws {
        let path = directory.path("state.sqlite")
        _ = try SQLiteStateStore(path: path)
        try DatabaseQueue(path: path).write { db in
            try db.execute(
                sql: """
                    INSERT INTO arrivals (seq, user, app, id, date) VALUES
                        (1, 'u', 'com.example.chat', 'x', \(t0)), (2, 'u', 'com.example.chat', 'y', \(t0 + 1));
                    INSERT INTO delivered (seq, user, app, id, date) VALUES (1, 'u', 'com.example.chat', 'y', \(t0 + 1));
                    """)
        }
        let store = try SQLiteStateStore(path: path)
        try store.apply([.deliver(note("z", date: t0 + 2))])
        try store.apply([.replace(note("y", date: t0 + 3), queued: false)])
        XCTAssertEqual(try store.recent(user: "u", since: 0).map(\.id), ["x", "y", "z"])
        XCTAssertEqual(try SQLiteStateStore(path: path).recent(user: "u", since: 0).map(\.id), ["x", "y", "z"])
        XCTAssertEqual(try rows(path, "SELECT arrival_seq FROM delivered WHERE id = 'z'"), ["3"])
    }
}
