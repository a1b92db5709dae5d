import Foundation
import GRDB
public import HushCore

/// State in a SQLite file (docs/reference.md, "State and events"), with the observable behaviour of `InMemoryStateStore`.
///
/// - One connection (`DatabaseQueue`): the store has one owner at a time, reads are single
///   statements, and a pool's reader connections would only add a hop per read. Other processes
///   (another `hush`) open their own connection; WAL lets them read while one writes, and the
///   5 s busy timeout plus `BEGIN IMMEDIATE` make concurrent writers wait rather than fail.
/// - Every write is one transaction, inside GRDB's `write {}`: `apply` (one evaluation),
///   `takeDueSummaries` (select and delete), `deliverDueSummaries` (select, delete and deliver),
///   `addInteractions` (one call), `setManualFocus`, `prune`. A committed transaction survives the
///   process being killed (WAL, `synchronous=NORMAL`). Inside a batch (`batch { … }`, which
///   `hush eval` uses for up to 1000 lines) each write is a savepoint of the batch's one
///   transaction instead. GRDB's accesses are not reentrant: while a transaction is open, every
///   read and write of the store uses its connection (`writingDatabase`).
/// - A read that fails throws (`Error.failed`, naming the file and what it read): an evaluation
///   never goes on as if state were empty.
/// - Each table has a GRDB record (`StateRecords.swift`). An evaluation's reads come from memory
///   (`SQLiteStateStore+UserCache.swift`); its writes are statements the store keeps prepared,
///   bound and stepped without GRDB's values (`SQLiteStateStore+RawRows.swift`), one entry of one
///   B-tree per row (schema v4, `SQLiteStateStore+Migrations.swift`).
///
/// Not thread-safe (like `InMemoryStateStore`): one owner at a time, hence not `Sendable`.
public final class SQLiteStateStore: StateStore {
    /// The state file.
    public let path: String
    /// How many days delivered notifications, arrivals and calls are kept.
    public let retentionDays: Double
    let dbQueue: DatabaseQueue
    let retention: RetentionPolicy
    // The store has one owner at a time (not thread-safe), so the run-time exclusivity checks of
    // its hot properties are left out: about 4,000 instructions a line of `hush eval`.
    /// Per user: the newest date applied and when the user's rows were last pruned.
    @exclusivity(unchecked) var retentionBook: [String: RetentionBookEntry] = [:]
    /// What evaluations read of each user, in memory (`SQLiteStateStore+UserCache.swift`).
    @exclusivity(unchecked) var userCache = UserCache()
    /// Rows the user cache read or was written since it last started over (`UserCache.rowLimit`);
    /// kept apart from it, as it is counted while a user in it is being changed.
    @exclusivity(unchecked) var cachedRows = 0
    /// A user was loaded while recording with the cache full (`cacheIsFull`).
    @exclusivity(unchecked) var cacheWantsRestart = false
    /// When the user cache is full (`UserCache.rowLimit`; tests set less).
    var cacheRowLimit = UserCache.rowLimit
    /// The connection of the transaction in progress (a batch, or one write), while its closure
    /// runs: reads and writes made meanwhile (all of a batch's, a summary's `recording` closure)
    /// use it, as GRDB's accesses are not reentrant; writes become savepoints of it.
    @exclusivity(unchecked) private var writingDatabase: Database?
    var isWriting: Bool { writingDatabase != nil }
    /// The writes recorded while a batch is decided for write-behind (`SQLiteStateStore+WriteBehind.swift`).
    @exclusivity(unchecked) var recording: WriteLog?
    /// The connection, read-only, while a batch is decided for write-behind.
    @exclusivity(unchecked) var recordingDatabase: Database?
    /// Recorded changes to rows memory may not hold (`notePending`), per user: of the batch being
    /// decided, and of each batch recorded before it and not known to be committed, oldest first.
    @exclusivity(unchecked) var pendingRows: [String: [PendingRowChange]] = [:]
    @exclusivity(unchecked) var pendingInFlight: [PendingBatch] = []
    /// The statements of `HotStatement`, prepared on first use, for this store's one connection.
    @exclusivity(unchecked) var hotStatements = [Statement?](repeating: nil, count: HotStatement.allCases.count)
    /// The statements of the reads, by connection and SQL (`readStatement`).
    @exclusivity(unchecked) var readStatements: [ReadStatement] = []
    /// The texts of the hot statement being run and where each is bound (`Parameters`), kept
    /// between statements so that binding allocates nothing.
    @exclusivity(unchecked) var parameterBytes: [UInt8] = []
    @exclusivity(unchecked) var parameterTexts: [(index: Int32, start: Int, count: Int)] = []

