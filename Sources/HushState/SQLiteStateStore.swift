import Foundation
import GRDB
public import HushCore

/// State in a SQLite file (docs/reference.md, "State and events"), with the observable behaviour of `InMemoryStateStore`.
///
/// - One connection (`DatabaseQueue`): the store has one owner at a time, reads are single
///   statements, and a pool's reader connections would only add a hop per read. Other processes
///   (another `hush`) open their own connection; WAL lets them read while one writes, and the
///   5 s busy timeout plus `BEGIN IMMEDIATE` make concurrent writers wait rather than fail.
/// - Every write is one transaction: `apply` (one evaluation), `takeDueSummaries` (select and
///   delete), `deliverDueSummaries` (select, delete and deliver), `addInteractions` (one call),
///   `setManualFocus`, `prune`. A committed transaction survives the process being killed (WAL,
///   `synchronous=NORMAL`). Inside a batch (`beginBatch` … `commitBatch`, which `hush eval`
///   uses for up to 1000 lines) each write is a savepoint of the batch's one transaction instead.
/// - A read that fails throws (`Error.failed`, naming the file and what it read): an evaluation
///   never goes on as if state were empty.
/// - Hot reads use prepared statements cached per connection; group members come from an
///   index-only scan plus a cache of decoded rows (`SQLiteStateStore+RowCache.swift`).
///
/// Not thread-safe (like `InMemoryStateStore`): one owner at a time, hence not `Sendable`.
public final class SQLiteStateStore: StateStore {
    /// The state file.
    public let path: String
    /// How many days delivered notifications, arrivals and calls are kept.
    public let retentionDays: Double
    let dbQueue: DatabaseQueue
    let retention: RetentionPolicy
    /// Per user: the newest date applied and when the user's rows were last pruned.
    var retentionBook: [String: RetentionBookEntry] = [:]
    /// Delivered rows already decoded, by seq (see `SQLiteStateStore+RowCache.swift`).
    var rowCache = RowCache()
    private var deferredError: Error?
    /// A batch transaction is open (`beginBatch`): writes are savepoints inside it.
    private var batchOpen = false
    var batchIsOpen: Bool { batchOpen }
    /// Group digests (see `SQLiteStateStore+Digests.swift`).
    var digestCache = DigestCache()

    /// Opens (creating it and its directory if needed) the state file at `path`.
    /// - Parameter retentionDays: delivered notifications, arrivals and calls older than this,
    ///   relative to the newest date a user's evaluations saw, are pruned automatically.
    /// - Throws: ``HushError`` with code `state_unusable` when the file cannot be used (its folder
    ///   cannot be made, it is not a Hush state file, a newer Hush wrote it, the retention is not
    ///   positive); the file is then left as it was.
    public convenience init(path: String, retentionDays: Double = 7) throws(HushError) {
        do {
            try self.init(path: path, retentionDays: retentionDays, pruneEvery: RetentionPolicy.defaultPruneEvery)
        } catch {
            throw HushError(state: error)
        }
    }

    init(path: String, retentionDays: Double, pruneEvery: Int) throws {
        guard retentionDays > 0 else { throw Error.invalidRetention(path: path, days: retentionDays) }
        self.path = path
        self.retentionDays = retentionDays
        self.retention = RetentionPolicy(days: retentionDays, pruneEvery: pruneEvery)
        self.dbQueue = try Self.openDatabase(path: path)
    }

    // MARK: - Reading

    package func delivered(user: String, app: String, id: String) throws -> StoredNotification? {
        try notification(sql: Self.selectDelivered, [.text(user), .text(app), .text(id)])
    }

    package func queued(user: String, app: String, id: String) throws -> StoredNotification? {
        try notification(sql: Self.selectQueued, [.text(user), .text(app), .text(id)])
    }

    package func groupMembers(user: String, groupID: String) throws -> [StoredNotification] {
        try read("read a group") { db in try cachedGroupMembers(db, user: user, groupID: groupID) }
    }

