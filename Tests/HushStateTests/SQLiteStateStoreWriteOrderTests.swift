import Foundation
import GRDB
import HushCore
import XCTest

@testable import HushState

/// Schema v7: `delivered`, `arrivals` and `queue` keep their rows in the order they are written,
/// with their keys as unique indexes. A file of v6 keeps every row, and the store goes on
/// writing it as before: rows replaced in place keep their seq, and a key is never taken twice.
final class SQLiteStateStoreWriteOrderTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    private let tables = ["delivered", "arrivals", "queue"]

    /// Every row of the three tables, every column, in key order.
    private func contents(_ db: Database) throws -> [String] {
        var lines: [String] = []
        for table in tables {
            let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('\(table)') ORDER BY name")
            let list = columns.map { "quote(\($0))" }.joined(separator: " || '|' || ")
            let order = table == "queue" ? "user, app, id" : "user, seq"
            let rows = try String.fetchAll(
                db, sql: "SELECT \(list.isEmpty ? "''" : list) FROM \(table) ORDER BY \(order)")
            lines += rows.map { "\(table): \($0)" }
        }
        return lines
    }

    func testAFileOfSchemaV6KeepsItsRowsAndItsKeys() throws {
        let path = directory.path("state.sqlite")
        do {
            let v6 = try DatabaseQueue(path: path)
            try SQLiteStateStore.migrator.migrate(v6, upTo: "v6")
            try v6.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO delivered (seq, user, app, id, date, title, group_id, arrival_seq) VALUES
                            (1, 'u', 'com.example.chat', 'b', ?, 'B', 'g', 2),
                            (2, 'u', 'com.example.chat', 'a', ?, 'A', 'g', 3),
                            (3, 'u', 'com.example.mail', 'm', ?, 'M', NULL, NULL),
                            (1, 'v', 'com.example.chat', 'a', ?, 'V', 'g', 1);
                        INSERT INTO arrivals (seq, user, app, id, date) VALUES (1, 'u', 'com.example.chat', 'x', ?);
                        INSERT INTO queue (seq, user, app, id, date, title, summary_at) VALUES
                            (1, 'u', 'com.example.news', 'n', ?, 'N', ?);
                        """,
                    arguments: [t0 + 1, t0 + 2, t0 + 3, t0, t0, t0 + 4, t0 + 3600])
            }
            try v6.close()
        }
        let before = try DatabaseQueue(path: path).read { try contents($0) }
        XCTAssertEqual(before.count, 6)

        let store = try SQLiteStateStore(path: path)
        try store.dbQueue.read { db in
            XCTAssertEqual(try Int.fetchOne(db, sql: "PRAGMA user_version"), 7)
            XCTAssertEqual(try contents(db), before)
            for table in tables {
                let sql = try String.fetchOne(
                    db, sql: "SELECT sql FROM sqlite_master WHERE name = ?", arguments: [table])
                XCTAssertFalse(sql?.uppercased().contains("WITHOUT ROWID") ?? true, "\(table) is in write order")
            }
            for (index, columns) in [
                ("delivered_by_user", ["user", "seq"]), ("arrivals_by_user", ["user", "seq"]),
                ("queue_by_key", ["user", "app", "id"]),
            ] {
                XCTAssertEqual(
                    try String.fetchAll(
                        db, sql: "SELECT name FROM pragma_index_info(?) ORDER BY seqno", arguments: [index]),
                    columns, index)
                XCTAssertEqual(
                    try Bool.fetchOne(
                        db,
                        sql:
                            "SELECT \"unique\" FROM pragma_index_list((SELECT tbl_name FROM sqlite_master WHERE name = ?)) WHERE name = ?",
                        arguments: [index, index]),
                    true, index)
            }
        }
        // What the store reads from the file is as before: the group's order, the arrivals, the queue.
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.title), ["B", "A"])
        XCTAssertEqual(try store.recent(user: "u", since: 0).map(\.id), ["x", "b", "a"])
        XCTAssertEqual(try store.queuedNotifications(user: "u").map(\.id), ["n"])

        // Written on: replaced in place (its seq kept), a new row after the others, the queued one
        // replaced under its key.
        try store.apply([.replace(note("b", date: t0 + 5, title: "B2", group: "g"), queued: false)])
        try store.apply([.deliver(note("c", date: t0 + 6, title: "C", group: "g"))])
        try store.apply([
            .replace(note("n", app: "com.example.news", date: t0 + 7, title: "N2", summaryAt: t0 + 3600), queued: true)
        ])
        for reader in [store, try SQLiteStateStore(path: path)] {
            XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "g").map(\.title), ["B2", "A", "C"])
            XCTAssertEqual(try reader.queuedNotifications(user: "u").map(\.title), ["N2"])
            XCTAssertEqual(try reader.recent(user: "u", since: 0).map(\.id), ["x", "b", "a", "c"])
        }
        try DatabaseQueue(path: path).read { db in
            XCTAssertEqual(
                try String.fetchAll(
                    db, sql: "SELECT id || ' ' || seq FROM delivered WHERE user = 'u' AND seq <= 3 ORDER BY seq"),
                ["b 1", "a 2", "m 3"])
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT count(*) FROM delivered WHERE id = 'c' AND seq > 3"), 1)
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT count(*) FROM queue"), 1)
        }

        // The keys are kept by the indexes: a second row of a key is refused.
        for sql in [
            "INSERT INTO delivered (seq, user, app, id, date) VALUES (1, 'u', 'com.example.other', 'z', 0)",
            "INSERT INTO arrivals (seq, user, app, id, date) VALUES (1, 'u', 'com.example.other', 'z', 0)",
            "INSERT INTO queue (seq, user, app, id, date) VALUES (9, 'u', 'com.example.news', 'n', 0)",
        ] {
            XCTAssertThrowsError(try DatabaseQueue(path: path).write { try $0.execute(sql: sql) }, sql)
        }
    }
}