    /// SQLite's own checkpoint interval, in pages of log.
    static let defaultCheckpointPages = 1000

    /// Lets the log grow to `pages` pages before a commit copies it into the file. `hush eval`,
    /// which commits batches of up to 1,000 lines and answers nobody in between, checkpoints every
    /// 10,000: a batch writes about a thousand pages, largely the same ones batch after batch, so
    /// fewer checkpoints copy (and sync) them fewer times — a fifth of its system time. A service
    /// keeps SQLite's 1,000, as a checkpoint of 10,000 pages stalls the request whose commit runs
    /// it (p99 of single notifications 9 ms -> 33 ms).
    package func checkpointEvery(pages: Int) throws {
        do {
            try dbQueue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = \(pages)") }
        } catch {
            throw SQLiteStateStore.Error.failed(path: path, action: "set its checkpoint interval", reason: "\(error)")
        }
    }

    /// Opens (creating it and its directory if needed) the state file at `path`.
    /// - Parameter retentionDays: delivered notifications, arrivals and calls older than this,
    ///   relative to the newest date a user's evaluations saw, are pruned automatically.
    /// - Throws: `HushError` with code `state_unusable` when the file cannot be used (its folder
    ///   cannot be made, it is not a Hush state file, a newer Hush wrote it, the retention is not a
    ///   positive number of days); the file is then left as it was.
    public convenience init(path: String, retentionDays: Double = 7) throws(HushError) {
        do {
            try self.init(path: path, retentionDays: retentionDays, pruneEvery: RetentionPolicy.defaultPruneEvery)
        } catch {
            throw HushError(state: error)
        }
    }

    init(path: String, retentionDays: Double, pruneEvery: Int) throws {
        do {
            retention = try RetentionPolicy(days: retentionDays, pruneEvery: pruneEvery)
        } catch {
            throw Error.invalidRetention(path: path, days: retentionDays)
        }
        self.path = path
        self.retentionDays = retentionDays
        self.dbQueue = try Self.openDatabase(path: path)
    }

    deinit {
        // Finalized before the connection closes (a connection with statements left open is not).
        hotStatements.removeAll()
        readStatements.removeAll()
    }

    // MARK: - Reading

    package func delivered(user: String, app: String, id: String) throws -> StoredNotification? {
        try read("read a notification") { db in
            try cachedDelivered(db, user) { $0[CachedUser.Key(app: app, id: id)] }
        }
    }

    package func queued(user: String, app: String, id: String) throws -> StoredNotification? {
        try read("read a notification") { db in
            try withQueue(db, user) { $0.queued(app: app, id: id) }
        }
    }

    package func deliveredOrQueued(user: String, app: String, id: String) throws -> (
        delivered: StoredNotification?, queued: Bool
    ) {
        try read("read a notification") { db in
            if let delivered = try cachedDelivered(db, user, { $0[CachedUser.Key(app: app, id: id)] }) {
                return (delivered, false)
            }
            return (nil, try withQueue(db, user) { $0.queued(app: app, id: id) != nil })
        }
    }

    package func groupMembers(user: String, groupID: String) throws -> [StoredNotification] {
        try read("read a group") { db in try cachedDelivered(db, user) { $0.members(of: groupID) } }
    }