    package func calls(user: String, since: Double) throws -> [CallRecord] {
        try read("read calls") { db in
            var calls: [CallRecord] = []
            try forEachRawRow(db, sql: Self.selectCalls, [.text(user), .real(since)]) { row in
                calls.append(CallRecord(user: user, date: try row.required(row.real(0), 0), app: try row.required(row.text(1), 1),
                                        caller: try PersonJSON.decodePerson(row.required(row.text(2), 2))))
            }
            return calls
        }
    }

    package func manualFocus(user: String) throws -> ManualFocus? {
        try read("read the manual focus") { db in
            var focus: ManualFocus?
            try forEachRawRow(db, sql: Self.selectManualFocus, [.text(user)]) { row in
                focus = ManualFocus(name: row.text(0), since: try row.required(row.real(1), 1), until: row.real(2))
            }
            return focus
        }
    }

    package func recent(user: String, since: Double) throws -> [StoredNotification] {
        try notifications(sql: Self.selectRecent, [.text(user), .real(since)], action: "read recent notifications")
    }

    package func interactions(user: String, since: Double) throws -> [Interaction] {
        try read("read interactions") { db in
            var interactions: [Interaction] = []
            let rows = try Row.fetchCursor(db.cachedStatement(sql: Self.selectInteractions), arguments: [user, since])
            while let row = try rows.next() {
                let direction: String = try row.decode(atIndex: 1), kind: String = try row.decode(atIndex: 2)
                guard let d = Interaction.Direction(rawValue: direction), let k = Communication.Kind(rawValue: kind) else {
                    throw PersonJSON.DecodingError(description: "an interaction with an unknown direction \"\(direction)\" or kind \"\(kind)\"")
                }
                interactions.append(Interaction(user: user, date: try row.decode(atIndex: 0), direction: d, kind: k,
                                                app: try row.decode(atIndex: 3),
                                                people: try PersonJSON.decodePeople(row.decode(atIndex: 4)),
                                                group: try row.decode(atIndex: 5)))
            }
            return interactions
        }
    }

    package func queuedNotifications(user: String) throws -> [StoredNotification] {
        try notifications(sql: Self.selectQueue, [.text(user)], action: "read the summary queue")
    }

    // MARK: - Writing

    package func apply(_ changes: [StateChange]) throws {
        guard !changes.isEmpty else { return }
        let book = try write("record an evaluation") { db in try record(changes, in: db) }
        retentionBook.merge(book) { $1 }
    }

    /// Writes `changes` inside the caller's transaction; returns the retention book entries to merge
    /// once it has committed.
    func record(_ changes: [StateChange], in db: Database) throws -> [String: RetentionBookEntry] {
        for change in changes {
            switch change {
            case .deliver(let n):
                try updateDigests(delivering: n, in: db)
                let arguments = n.rawArguments
                try executeRaw(db, sql: Self.upsertDelivered, arguments)
                // A notification delivered by its summary was counted when it arrived.
                if n.summaryAt == nil { try executeRaw(db, sql: Self.insertArrival, arguments) }
            case .enqueue(let n):
                let arguments = n.rawArguments
                try executeRaw(db, sql: Self.upsertQueued, arguments)
                try executeRaw(db, sql: Self.insertArrival, arguments)
            case .replace(let n, let queued):
                if queued {
                    try executeRaw(db, sql: Self.upsertQueued, n.rawArguments)
                } else {
                    try updateDigests(delivering: n, in: db)
                    try executeRaw(db, sql: Self.upsertDelivered, n.rawArguments)
                }
            case .dequeue(let user, let app, let id):
                try executeRaw(db, sql: Self.deleteQueued, [.text(user), .text(app), .text(id)])
            case .withdraw(let user, let app, let id):
                try dropDigest(user: user, app: app, id: id, in: db)
                try executeRaw(db, sql: Self.deleteDelivered, [.text(user), .text(app), .text(id)])
                try executeRaw(db, sql: Self.deleteQueued, [.text(user), .text(app), .text(id)])
            case .recordCall(let call):
                try executeRaw(db, sql: Self.insertCall,
                               [.text(call.user), .real(call.date), .text(call.app), .text(PersonJSON.encode(call.caller))])
            }
        }
        return try pruneAutomatically(db, after: changes)
    }

