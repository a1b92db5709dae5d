import Foundation
import GRDB
import HushCore
import XCTest

@testable import HushState

/// Each connection keeps the users it read in memory: what another connection (another process,
/// another `--jobs` worker) commits must show at the next read, and a write that is undone must
/// leave nothing behind in memory.
final class SQLiteStateStoreUserCacheTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    /// A user's version is what tells one connection that another wrote them: the stamps one
    /// connection writes never repeat, and two connections start from different places.
    func testVersionStampsNeverRepeatAndDifferBetweenConnections() {
        var first = VersionStamps()
        var second = VersionStamps()
        var seen = Set<UInt64>()
        for _ in 0..<100_000 { XCTAssertTrue(seen.insert(first.next()).inserted) }
        let theirs = (0..<1_000).map { _ in second.next() }
        XCTAssertFalse(theirs.contains { seen.contains($0) })
    }

    /// Reads find their statements by the SQL text's words: texts made on the fly (each a new
    /// string) and constant ones alike read what their SQL says, and the store keeps at most
    /// `ReadStatement.limit` of them.
    func testEveryReadRunsItsOwnSQL() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        let constant = "SELECT 7 + ?"
        try store.dbQueue.read { db in
            for i in 0..<100 {
                XCTAssertEqual(try store.fetchInteger(db, sql: "SELECT \(i) * 2", []), Int64(i * 2))
                XCTAssertEqual(try store.fetchInteger(db, sql: constant, [Int64(i).databaseValue]), Int64(7 + i))
                let short = "SELECT \(i % 10)"  // short enough to be kept in the string's own words
                XCTAssertEqual(try store.fetchInteger(db, sql: short, []), Int64(i % 10))
            }
        }
        XCTAssertLessThanOrEqual(store.readStatements.count, ReadStatement.limit)
    }

    func testChangesByAnotherConnectionShowThroughTheCache() throws {
        let path = directory.path("state.sqlite")
        let reader = try SQLiteStateStore(path: path)
        let writer = try SQLiteStateStore(path: path)
        try writer.apply((0..<5).map { .deliver(note("m\($0)", date: t0 + Double($0), group: "g")) })
        XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "g").map(\.id), ["m0", "m1", "m2", "m3", "m4"])
        XCTAssertNotNil(reader.userCache.users["u"])

        // Replaced in place (same seq): the new content, not the cached one.
        try writer.apply([.deliver(note("m1", date: t0 + 10, title: "edited", group: "g"))])
        XCTAssertEqual(
            try reader.groupMembers(user: "u", groupID: "g").map(\.title),
            ["title m0", "edited", "title m2", "title m3", "title m4"])
        // Moved, pruned, and a new row that may reuse a deleted row's seq.
        try writer.apply([.deliver(note("m4", date: t0 + 11, group: "h"))])
        try writer.prune(before: t0 + 1)
        try writer.apply([.deliver(note("m5", date: t0 + 12, title: "new", group: "g"))])
        XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "g").map(\.id), ["m1", "m2", "m3", "m5"])
        XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "g").last?.title, "new")
        XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "h").map(\.id), ["m4"])
        XCTAssertEqual(try reader.groupDigest(user: "u", groupID: "g")?.memberCount, 4)
        try writer.setManualFocus(user: "u", ManualFocus(name: "Sleep", since: t0))
        XCTAssertEqual(try reader.manualFocus(user: "u")?.name, "Sleep")
    }

    /// Another connection's write to one user drops that user alone; the next batch of this
    /// connection sees it.
    func testAnotherConnectionsWriteIsSeenByTheNextBatchAndDropsOnlyItsUser() throws {
        let path = directory.path("state.sqlite")
        let mine = try SQLiteStateStore(path: path)
        let other = try SQLiteStateStore(path: path)
        try mine.apply([.deliver(note("a", user: "u", date: t0)), .deliver(note("b", user: "v", date: t0))])
        try mine.batch {
            XCTAssertEqual(try? mine.recent(user: "u", since: 0).map(\.id), ["a"])
            XCTAssertEqual(try? mine.recent(user: "v", since: 0).map(\.id), ["b"])
        }
        try other.apply([.enqueue(note("c", user: "v", date: t0 + 1, summaryAt: t0 + 60))])
        try mine.batch {
            XCTAssertEqual(try? mine.queued(user: "v", app: "com.example.chat", id: "c")?.id, "c")
            XCTAssertEqual(try? mine.hasDueSummaries(user: "v", upTo: t0 + 60), true)
        }
        XCTAssertNotNil(mine.userCache.users["u"], "a user nobody else wrote stays in memory")
        // Our own writes are not taken for another's.
        try mine.apply([.deliver(note("d", user: "u", date: t0 + 2))])
        try other.apply([.deliver(note("e", user: "v", date: t0 + 3))])
        XCTAssertEqual(try mine.recent(user: "u", since: 0).map(\.id), ["a", "d"])
        XCTAssertNotNil(mine.userCache.users["u"])
        XCTAssertEqual(try mine.recent(user: "v", since: 0).map(\.id), ["b", "c", "e"])
        XCTAssertEqual(try other.recent(user: "u", since: 0).map(\.id), ["a", "d"])
    }

    /// A write of this store to a user another connection changed meanwhile must not keep the
    /// stale copy (and stamp it as the file's).
    func testOwnWriteAfterAnotherConnectionsWriteKeepsBoth() throws {
        let path = directory.path("state.sqlite")
        let mine = try SQLiteStateStore(path: path)
        let other = try SQLiteStateStore(path: path)
        XCTAssertEqual(try mine.groupMembers(user: "u", groupID: "g"), [])
        XCTAssertEqual(try mine.recent(user: "u", since: 0), [])
        try other.apply([.deliver(note("theirs", date: t0, group: "g"))])
        try mine.apply([.deliver(note("mine", date: t0 + 1, group: "g"))])
        XCTAssertEqual(try mine.groupMembers(user: "u", groupID: "g").map(\.id), ["theirs", "mine"])
        XCTAssertEqual(try mine.recent(user: "u", since: 0).map(\.id), ["theirs", "mine"])
    }

    /// A batch that cannot commit leaves no trace in memory: every read answers what the file holds.
    func testAFailedCommitLeavesNoPhantomState() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        try store.apply([.deliver(note("kept", date: t0, group: "g"))])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["kept"])
        // A trigger that makes the commit fail: deferred foreign keys are checked at the commit.
        try store.dbQueue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE block (x INTEGER REFERENCES parent(y) DEFERRABLE INITIALLY DEFERRED);
                    CREATE TABLE parent (y INTEGER PRIMARY KEY);
                    CREATE TRIGGER fail AFTER INSERT ON delivered WHEN new.id = 'phantom'
                    BEGIN INSERT INTO block VALUES (1); END;
                    """)
        }
        XCTAssertThrowsError(
            try store.batch {
                let applied = (try? store.apply([.deliver(note("phantom", date: t0 + 1, group: "g"))])) != nil
                XCTAssertTrue(applied)
                XCTAssertEqual(try? store.groupMembers(user: "u", groupID: "g").map(\.id), ["kept", "phantom"])
            })
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["kept"])
        XCTAssertEqual(try store.groupDigest(user: "u", groupID: "g")?.memberCount, 1)
        XCTAssertNil(try store.delivered(user: "u", app: "com.example.chat", id: "phantom"))
        XCTAssertEqual(try store.recent(user: "u", since: 0).map(\.id), ["kept"])
    }

    /// A write undone inside a batch (its savepoint rolled back) is undone in memory too.
    func testAFailedWriteInsideABatchIsUndoneInMemory() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        try store.apply([.deliver(note("kept", date: t0, group: "g"))])
        try store.dbQueue.write { db in
            try db.execute(
                sql: """
                    CREATE TRIGGER fail AFTER INSERT ON arrivals WHEN new.id = 'bad'
                    BEGIN SELECT RAISE(ABORT, 'refused'); END;
                    """)
        }
        try store.batch {
            let refused =
                (try? store.apply([
                    .withdraw(user: "u", app: "com.example.chat", id: "kept"), .enqueue(note("bad", date: t0)),
                ])) == nil
            XCTAssertTrue(refused)
            XCTAssertEqual(try? store.groupMembers(user: "u", groupID: "g").map(\.id), ["kept"])
        }
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["kept"])
    }

    /// A v2 file (before the user versions) opens, and its users are known to other connections.
    func testAV2FileGainsAVersionForEveryUser() throws {
        let path = directory.path("v2.sqlite")
        do {
            let v2 = try DatabaseQueue(path: path)
            try SQLiteStateStore.migrator.migrate(v2, upTo: "v2")
            try v2.write { db in
                try db.execute(
                    sql: "INSERT INTO manual_focus (user, name, since) VALUES ('old', 'Sleep', ?)", arguments: [t0])
            }
            try v2.close()
        }
        let store = try SQLiteStateStore(path: path)
        XCTAssertEqual(try store.manualFocus(user: "old")?.name, "Sleep")
        try store.dbQueue.read { db in
            XCTAssertEqual(try String.fetchAll(db, sql: "SELECT user FROM user_versions"), ["old"])
            XCTAssertEqual(try Int.fetchOne(db, sql: "PRAGMA user_version"), SQLiteStateStore.schemaVersion)
        }
        let other = try SQLiteStateStore(path: path)
        try other.prune(before: t0)
        try other.setManualFocus(user: "old", nil)
        XCTAssertNil(try store.manualFocus(user: "old"))
    }

    /// A v3 file (rowid tables, global seqs) opens as v4: every row is kept with its order (group,
    /// queue, arrivals), and the rows written after it come after it, for this connection and others.
    func testAV3FileKeepsItsRowsAndTheirOrder() throws {
        let path = directory.path("v3.sqlite")
        do {
            let v3 = try DatabaseQueue(path: path)
            try SQLiteStateStore.migrator.migrate(v3, upTo: "v3")
            try v3.write { db in
                // In group g, b joined before a; in the queue, y was enqueued before x.
                try db.execute(
                    sql: """
                        INSERT INTO delivered (seq, rev, user, app, id, date, title, group_id) VALUES
                            (9, 1, 'u', 'com.example.chat', 'a', ?, 'A', 'g'),
                            (5, 2, 'u', 'com.example.chat', 'b', ?, 'B', 'g');
                        INSERT INTO queue (seq, user, app, id, date, summary_at) VALUES
                            (7, 'u', 'com.example.news', 'x', ?, ?), (3, 'u', 'com.example.news', 'y', ?, ?);
                        INSERT INTO arrivals (seq, user, app, id, date, title, sender) VALUES
                            (1, 'u', 'com.example.chat', 'b', ?, 'B', '+1555'),
                            (2, 'u', 'com.example.chat', 'a', ?, 'A', NULL);
                        """,
                    arguments: [t0 + 1, t0, t0, t0 + 3600, t0, t0 + 3600, t0, t0 + 1])
            }
            try v3.close()
        }
        let store = try SQLiteStateStore(path: path)
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.title), ["B", "A"])
        XCTAssertEqual(try store.queuedNotifications(user: "u").map(\.id), ["y", "x"])
        XCTAssertEqual(try store.recent(user: "u", since: 0).map(\.id), ["b", "a"])
        XCTAssertEqual(try store.recent(user: "u", since: 0).first?.sender, "+1555")
        try store.dbQueue.read { db in
            XCTAssertEqual(try Int.fetchOne(db, sql: "PRAGMA user_version"), SQLiteStateStore.schemaVersion)
        }

        try store.apply([
            .deliver(note("c", date: t0 + 2, group: "g")),
            .enqueue(note("z", app: "com.example.news", date: t0, summaryAt: t0 + 3600)),
        ])
        let other = try SQLiteStateStore(path: path)
        for reader in [store, other] {
            XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "g").map(\.id), ["b", "a", "c"])
            XCTAssertEqual(try reader.queuedNotifications(user: "u").map(\.id), ["y", "x", "z"])
            XCTAssertEqual(try reader.recent(user: "u", since: 0).map(\.id), ["b", "a", "c", "z"])
        }
        // The other connection's writes come after this one's too.
        try other.apply([.deliver(note("a", date: t0 + 3, group: "h")), .deliver(note("b", date: t0 + 4, group: "g"))])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["b", "c"])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "h").map(\.id), ["a"])
        try store.apply([.deliver(note("d", date: t0 + 5, group: "h"))])
        XCTAssertEqual(try other.groupMembers(user: "u", groupID: "h").map(\.id), ["a", "d"])
        XCTAssertEqual(try other.recent(user: "u", since: 0).map(\.id), ["b", "a", "c", "z", "a", "b", "d"])
    }

    /// A v4 file (the delivered list keyed by (user, app, id), seqs with gaps) opens as v5, keyed
    /// by (user, seq): each user's rows are numbered again in their order, and every write after
    /// it (new, replaced in place, moved to another group, withdrawn) leaves one row per
    /// notification, in the order both this connection and another read.
    func testAV4FileIsKeyedByUserAndSeqAndKeepsItsOrder() throws {
        let path = directory.path("v4.sqlite")
        do {
            let v4 = try DatabaseQueue(path: path)
            try SQLiteStateStore.migrator.migrate(v4, upTo: "v4")
            try v4.write { db in
                // In group g, b joined before a; v's one row has u's seq.
                try db.execute(
                    sql: """
                        INSERT INTO delivered (seq, user, app, id, date, title, group_id) VALUES
                            (9, 'u', 'com.example.chat', 'a', ?, 'A', 'g'),
                            (4, 'u', 'com.example.chat', 'b', ?, 'B', 'g'),
                            (12, 'u', 'com.example.mail', 'm', ?, 'M', NULL),
                            (9, 'v', 'com.example.chat', 'a', ?, 'V', 'g');
                        """,
                    arguments: [t0 + 1, t0, t0 + 2, t0])
            }
            try v4.close()
        }
        func rows(_ db: Database) throws -> [String] {
            try Row.fetchAll(db, sql: "SELECT user, seq, id, group_id FROM delivered ORDER BY user, seq").map {
                "\($0[0] as String) \($0[1] as Int64) \($0[2] as String) \(($0[3] as String?) ?? "-")"
            }
        }
        let store = try SQLiteStateStore(path: path)
        try store.dbQueue.read { db in
            XCTAssertEqual(try Int.fetchOne(db, sql: "PRAGMA user_version"), SQLiteStateStore.schemaVersion)
            XCTAssertEqual(try rows(db), ["u 1 b g", "u 2 a g", "u 3 m -", "v 1 a g"])
            // (user, seq) is the key: the table's until v7, its unique index since.
            XCTAssertEqual(
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT name FROM pragma_index_info(
                            (SELECT name FROM pragma_index_list('delivered') WHERE "unique" = 1))
                        """),
                ["user", "seq"])
        }
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.title), ["B", "A"])

        try store.apply([
            .deliver(note("c", date: t0 + 3, group: "g")),
            // Replaced in place: b keeps its place in g.
            .deliver(note("b", date: t0 + 4, title: "B2", group: "g")),
            // Moved: a leaves g for h.
            .deliver(note("a", date: t0 + 5, group: "h")),
            .withdraw(user: "u", app: "com.example.mail", id: "m"),
        ])
        let other = try SQLiteStateStore(path: path)
        for reader in [store, other] {
            XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "g").map(\.id), ["b", "c"])
            XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "g").first?.title, "B2")
            XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "h").map(\.id), ["a"])
            XCTAssertNil(try reader.delivered(user: "u", app: "com.example.mail", id: "m"))
            XCTAssertEqual(try reader.groupMembers(user: "v", groupID: "g").map(\.title), ["V"])
        }
        try store.dbQueue.read { db in
            XCTAssertEqual(try rows(db), ["u 1 b g", "u 4 c g", "u 6 a h", "v 1 a g"])
        }

        // A connection that has not read u's list yet withdraws from it, and moves one back.
        let third = try SQLiteStateStore(path: path)
        try third.apply([
            .withdraw(user: "u", app: "com.example.chat", id: "c"),
            .deliver(note("a", date: t0 + 6, group: "g")),
        ])
        for reader in [store, other, third] {
            XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "g").map(\.id), ["b", "a"])
            XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "h").map(\.id), [])
        }
        try store.dbQueue.read { db in
            XCTAssertEqual(try rows(db), ["u 1 b g", "u 7 a g", "v 1 a g"])
        }
    }

    /// A prune by another connection (the service's hourly one) that deletes every row of a user
    /// is seen by a connection holding that user: it reads nothing, and what it delivers next is
    /// all the file holds.
    func testAUserPrunedWhollyByAnotherConnectionIsReadAgain() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        try store.apply([.deliver(note("x", date: t0, group: "g")), .deliver(note("y", date: t0 + 1, group: "g"))])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["x", "y"])

        try SQLiteStateStore(path: path).prune(before: t0 + 100)
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), [])
        XCTAssertNil(try store.delivered(user: "u", app: "com.example.chat", id: "x"))

        try store.apply([
            .deliver(note("y", date: t0 + 200, group: "g")), .deliver(note("x", date: t0 + 201, group: "g")),
        ])
        for reader in [store, try SQLiteStateStore(path: path)] {
            XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "g").map(\.id), ["y", "x"])
        }
    }

    /// A user met before the file held anything of theirs is known empty without a read of each
    /// part (`CachedUser.startEmpty`): what another connection writes of them next shows, part
    /// by part, and so does what this connection writes on top.
    func testAUserMetWithNoRowsSeesAnotherConnectionsFirstWrites() throws {
        let path = directory.path("state.sqlite")
        let mine = try SQLiteStateStore(path: path)
        let other = try SQLiteStateStore(path: path)
        XCTAssertEqual(try mine.groupMembers(user: "u", groupID: "g"), [])
        XCTAssertNil(try mine.queued(user: "u", app: "com.example.chat", id: "q"))
        XCTAssertEqual(try mine.hasDueSummaries(user: "u", upTo: t0 + 100), false)
        XCTAssertEqual(try mine.calls(user: "u", since: 0), [])
        XCTAssertNil(try mine.manualFocus(user: "u"))
        XCTAssertEqual(mine.userCache.users["u"]?.calls, [], "met as empty, not left to read")

        try other.apply([
            .deliver(note("d", date: t0, group: "g")),
            .enqueue(note("q", date: t0 + 1, summaryAt: t0 + 60)),
            .recordCall(CallRecord(user: "u", date: t0 + 2, app: "phone", caller: Person(handle: "ana"))),
        ])
        try other.setManualFocus(user: "u", ManualFocus(name: "Sleep", since: t0))
        XCTAssertEqual(try mine.groupMembers(user: "u", groupID: "g").map(\.id), ["d"])
        XCTAssertEqual(try mine.queued(user: "u", app: "com.example.chat", id: "q")?.id, "q")
        XCTAssertEqual(try mine.hasDueSummaries(user: "u", upTo: t0 + 100), true)
        XCTAssertEqual(try mine.calls(user: "u", since: 0).map(\.caller.handle), ["ana"])
        XCTAssertEqual(try mine.manualFocus(user: "u")?.name, "Sleep")

        try mine.apply([.deliver(note("e", date: t0 + 3, group: "g"))])
        for reader in [mine, other, try SQLiteStateStore(path: path)] {
            XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "g").map(\.id), ["d", "e"])
            XCTAssertEqual(try reader.recent(user: "u", since: 0).map(\.id), ["d", "q", "e"])
        }
    }

    /// Every way of writing a user's rows stamps a version for them: what tells another
    /// connection's cache that they changed.
    func testEveryUserWithRowsHasAVersion() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        try store.apply([.deliver(note("a", user: "delivers", date: t0, group: "g"))])
        try store.apply([.enqueue(note("b", user: "queues", date: t0, summaryAt: t0 + 60))])
        try store.apply([.replace(note("c", user: "replaces", date: t0), queued: false)])
        try store.apply([.replace(note("c", user: "replacesQueued", date: t0, summaryAt: t0 + 60), queued: true)])
        try store.apply([
            .recordCall(CallRecord(user: "calls", date: t0, app: "phone", caller: Person(handle: "ana")))
        ])
        try store.setManualFocus(user: "focuses", ManualFocus(name: "Sleep", since: t0))
        try store.apply([.enqueue(note("s", user: "summarised", date: t0, summaryAt: t0 + 60))])
        _ = try store.deliverDueSummaries(user: "summarised", upTo: t0 + 60) { batch in
            batch.notifications.map { .deliver($0) }
        }
        try store.apply([.dequeue(user: "queues", app: "com.example.chat", id: "b")])
        let usersWithRows = """
            SELECT user FROM delivered UNION SELECT user FROM queue UNION SELECT user FROM arrivals
            UNION SELECT user FROM calls UNION SELECT user FROM manual_focus
            """
        try store.dbQueue.read { db in
            XCTAssertEqual(
                Set(try String.fetchAll(db, sql: usersWithRows)),
                ["delivers", "queues", "replaces", "replacesQueued", "calls", "focuses", "summarised"])
            XCTAssertEqual(try String.fetchAll(db, sql: "\(usersWithRows) EXCEPT SELECT user FROM user_versions"), [])
        }
    }

    /// A user with rows and no version (a file written by other means) is read, not taken as
    /// empty: their next notification joins their group after the others and takes a seq of its own.
    func testAUserWithRowsButNoVersionIsReadNotTakenAsEmpty() throws {
        let path = directory.path("state.sqlite")
        try SQLiteStateStore(path: path).apply(
            (0..<3).map { .deliver(note("m\($0)", date: t0 + Double($0), group: "g")) })
        try DatabaseQueue(path: path).write { try $0.execute(sql: "DELETE FROM user_versions") }

        let store = try SQLiteStateStore(path: path)
        XCTAssertEqual(try store.hasDueSummaries(user: "u", upTo: t0), false)
        try store.apply([.deliver(note("m3", date: t0 + 3, group: "g"))])
        for reader in [store, try SQLiteStateStore(path: path)] {
            XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "g").map(\.id), ["m0", "m1", "m2", "m3"])
        }
    }
}