    package func calls(user: String, since: Double) throws -> [CallRecord] {
        try read("read calls") { db in try cachedCalls(db, user).filter { $0.date >= since } }
    }

    package func manualFocus(user: String) throws -> ManualFocus? {
        try read("read the manual focus") { db in try cachedManualFocus(db, user) }
    }

    package func recent(user: String, since: Double) throws -> [StoredNotification] {
        try read("read recent notifications") { db in
            try cachedArrivals(db, user).filter { $0.date >= since }
        }
    }

    /// Read by `hush suggest` only: GRDB's query interface is fast enough.
    package func interactions(user: String, since: Double) throws -> [Interaction] {
        try read("read interactions") { db in
            typealias C = InteractionRow.Columns
            let interactions = try InteractionRow.filter(C.user == user && C.date >= since).order(C.seq).fetchAll(db)
                .map(\.interaction)
            // Writing behind, a prune of theirs may be recorded and not run yet.
            return isRecording ? withoutPendingPrunes(user, interactions) : interactions
        }
    }

    package func queuedNotifications(user: String) throws -> [StoredNotification] {
        try read("read the summary queue") { db in SummaryQueue.listed(try cachedQueue(db, user)) }
    }

    // MARK: - Writing

    package func apply(_ changes: [StateChange]) throws {
        guard !changes.isEmpty else { return }
        let book = try write("record an evaluation") { db in try record(changes, in: db) }
        book.keep(in: &retentionBook)
    }

    /// Writes `changes` inside the caller's transaction; returns the retention book entries to merge
    /// once it has committed.
    func record(_ changes: [StateChange], in db: Database) throws -> RetentionUpdates {
        // What is cached must be the file's before this transaction changes it.
        try dropUsersOthersChanged(db)
        // The users touched, noted as the changes are taken apart (a second pass copied each).
        var touched = RetentionPolicy.TouchedUsers()
        for change in changes {
            switch change {
            case .deliver(let n):
                touched.note(n.user, date: n.date)
                // A notification delivered by its summary was counted when it arrived; one
                // delivered as it arrives is its arrival too: its row stands for it (schema v6).
                let arrivalSeq = n.summaryAt == nil ? try nextArrivalSeq(db, n.user) : nil
                let seq = try upsertDelivered(n, arrivalSeq: arrivalSeq, in: db)
                if arrivalSeq != nil, isRecording { notePending(n.user, .arrival(n)) }
                noteWrite(n.user) { cached in
                    cached.delivered?.deliver(n, seq: seq, arrivalSeq: arrivalSeq)
                    if arrivalSeq != nil { cached.arrivals?.append(n.arrival) }
                }
            case .enqueue(let n):
                touched.note(n.user, date: n.date)
                try upsertQueued(n, in: db)
                try insertArrival(n, in: db)
                if isRecording { notePending(n.user, .arrival(n)) }
                noteWrite(n.user) { cached in
                    cached.enqueue(n)
                    cached.arrivals?.append(n.arrival)
                    cached.noteArrival(n)
                }
            case .replace(let n, let queued):
                touched.note(n.user, date: n.date)
                if queued {
                    try upsertQueued(n, in: db)
                    noteWrite(n.user) { $0.enqueue(n) }
                } else {
                    let seq = try upsertDelivered(n, arrivalSeq: nil, in: db)
                    noteWrite(n.user) { $0.delivered?.deliver(n, seq: seq, arrivalSeq: nil) }
                }
            case .dequeue(let user, let app, let id):
                touched.note(user, date: -.infinity)
                try deleteKey(.deleteQueued, user, app, id, in: db)
                noteWrite(user) { $0.dequeue(app: app, id: id) }
            case .withdraw(let user, let app, let id):
                touched.note(user, date: -.infinity)
                if let seq = try cachedDelivered(db, user, { $0.byKey[CachedUser.Key(app: app, id: id)]?.seq }) {
                    try keepArrival(user: user, app: app, id: id, in: db)
                    try execute(db, .deleteDelivered, .userSeq(user: user, seq: seq))
                }
                try deleteKey(.deleteQueued, user, app, id, in: db)
                noteWrite(user) { cached in
                    cached.delivered?.remove(CachedUser.Key(app: app, id: id))
                    cached.dequeue(app: app, id: id)
                }
            case .recordCall(let call):
                touched.note(call.user, date: call.date)
                let arguments = [
                    call.user.databaseValue, call.date.databaseValue, call.app.databaseValue,
                    PersonJSON.encode(call.caller).databaseValue,
                ]
                try run(db) { db in try Self.execute(db, sql: Self.insertCall, arguments) }
                noteWrite(call.user) { $0.calls?.append(call) }
            }
        }
        return try pruneAutomatically(db, touched: touched)
    }