    package func takeDueSummaries(user: String, upTo t: Double) throws -> [SummaryBatch] {
        // Called before every evaluation: only take the write lock when something is due. (A
        // summary another process queues meanwhile is simply taken next time.)
        let anyDue = try read("take the due summaries") { db in
            try self.anyDue(db, user: user, upTo: t)
        }
        guard anyDue else { return [] }
        return try write("take the due summaries") { db in try takeDue(user: user, upTo: t, in: db) }
    }

    /// Takes the due summaries and records what delivering them changes in ONE transaction: a
    /// crash, or a write that fails, never leaves a batch taken from the queue but not delivered
    /// (two transactions would lose it between them).
    package func deliverDueSummaries(user: String, upTo t: Double,
                                    recording changes: (SummaryBatch) throws -> [StateChange]) throws -> [SummaryBatch] {
        let anyDue = try read("take the due summaries") { db in
            try self.anyDue(db, user: user, upTo: t)
        }
        guard anyDue else { return [] }
        let (batches, book) = try write("deliver the due summaries") { db in
            let batches = try takeDue(user: user, upTo: t, in: db)
            var book: [String: RetentionBookEntry] = [:]
            for batch in batches { book.merge(try record(changes(batch), in: db)) { $1 } }
            return (batches, book)
        }
        retentionBook.merge(book) { $1 }
        return batches
    }

    private func anyDue(_ db: Database, user: String, upTo t: Double) throws -> Bool {
        var any = true
        try forEachRawRow(db, sql: Self.selectAnyDue, [.text(user), .real(t)]) { row in any = row.integer(0) != 0 }
        return any
    }

    /// Selects and deletes the due summaries inside the caller's transaction.
    private func takeDue(user: String, upTo t: Double, in db: Database) throws -> [SummaryBatch] {
        var due: [(notification: StoredNotification, seq: Int64)] = []
        let rows = try Row.fetchCursor(db.cachedStatement(sql: Self.selectDue), arguments: [user, t])
        while let row = try rows.next() {
            due.append((try StoredNotification(sqlRow: row), try row.decode(atIndex: StoredNotification.sqlColumnCount)))
        }
        if !due.isEmpty { try db.cachedStatement(sql: Self.deleteDue).execute(arguments: [user, t]) }
        var batches: [Double: [(notification: StoredNotification, seq: Int64)]] = [:]
        for entry in due { batches[entry.notification.summaryAt!, default: []].append(entry) }
        return batches.keys.sorted().map { at in
            let all = batches[at]!
            let dropped = all.filter { ($0.notification.expiration ?? .infinity) < at }
                .sorted { ($0.notification.date, $0.seq) < ($1.notification.date, $1.seq) }
            let shown = all.filter { ($0.notification.expiration ?? .infinity) >= at }.sorted { a, b in
                if SummaryBatch.presentationOrder(a.notification, b.notification) { return true }
                if SummaryBatch.presentationOrder(b.notification, a.notification) { return false }
                return a.seq < b.seq
            }
            return SummaryBatch(user: user, at: at, notifications: shown.map(\.notification), dropped: dropped.map(\.notification))
        }
    }

    package func setManualFocus(user: String, _ focus: ManualFocus?) throws {
        try write("set the manual focus") { db in
            if let focus {
                try db.cachedStatement(sql: Self.upsertManualFocus).execute(arguments: [user, focus.name, focus.since, focus.until])
            } else {
                try db.cachedStatement(sql: Self.deleteManualFocus).execute(arguments: [user])
            }
        }
    }

