import Foundation
import GRDB
import HushCore
import XCTest

@testable import HushState

/// The records of the state tables (`StateRecords.swift`) against the schema the migrations
/// created, which spell the columns out themselves and are never edited.
final class StateRecordsTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    /// Every table's columns, in order, are its record's: a column misnamed, missing or out of
    /// order fails here rather than in use.
    func testRecordsListTheColumnsOfTheirTables() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        try store.dbQueue.read { db in
            func columns(_ table: String) throws -> [String] { try db.columns(in: table).map(\.name) }
            let notification = NotificationColumn.allCases.map(\.name)
            let arrival = NotificationColumn.arrivalColumns.map(\.name)
            XCTAssertEqual(try columns("delivered"), ["seq"] + notification + ["arrival_seq"])
            XCTAssertEqual(try columns("queue"), ["seq"] + notification)
            XCTAssertEqual(try columns("arrivals"), ["seq"] + arrival)
            XCTAssertEqual(DeliveredRow.selection.map(\.name), notification + ["seq", "arrival_seq"])
            XCTAssertEqual(QueueRow.selection.map(\.name), notification + ["seq"])
            XCTAssertEqual(ArrivalRow.selection.map(\.name), arrival + ["seq"])
            let others: [any StateRecord.Type] = [
                CallRow.self, ManualFocusRow.self, InteractionRow.self, RetentionRow.self, EventRow.self,
                ScheduleMarkRow.self, UserPolicyRow.self, CursorRow.self,
            ]
            for record in others {
                XCTAssertEqual(
                    try columns(record.databaseTableName), record.selection.map(\.name), record.databaseTableName)
            }
            let tables = try String.fetchAll(
                db,
                sql: """
                    SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'grdb%'
                    AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                    """)
            XCTAssertEqual(
                Set(tables),
                Set(["delivered", "queue", "arrivals", "user_versions"] + others.map { $0.databaseTableName }),
                "a table without a record")
        }
    }

    /// The store's hand-written reads and GRDB's own fetches decode the same rows alike.
    func testGRDBFetchesTheRecordsTheStoreWrote() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        let full = StoredNotification(
            user: "u", app: "com.example.chat", id: "1", date: t0 + 0.125, title: "Tïtle",
            body: "line\nline", category: "MESSAGE", threadID: "th", groupID: "g",
            summaryArgument: "Ana", summaryArgumentCount: 3, relevance: 0.75, hasMedia: true,
            expiration: t0 + 3600, summaryAt: nil, sender: "+15551234567")
        var queued = full
        queued.id = "2"
        queued.summaryAt = t0 + 60
        let ana = Person(handle: "+15550001", name: "Ana", aliases: ["ana@example.com"])
        let call = CallRecord(user: "u", date: t0, app: "com.apple.phone", caller: ana)
        let interaction = Interaction(
            user: "u", date: t0, direction: .incoming, kind: .message, app: "com.example.chat",
            people: [ana], group: "Family")
        let focus = ManualFocus(name: "Work", since: t0, until: t0 + 60)
        try store.apply([.deliver(full), .enqueue(queued), .recordCall(call)])
        try store.addInteractions([interaction])
        try store.setManualFocus(user: "u", focus)

        try store.dbQueue.read { db in
            XCTAssertEqual(try DeliveredRow.fetchAll(db).map(\.notification), [full])
            XCTAssertEqual(try QueueRow.fetchAll(db).map(\.notification), [queued])
            // Arrivals keep what `hush.recent` counts by: the delivered row stands for its own
            // (schema v6), the queued one has a row.
            XCTAssertEqual(try DeliveredRow.fetchAll(db).map(\.arrivalSeq), [1])
            XCTAssertEqual(try ArrivalRow.fetchAll(db).map(\.notification), [queued.arrival])
            XCTAssertEqual(
                try ArrivalRow.fetchAll(db, sql: SQLiteStateStore.selectUserArrivals, arguments: ["u"]).map(
                    \.notification),
                [full.arrival, queued.arrival])
            XCTAssertEqual(full.arrival.sender, full.sender)
            XCTAssertEqual(try CallRow.fetchAll(db).map(\.call), [call])
            XCTAssertEqual(try InteractionRow.fetchAll(db).map(\.interaction), [interaction])
            XCTAssertEqual(try ManualFocusRow.fetchOne(db, key: "u")?.focus, focus)
            XCTAssertEqual(
                try RetentionRow.fetchOne(db, key: "u")?.prunedThrough, t0 + 0.125, "pruned on its first apply")
        }
        XCTAssertEqual(try store.delivered(user: "u", app: "com.example.chat", id: "1"), full)
        XCTAssertEqual(try store.queued(user: "u", app: "com.example.chat", id: "2"), queued)
    }

    func testTheSQLMadeFromTheColumnList() {
        XCTAssertEqual(
            NotificationColumn.list,
            """
            user, app, id, date, title, body, category, thread_id, group_id, summary_arg, \
            summary_arg_count, relevance, has_media, expiration, summary_at, sender
            """)
        XCTAssertEqual(NotificationColumn.placeholders.split(separator: ",").count, NotificationColumn.allCases.count)
        XCTAssertFalse(NotificationColumn.updateFromExcluded.contains("user ="))
        XCTAssertTrue(NotificationColumn.updateFromExcluded.hasPrefix("date = excluded.date, title = excluded.title"))
        XCTAssertEqual(NotificationColumn.every, NotificationColumn.allCases)
        XCTAssertEqual(NotificationColumn.arrivalList, "user, app, id, date, thread_id, sender")
    }
}