    /// Writes `n`'s row where the user's cached list places it (the list is always read first).
    /// Returns the seq taken, the user's next: the row's when `n` is new to the list or changes
    /// group; replaced in place, it keeps its own. `arrivalSeq`: the arrival the row stands for.
    private func upsertDelivered(_ n: StoredNotification, arrivalSeq: Int64?, in db: Database) throws -> Int64 {
        let placement = try nextDeliveredPlacement(db, n)
        // A row about to be replaced first gives up the arrival it stands for (a new key has none).
        if case .new = placement {} else { try keepArrival(user: n.user, app: n.app, id: n.id, in: db) }
        switch placement {
        case .new(let seq):
            try execute(db, .insertDelivered, .delivered(seq: seq, n, arrivalSeq: arrivalSeq))
            return seq
        case .inPlace(let seq):
            try execute(db, .replaceDelivered, .delivered(seq: seq, n, arrivalSeq: arrivalSeq))
            return seq
        case .moved(let from, let to):
            try execute(db, .deleteDelivered, .userSeq(user: n.user, seq: from))
            try execute(db, .insertDelivered, .delivered(seq: to, n, arrivalSeq: arrivalSeq))
            return to
        }
    }

    /// Before the delivered row of that key is replaced or deleted: the arrival it stands for, if
    /// any, is written to `arrivals` with its own seq (an arrival outlives its notification, and
    /// keeps its place among the user's).
    private func keepArrival(user: String, app: String, id: String, in db: Database) throws {
        let key = CachedUser.Key(app: app, id: id)
        let standing = try cachedDelivered(db, user) { delivered -> (StoredNotification, Int64)? in
            guard let stored = delivered.byKey[key], let arrivalSeq = stored.arrivalSeq else { return nil }
            return (stored.n, arrivalSeq)
        }
        guard let (n, arrivalSeq) = standing else { return }
        try execute(db, .insertArrival, .notification(seq: arrivalSeq, n, N.arrivalColumns))
        noteWrite(user) { cached in
            cached.delivered?.byKey[key]?.arrivalSeq = nil
            cached.noteArrival(n)
        }
    }

    /// The seq given is the user's next: a notification replaced in the queue keeps its own.
    private func upsertQueued(_ n: StoredNotification, in db: Database) throws {
        let seq = try nextQueueSeq(db, n.user)
        try execute(db, .upsertQueued, .notification(seq: seq, n, N.every))
    }

    /// An arrival that no delivered row stands for (a notification queued for its summary).
    private func insertArrival(_ n: StoredNotification, in db: Database) throws {
        let seq = try nextArrivalSeq(db, n.user)
        try execute(db, .insertArrival, .notification(seq: seq, n, N.arrivalColumns))
    }

