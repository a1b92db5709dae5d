import Foundation
import GRDB

/// What a long-running Hush keeps (`ServiceState`), in the tables of the v2 migration: the event
/// outbox, schedule marks, users' own policies and consumer cursors. Not on the hot path of an
/// evaluation: GRDB's query interface and persistence methods are fast enough. Like every other
/// access, writes go through `write` (a transaction, or a savepoint of the batch in progress) and
/// reads through `read`.
extension SQLiteStateStore {
    // MARK: - The outbox

    @discardableResult
    package func appendEvents(_ events: [StoredEvent]) throws -> [StoredEvent] {
        guard !events.isEmpty else { return [] }
        if isRecording {
            // Writing behind (`hush eval`, which does not read them back): the seqs are the
            // table's, given when the writer commits; returned as 0.
            let recorded = events.map { event in
                var event = event
                event.seq = 0
                return event
            }
            return try write("record events") { db in
                try run(db) { db in
                    for event in recorded { try Self.execute(db, sql: Self.insertEvent, Self.arguments(of: event)) }
                }
                return recorded
            }
        }
        return try write("record events") { db in
            try events.map { event in
                // The table gives the seq: whatever the caller put there is not the outbox's.
                try execute(db, sql: Self.insertEvent, Self.arguments(of: event))
                var recorded = event
                recorded.seq = db.lastInsertedRowID
                return recorded
            }
        }
    }

    /// `insertEvent`'s arguments (the seq is the table's).
    private static func arguments(of event: StoredEvent) -> [DatabaseValue] {
        [event.user.databaseValue, event.at.databaseValue, event.kind.databaseValue, event.json.databaseValue]
    }

    package func events(after seq: Int64, user: String?, limit: Int) throws -> [StoredEvent] {
        // SQLite reads a negative LIMIT as none at all.
        guard limit > 0 else { return [] }
        // Prepared once: the server asks after every batch it commits, nearly always for nothing.
        return try read("read events") { db in
            let statement: Statement
            if let user {
                statement = try db.cachedStatement(sql: Self.selectUserEventsAfter)
                statement.setUncheckedArguments([seq, user, limit])
            } else {
                statement = try db.cachedStatement(sql: Self.selectEventsAfter)
                statement.setUncheckedArguments([seq, limit])
            }
            return try EventRow.fetchAll(statement).map(\.event)
        }
    }

    /// The highest seq ever given (AUTOINCREMENT keeps it in `sqlite_sequence`), not the newest
    /// left: once every event is pruned, consumers' cursors still point at the seq they took.
    package func lastEventSeq() throws -> Int64 {
        try read("read the last event") { db in
            try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: ["events"]) ?? 0
        }
    }

    /// Inside `prune(before:)`'s write: events older than `t`, except those a webhook has not
    /// acknowledged (`OutboxHolds`). With no webhook, age alone decides.
    func pruneEvents(_ db: Database, before t: Double) throws {
        typealias C = EventRow.Columns
        var cursors: [String: Int64] = [:]
        for row in try CursorRow.fetchAll(db) { cursors[row.name] = row.seq }
        let prune = (cursors[OutboxHolds.prunesName] ?? 0) + 1
        try CursorRow(name: OutboxHolds.prunesName, seq: prune).upsert(db)
        var old = EventRow.filter(C.at < t)
        if let acknowledged = OutboxHolds.acknowledged(
            cursors: cursors, prune: prune, retentionSeconds: retention.seconds)
        {
            old = old.filter(C.seq <= acknowledged)
        }
        try old.deleteAll(db)
    }

    // MARK: - Schedule marks

    package func scheduleMark(user: String) throws -> ScheduleMark? {
        try read("read a schedule mark") { db in try ScheduleMarkRow.fetchOne(db, key: user)?.mark }
    }

    package func setScheduleMark(user: String, _ mark: ScheduleMark) throws {
        // Recorded when writing behind: the service works a user's events out as it decides their
        // notifications (a user's first one, or one after a summary's time).
        try write("set a schedule mark") { db in
            try run(db) { db in try ScheduleMarkRow(user: user, mark: mark).upsert(db) }
        }
    }

    // MARK: - Users' own policies

    package func userPolicy(user: String) throws -> String? {
        try read("read a user's policy") { db in try UserPolicyRow.fetchOne(db, key: user)?.text }
    }

    package func setUserPolicy(user: String, _ text: String?) throws {
        try write(text == nil ? "remove a user's policy" : "set a user's policy") { db in
            if let text {
                try UserPolicyRow(user: user, text: text, updated: Date().timeIntervalSince1970).upsert(db)
            } else {
                try UserPolicyRow.deleteOne(db, key: user)
            }
        }
    }

    // MARK: - Cursors

    package func cursor(_ name: String) throws -> Int64 {
        try read("read a cursor") { db in try CursorRow.fetchOne(db, key: name)?.seq ?? 0 }
    }

    package func setCursor(_ name: String, _ seq: Int64) throws {
        try write("set a cursor") { db in try CursorRow(name: name, seq: seq).upsert(db) }
    }

    // MARK: - Users and atomicity

    /// Every table that holds something about a user. `retention` is left out: it is bookkeeping
    /// that outlives the rows it was about, and the in-memory store (the reference) does not count
    /// its own either.
    static let selectKnownUsers =
        [
            DeliveredRow.databaseTableName, QueueRow.databaseTableName, ArrivalRow.databaseTableName,
            CallRow.databaseTableName, ManualFocusRow.databaseTableName, InteractionRow.databaseTableName,
            EventRow.databaseTableName, ScheduleMarkRow.databaseTableName, UserPolicyRow.databaseTableName,
        ]
        .map { "SELECT user FROM \($0)" }.joined(separator: " UNION ") + " ORDER BY user"

    package func knownUsers() throws -> [String] {
        // UNION (not UNION ALL) leaves each user once.
        try read("list the users") { db in try String.fetchAll(db, sql: Self.selectKnownUsers) }
    }

    /// `body`'s writes become savepoints of this write: its own transaction outside a batch, a
    /// savepoint of the batch inside one (which goes on when `body` throws). `body`'s own error is
    /// thrown as it is, not as a failure of the store.
    package func atomically<T>(_ body: () throws -> T) throws -> T {
        var bodyError: (any Swift.Error)?
        do {
            return try write("write atomically") { _ in
                do { return try body() } catch {
                    bodyError = error
                    throw error
                }
            }
        } catch {
            // What the retention book learnt from the undone writes is forgotten with them (as
            // when a batch fails to commit; it is read back from the file when needed). `write`
            // has dropped the cached users.
            retentionBook = [:]
            throw bodyError ?? error
        }
    }
}
