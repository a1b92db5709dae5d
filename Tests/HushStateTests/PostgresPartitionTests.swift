import Foundation
import HushCore
import PostgresTestSupport
import XCTest

@testable import HushPostgres

/// What only the PostgreSQL store does: its day partitions, made ahead and dropped whole by the
/// retention (the behaviour it shares with the other stores is in the conformance suites).
final class PostgresPartitionTests: XCTestCase {
    private func partitionExists(_ store: PostgresStateStore, _ name: String) throws -> Bool {
        guard
            let row = try store.db.query(
                "SELECT to_regclass($1) IS NOT NULL", binds(name), action: "look for a partition"
            ).first
        else { return false }
        var cells = CellReader(row)
        return try cells.requiredBool()
    }

    func testDaysAroundTodayHavePartitionsAndPruneDropsWholeDays() throws {
        // Made again if the day turned meanwhile (it makes its partitions around its own today).
        var today = PostgresSchema.day(Date().timeIntervalSince1970)
        var store = try PostgresStateStore(url: PostgresTestCluster.makeDatabase(), retentionDays: 7, pruneEvery: 1000)
        while PostgresSchema.day(Date().timeIntervalSince1970) != today {
            today = PostgresSchema.day(Date().timeIntervalSince1970)
            store = try PostgresStateStore(url: PostgresTestCluster.makeDatabase(), retentionDays: 7, pruneEvery: 1000)
        }
        let yesterday = today - 1
        for table in PostgresSchema.dayTables {
            XCTAssertTrue(try partitionExists(store, "\(table)_d\(yesterday)"), "\(table): yesterday")
            XCTAssertTrue(try partitionExists(store, "\(table)_d\(today + 3)"), "\(table): three days ahead")
        }
        // An arrival yesterday, and one today.
        func note(_ id: String, _ date: Double) -> StoredNotification {
            StoredNotification(
                user: "u", app: "com.example.chat", id: id, date: date, title: nil, body: nil, category: nil,
                threadID: nil, groupID: nil, summaryArgument: nil, summaryArgumentCount: 1, relevance: nil,
                hasMedia: false, expiration: nil, summaryAt: nil, sender: nil)
        }
        let startOfToday = Double(today) * 86400
        try store.apply([.deliver(note("old", startOfToday - 3600)), .deliver(note("new", startOfToday + 60))])

        // Before today: yesterday's partitions go whole (but interactions', kept 90 days for
        // suggestions); today's keeps its row.
        try store.prune(before: startOfToday)
        for table in PostgresSchema.dayTables {
            let kept = table == "hush_interactions"
            XCTAssertEqual(try partitionExists(store, "\(table)_d\(yesterday)"), kept, "\(table): yesterday")
            XCTAssertTrue(try partitionExists(store, "\(table)_d\(today)"), "\(table): today kept")
        }
        XCTAssertEqual(try store.recent(user: "u", since: 0).map(\.id), ["new"])
        let arrivals = try store.db.query("SELECT id FROM hush_arrivals ORDER BY id", action: "read arrivals")
            .map { row in
                var cells = CellReader(row)
                return try cells.requiredText()
            }
        XCTAssertEqual(arrivals, ["new"])
        // A fresh process on the same database sees the same.
        let reopened = try PostgresStateStore(url: store.url, retentionDays: 7, pruneEvery: 1000)
        XCTAssertEqual(try reopened.recent(user: "u", since: 0).map(\.id), ["new"])
        XCTAssertNil(try reopened.delivered(user: "u", app: "com.example.chat", id: "old"))
    }

    func testABadURLIsRefusedWithAMessage() {
        XCTAssertThrowsError(try PostgresStateStore(url: "mysql://x/y")) { error in
            XCTAssertTrue("\(error)".contains("is not a postgres:// URL"), "\(error)")
        }
        XCTAssertThrowsError(try PostgresStateStore(url: "postgres://nobody@127.0.0.1:1/none")) { error in
            XCTAssertTrue("\(error)".contains("could not connect to postgres://nobody@127.0.0.1:1/none"), "\(error)")
        }
    }
}