    private func deleteKey(_ statement: HotStatement, _ user: String, _ app: String, _ id: String, in db: Database)
        throws
    {
        try execute(db, statement, .key(user: user, app: app, id: id))
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
    package func deliverDueSummaries(
        user: String, upTo t: Double,
        recording changes: (SummaryBatch) throws -> [StateChange]
    ) throws -> [SummaryBatch] {
        let anyDue = try read("take the due summaries") { db in
            try self.anyDue(db, user: user, upTo: t)
        }
        guard anyDue else { return [] }
        let (batches, book) = try write("deliver the due summaries") { db in
            let batches = try takeDue(user: user, upTo: t, in: db)
            var book = RetentionUpdates()
            for batch in batches { book.merge(try record(changes(batch), in: db)) }
            return (batches, book)
        }
        book.keep(in: &retentionBook)
        return batches
    }

    package func hasDueSummaries(user: String, upTo t: Double) throws -> Bool {
        try read("look for due summaries") { db in try anyDue(db, user: user, upTo: t) }
    }

    /// From the cached queue, else from the index alone (the queue's rows are not read: a
    /// command that only asks, such as `hush status`, reads them itself).
    private func anyDue(_ db: Database, user: String, upTo t: Double) throws -> Bool {
        if let due = try withUser(db, user, { $0.anyDue(upTo: t) }) { return due }
        return try fetchInteger(db, sql: Self.selectAnyDue, [user.databaseValue, t.databaseValue]) != 0
    }

    /// Takes the due summaries from the queue inside the caller's transaction.
    private func takeDue(user: String, upTo t: Double, in db: Database) throws -> [SummaryBatch] {
        let queue = try cachedQueue(db, user)
        for n in queue where SummaryQueue.isDue(n, upTo: t) { try deleteKey(.deleteQueued, user, n.app, n.id, in: db) }
        noteWrite(user) { cached in cached.removeDue(upTo: t) }
        return SummaryQueue.dueBatches(of: queue, user: user, upTo: t)
    }

    package func setManualFocus(user: String, _ focus: ManualFocus?) throws {
        try write("set the manual focus") { db in
            try dropUsersOthersChanged(db)
            if let focus {
                try ManualFocusRow(user: user, focus: focus).upsert(db)
            } else {
                try ManualFocusRow.deleteOne(db, key: user)
            }
            noteWrite(user) { $0.manualFocus = .some(focus) }
        }
    }

    /// Adds donated interactions in one transaction (callers batch, e.g. 1000 at a time).
    package func addInteractions(_ interactions: [Interaction]) throws {
        guard !interactions.isEmpty else { return }
        try write("record interactions") { db in
            for interaction in interactions { try InteractionRow(interaction).insert(db) }
        }
    }

    /// Also forgets the events older than `t` that every webhook has acknowledged
    /// (`SQLiteStateStore+Service.swift`).
    package func prune(before t: Double) throws {
        userCache.clear()
        try write("prune") { db in
            // Every user's rows may change: other connections drop them all. Stamped first, while
            // every user with rows still has them: a user whose rows are all pruned was missed
            // when it came after, and other connections went on reading the deleted rows.
            try db.execute(sql: Self.stampEveryUser)
            try DeliveredRow.filter(N.date < t).deleteAll(db)
            try ArrivalRow.filter(N.date < t).deleteAll(db)
            try CallRow.filter(CallRow.Columns.date < t).deleteAll(db)
            try pruneEvents(db, before: t)
        }
    }

    // MARK: - Transactions and errors

    /// Runs `body` as one batch: the evaluations it makes are committed together when it returns,
    /// so a stream pays for one commit per batch instead of one per notification. Act on the
    /// decisions made inside only once `batch` has returned: before that nothing is remembered.
    /// Each evaluation inside stays all or nothing and reports its own error; a batch inside a
    /// batch joins it.
    /// - Throws: `HushError` `state_failed` when the batch cannot begin (`body` did not run) or
    ///   commit (nothing of it is remembered).
    public func batch<T>(_ body: () -> T) throws(HushError) -> T {
        do { return try runBatch(body) } catch { throw HushError(state: error) }
    }

    private func runBatch<T>(_ body: () -> T) throws -> T {
        // Inside a batch, or a batch recorded for write-behind (the service's, whose requests each
        // ask for a batch of their own): part of it.
        if isWriting || isRecording { return body() }
        var result: T?
        var began = false
        do {
            try dbQueue.write { db in
                began = true
                try writing(on: db) { db in
                    result = body()
                    try stampWrittenUsers(db)
                }
            }
        } catch {
            userCache.clear()
            userCache.written.removeAll()
            guard began else { throw Error.failed(path: path, action: "begin a batch of writes", reason: "\(error)") }
            // What the caches learnt from the undone writes is forgotten with them.
            retentionBook = [:]
            throw Error.failed(path: path, action: "commit a batch of writes", reason: "\(error)")
        }
        return result!
    }

    /// Runs `body` in one transaction (GRDB's `write` begins it IMMEDIATE: the write lock is taken
    /// up front, so a concurrent writer in another process makes us wait, for the busy timeout,
    /// instead of failing), or in a savepoint of the one in progress.
    @discardableResult
    func write<T>(_ action: String, _ body: (Database) throws -> T) throws -> T {
        if let db = recordingDatabase {
            // Recorded: a write that fails leaves the batch to be decided again the ordinary way.
            do {
                return try body(db)
            } catch {
                recording!.failed = true
                throw error as? Error ?? Error.failed(path: path, action: action, reason: "\(error)")
            }
        }
        do {
            if let db = writingDatabase { return try inSavepoint(db, body) }
            return try dbQueue.write { db in
                try writing(on: db) { db in
                    let result = try body(db)
                    try stampWrittenUsers(db)
                    return result
                }
            }
        } catch let error as Error {
            forgetUndoneWrites()
            throw error
        } catch {
            forgetUndoneWrites()
            throw Error.failed(path: path, action: action, reason: "\(error)")
        }
    }

    /// What the user cache learnt from undone writes is forgotten with them: every user (they are
    /// loaded again from the file). Inside a batch, the users written before stay marked written.
    private func forgetUndoneWrites() {
        let written = userCache.written
        userCache.clear()
        if isWriting { userCache.written = written } else { userCache.written.removeAll() }
    }

    /// Runs `body` with `db`, the connection of the transaction just begun, as `writingDatabase`.
    private func writing<T>(on db: Database, _ body: (Database) throws -> T) throws -> T {
        writingDatabase = db
        defer {
            writingDatabase = nil
            userCache.checkedWhileWriting = false
        }
        return try body(db)
    }

    /// Runs `body` in a savepoint of the transaction in progress, undone alone when it throws.
    /// The statements are cached (GRDB's `inSavepoint` compiles its SQL each time: a third of a
    /// write's cost).
    private func inSavepoint<T>(_ db: Database, _ body: (Database) throws -> T) throws -> T {
        // A transaction SQLite rolled back on its own (disk full, I/O error) must not turn the
        // savepoint into a transaction of its own, committed apart from the batch.
        guard db.isInsideTransaction else {
            throw RawSQLiteError(description: "the transaction of the batch was rolled back")
        }
        try execute(db, .savepoint, .none)
        do {
            let result = try body(db)
            try execute(db, .release, .none)
            return result
        } catch {
            try? execute(db, sql: "ROLLBACK TO hush_write", [])
            try? execute(db, sql: "RELEASE hush_write", [])
            throw error
        }
    }

    /// Runs a read in the transaction in progress (it sees its writes), else outside any explicit
    /// transaction (each statement is its own snapshot).
    func read<T>(_ action: String, _ body: (Database) throws -> T) throws -> T {
        do {
            if let db = writingDatabase ?? recordingDatabase { return try body(db) }
            return try dbQueue.unsafeRead(body)
        } catch {
            if isRecording { recording!.failed = true }
            throw Error.failed(path: path, action: action, reason: "\(error)")
        }
    }
}