    /// Adds donated interactions in one transaction (callers batch, e.g. 1000 at a time).
    package func addInteractions(_ interactions: [Interaction]) throws {
        guard !interactions.isEmpty else { return }
        try write("record interactions") { db in
            let statement = try db.cachedStatement(sql: Self.insertInteraction)
            for i in interactions {
                try statement.execute(arguments: [i.user, i.date, i.direction.rawValue, i.kind.rawValue, i.app,
                                                  PersonJSON.encode(i.people), i.group])
            }
        }
    }

    package func prune(before t: Double) throws {
        digestCache.clear()
        try write("prune") { db in
            try db.execute(sql: "DELETE FROM delivered WHERE date < ?", arguments: [t])
            try db.execute(sql: "DELETE FROM arrivals WHERE date < ?", arguments: [t])
            try db.execute(sql: "DELETE FROM calls WHERE date < ?", arguments: [t])
        }
    }

    // MARK: - Transactions and errors

    package func beginBatch() throws {
        guard !batchOpen else { return }
        if let error = deferredError {
            deferredError = nil
            throw error
        }
        do {
            try dbQueue.writeWithoutTransaction { db in try db.beginTransaction(.immediate) }
        } catch {
            throw Error.failed(path: path, action: "begin a batch of writes", reason: "\(error)")
        }
        batchOpen = true
    }

    package func commitBatch() throws {
        guard batchOpen else { return }
        batchOpen = false
        digestCache.checkedInBatch = false
        do {
            try dbQueue.writeWithoutTransaction { db in try db.commit() }
        } catch {
            digestCache.clear()
            try? dbQueue.writeWithoutTransaction { db in if db.isInsideTransaction { try db.rollback() } }
            // What the caches learnt from the undone writes is forgotten with them.
            rowCache = RowCache()
            retentionBook = [:]
            throw Error.failed(path: path, action: "commit a batch of writes", reason: "\(error)")
        }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction: the write lock is taken up front, so a
    /// concurrent writer in another process makes us wait (busy timeout) instead of failing.
    @discardableResult
    func write<T>(_ action: String, _ body: (Database) throws -> T) throws -> T {
        if let error = deferredError {
            deferredError = nil
            throw error
        }
        do {
            return try dbQueue.writeWithoutTransaction { db in
                var result: T?
                if batchOpen {
                    // A savepoint of the batch's transaction, with cached statements (GRDB's
                    // inSavepoint compiles its SQL each time: a third of a write's cost).
                    try executeRaw(db, sql: "SAVEPOINT hush_write", [])
                    do {
                        result = try body(db)
                        try executeRaw(db, sql: "RELEASE hush_write", [])
                    } catch {
                        try? executeRaw(db, sql: "ROLLBACK TO hush_write", [])
                        try? executeRaw(db, sql: "RELEASE hush_write", [])
                        throw error
                    }
                } else {
                    try db.inTransaction(.immediate) {
                        result = try body(db)
                        return .commit
                    }
                }
                return result!
            }
        } catch let error as Error {
            // What the digests learnt from the undone writes is forgotten with them.
            digestCache.clear()
            throw error
        } catch {
            digestCache.clear()
            throw Error.failed(path: path, action: action, reason: "\(error)")
        }
    }

    /// Runs a read outside any explicit transaction (each statement is its own snapshot).
    func read<T>(_ action: String, _ body: (Database) throws -> T) throws -> T {
        do {
            return try dbQueue.unsafeRead(body)
        } catch {
            throw Error.failed(path: path, action: action, reason: "\(error)")
        }
    }

    private func notification(sql: String, _ arguments: [RawArgument]) throws -> StoredNotification? {
        try read("read a notification") { db in
            var found: StoredNotification?
            try forEachRawRow(db, sql: sql, arguments) { row in
                if found == nil { found = try StoredNotification(rawRow: row) }
            }
            return found
        }
    }

    private func notifications(sql: String, _ arguments: [RawArgument], action: String) throws -> [StoredNotification] {
        try read(action) { db in
            var result: [StoredNotification] = []
            try forEachRawRow(db, sql: sql, arguments) { row in result.append(try StoredNotification(rawRow: row)) }
            return result
        }
    }
}
