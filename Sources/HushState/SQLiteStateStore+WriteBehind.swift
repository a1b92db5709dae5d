import Dispatch
import GRDB
import GRDBSQLite
import HushCore

/// Write-behind (`hush eval` on a state file): a batch is decided from memory while a thread of
/// its own commits the batches before it, on a connection of its own. Deciding and writing each
/// took about half of a line's cost; one after the other on one core, they now run side by side.
///
/// How a batch goes:
/// 1. `recordingWrites` decides it: its reads come from the user cache (or, for a user no pending
///    write touches, from the file as committed); its writes change the cache and are recorded in
///    a `WriteLog`, not run. The store's connection is `query_only` meanwhile, so a write that
///    bypassed the log would fail rather than land outside any transaction.
/// 2. `BackgroundWriter.submit` queues the log; the writer runs each in one IMMEDIATE transaction
///    of its connection and commits it, in order, while the next batches are decided.
/// 3. The caller prints a batch once `wait` says it committed (`batchCommitted`): a printed
///    decision is still a committed one (a `kill -9` loses nothing printed).
///
/// What keeps the speculation right:
/// - A user with a pending write is wholly in the cache (every part is loaded before their first
///   write is noted, and the cache never starts over while a log is pending), so reading the file
///   is only ever needed for users whose rows are as committed. The exceptions, arrivals not
///   loaded yet and interactions, are read as the file's rows with what is pending for them
///   replayed on top (`pendingRows`, `pendingInFlight`).
/// - A batch decided again starts from the retention bookkeeping it was first decided from
///   (`retentionMark`): when a user is next pruned is counted in memory.
/// - Another process's commit: the writer's `PRAGMA data_version` is taken when the pipeline
///   starts (`rebaseline`) and checked inside each transaction; only other connections change it.
///   When it moved, the writer rolls back (`.conflict`), runs none of the logs queued after it
///   (`.notRun`), and the caller decides those batches (and the one decided on top of them) again
///   the ordinary way.
/// - A write that fails (recording it, or running it): the same. The ordinary way then undoes a
///   failed write alone and reports it on its line, as without write-behind.
extension SQLiteStateStore {
    /// Whether the writes made now are recorded (write-behind) rather than run.
    package var isRecording: Bool { recording != nil }

    /// Decides `body` with writes recorded (step 1 above). Returns the writes, or nil when the
    /// batch must be decided again the ordinary way (a write could not be recorded, or a read
    /// failed): the cache is then left for `forgetSpeculation`. The caller submits the writes, or
    /// calls `forgetSpeculation`; it calls `batchCommitted` as each batch submitted commits.
    package func recordingWrites(_ body: () -> Void) -> WriteLog? {
        precondition(!isWriting && !isRecording, "write-behind inside a transaction")
        recording = WriteLog()
        pendingRows = [:]
        var written: Set<String> = []
        do {
            try dbQueue.unsafeRead { db in
                try db.execute(sql: "PRAGMA query_only = ON")
                defer { try? db.execute(sql: "PRAGMA query_only = OFF") }
                recordingDatabase = db
                defer { recordingDatabase = nil }
                body()
                written = userCache.written
                try stampWrittenUsers(db)
            }
        } catch {
            recording!.failed = true
        }
        let log = recording!
        recording = nil
        if log.failed { return nil }
        // Each user it wrote, with the version it stamped and its pending rows (maybe none): a
        // snapshot of the file holding that version holds this batch's rows of the user, and
        // those of every batch before it (`withPendingArrivals`). A user written without pending
        // rows counts too: that version says the batches before are in the file.
        var batch = PendingBatch()
        batch.rows.reserveCapacity(written.count)
        for user in written {
            batch.rows[user] = (userCache.users[user]?.version, pendingRows[user] ?? [])
        }
        pendingInFlight.append(batch)
        pendingRows = [:]
        return log
    }

    /// The oldest batch recorded and submitted is committed: what is pending for it is in the file.
    package func batchCommitted() {
        precondition(!pendingInFlight.isEmpty, "no batch is in flight")
        pendingInFlight.removeFirst()
    }

    /// Runs the statement `body` makes now, or records it when writing behind. For the writes of
    /// an evaluation that are not hot statements (calls, pruning, retention).
    func run(_ db: Database, _ body: @escaping (Database) throws -> Void) throws {
        if recording != nil {
            recording!.ops.append(.run(body))
        } else {
            try body(db)
        }
    }

    /// A user about to be written while recording: every part of theirs is loaded first, so that
    /// nothing of theirs is ever read from the file while a write of theirs is pending.
    /// Arrivals are the exception, as they are most of a user's rows and only `hush.recent` reads
    /// them; and interactions are never in memory. What is recorded for those rows is kept in
    /// order (`pendingRows`), and a read of them while recording is the file's rows with it
    /// replayed on top (`withPendingArrivals`, `withoutPendingPrunes`).
    func loadEveryPart(_ db: Database, _ user: String) throws {
        _ = try cachedDelivered(db, user) { _ in () }
        _ = try cachedQueue(db, user)
        try withUser(db, user) { cached in try readNextArrivalSeq(db, user, into: cached) }
        _ = try cachedCalls(db, user)
        _ = try cachedManualFocus(db, user)
        if retentionBook[user] == nil { retentionBook[user] = try loadRetention(db, user: user) }
        try withUser(db, user) { $0.loadedForWriting = true }
    }

    /// After a batch decided while recording is abandoned (its log failed or conflicted, or was
    /// never submitted): what memory learnt from it is forgotten. Call with no log pending.
    package func forgetSpeculation(restoring mark: RetentionMark?) {
        forgetPendingRows()
        userCache.clear()
        userCache.written.removeAll()
        cachedRows = 0
        cacheWantsRestart = false
        if let mark { retentionBook = mark.book }
    }

    /// What the retention bookkeeping is now (`forgetSpeculation`): when to prune a user is
    /// counted in memory across batches, so a batch decided again must start from the count it
    /// was first decided from.
    package func retentionMark() -> RetentionMark { RetentionMark(book: retentionBook) }

    /// With no recorded batch in flight: nothing is pending.
    func forgetPendingRows() {
        pendingRows = [:]
        pendingInFlight = []
    }

    /// Starts the user cache over (`cacheIsFull`), with every recorded batch committed: as the
    /// ordinary way does when it is full.
    package func restartCache() {
        forgetPendingRows()
        userCache.users.removeAll()
        cachedRows = 0
        cacheWantsRestart = false
    }

    /// A change recorded while recording to rows memory may not hold: `user`'s arrivals when not
    /// loaded, and their interactions.
    func notePending(_ user: String, _ change: PendingRowChange) {
        if case .arrival = change, userCache.user(user)?.arrivals != nil { return }
        pendingRows[user, default: []].append(change)
    }

    /// `arrivals` (the file's, read in one snapshot with `user`'s version there, `fileVersion`)
    /// with what is pending for them replayed, in order: of the batches in flight, those after the
    /// last one the snapshot holds (the one that stamped `fileVersion`), then the batch being
    /// decided. Batches commit in order, so the snapshot holds every batch up to that one.
    func withPendingArrivals(_ user: String, _ arrivals: [StoredNotification], fileVersion: Int64?)
        -> [StoredNotification]
    {
        var arrivals = arrivals
        var replayed = pendingInFlight[...]
        if let fileVersion, let held = replayed.lastIndex(where: { $0.rows[user]?.version == fileVersion }) {
            replayed = replayed[(held + 1)...]
        }
        for change in replayed.flatMap({ $0.rows[user]?.changes ?? [] }) + (pendingRows[user] ?? []) {
            switch change {
            case .arrival(let n): arrivals.append(n.arrival)
            case .prune(let t, _): arrivals.removeAll { $0.date < t }
            }
        }
        return arrivals
    }

    /// `interactions` (the file's) less those a pending prune deletes (a prune the file holds
    /// already deletes nothing more).
    func withoutPendingPrunes(_ user: String, _ interactions: [Interaction]) -> [Interaction] {
        var cutoff = -Double.infinity
        let pending = pendingInFlight.flatMap { $0.rows[user]?.changes ?? [] } + (pendingRows[user] ?? [])
        for case .prune(_, let t) in pending {
            cutoff = max(cutoff, t)
        }
        return cutoff == -.infinity ? interactions : interactions.filter { $0.date >= cutoff }
    }

    /// Drops the cached users other connections changed since the store last looked
    /// (`BackgroundWriter.rebaseline` comes first).
    package func dropUsersOthersChanged() throws {
        try read("look for other processes' changes") { db in try dropUsersOthersChanged(db) }
    }

    /// Whether the user cache should start over: as the ordinary way starts it over, when it is
    /// full (`cacheRowLimit`) and a user not in it was needed. While recording it cannot,
    /// so the caller waits for the pending log and calls `restartCache`. (Asked only when full,
    /// a cache whose users alone fill it would start over before every batch, and load them all
    /// again: a server whose 50 users had 20,000 notifications each decided about 40 times slower.)
    package var cacheIsFull: Bool { cacheWantsRestart }

    /// A writer for this store's file, on a connection and a thread of its own.
    package func makeBackgroundWriter() throws -> BackgroundWriter {
        do {
            return try BackgroundWriter(path: path)
        } catch {
            throw Error.failed(path: path, action: "open a second connection for writing", reason: "\(error)")
        }
    }
}

/// The retention bookkeeping at one moment (`SQLiteStateStore.retentionMark`).
package struct RetentionMark {
    let book: [String: RetentionBookEntry]
}

/// A batch recorded and not known to be committed: per user it wrote, the version it stamped for
/// them and their pending row changes, maybe none (`SQLiteStateStore.pendingInFlight`).
struct PendingBatch {
    var rows: [String: (version: Int64?, changes: [PendingRowChange])] = [:]
}

/// A recorded change to rows memory may not hold (`SQLiteStateStore.notePending`).
enum PendingRowChange {
    /// An arrival: the notification as delivered or queued, shared rather than copied. What the
    /// file keeps of it (`StoredNotification.arrival`) is made when it is replayed, which is
    /// rare (a user whose arrivals are read during the batch), where it was made for every one.
    case arrival(StoredNotification)
    /// Arrivals before the first date, interactions before the second, deleted.
    case prune(arrivals: Double, interactions: Double)
}

/// The writes of one batch, recorded in order (`SQLiteStateStore.recordingWrites`).
package struct WriteLog: @unchecked Sendable {
    enum Op {
        case hot(HotStatement, HotValues)
        case run((Database) throws -> Void)
    }
    var ops: [Op] = []
    var failed = false

    /// How many statements it holds.
    package var count: Int { ops.count }
}

/// Commits `WriteLog`s, one at a time and in order, on a serial queue and a connection of its own.
///
/// `@unchecked Sendable`: one caller submits logs and waits for them, oldest first; the queue
/// alone touches the connection and the statements, and the semaphore orders the hand-overs.
package final class BackgroundWriter: @unchecked Sendable {
    /// How a submitted log ended.
    package enum Outcome {
        case committed
        /// Another connection committed since `rebaseline`: nothing of the log was written.
        case conflict
        /// Nothing of the log was written.
        case failed(any Error)
        /// A log submitted before it did not commit, so it was not run (it was decided on top).
        case notRun
    }

    /// A submitted log's outcome, set on the queue before the semaphore is signalled.
    private final class Ticket: @unchecked Sendable {
        var outcome: Outcome?
    }

    private let dbQueue: DatabaseQueue
    private let queue = DispatchQueue(label: "hush.state.writer")
    private let finished = DispatchSemaphore(value: 0)
    /// The logs submitted and not waited for, oldest first (the caller's thread only).
    private var tickets: [Ticket] = []
    /// A log did not commit: those after it are not run until `rebaseline` (the queue only).
    private var stopped = false
    @exclusivity(unchecked) private var statements = [Statement?](repeating: nil, count: HotStatement.allCases.count)
    /// The binding buffers of `SQLiteStateStore.step`, kept between statements.
    @exclusivity(unchecked) private var bytes: [UInt8] = []
    @exclusivity(unchecked) private var texts: [(index: Int32, start: Int, count: Int)] = []
    private var baseline: Int64 = 0
    /// Called on the writer's queue each time a log submitted has ended (set before the first
    /// `submit`): a caller with other work can wait for either (the service's state thread).
    package var whenALogEnds: (@Sendable () -> Void)?

    init(path: String) throws {
        var config = Configuration()
        config.label = "Hush state writer"
        config.busyMode = .timeout(SQLiteStateStore.busyTimeout)
        config.foreignKeysEnabled = true
        config.journalMode = .default
        dbQueue = try DatabaseQueue(path: path, configuration: config)
        try dbQueue.writeWithoutTransaction { db in
            // Per connection, as the store's own (`openDatabase`, `checkpointEvery`), but a 2 MB
            // page cache, not 16: a batch rewrites a few MB of pages, read back from the OS's
            // cache when they are not in ours. The benchmark week ran as fast with 2 MB as with
            // 8, 12 or 16 (200 users; 2,000 users: about 4% slower than 8 MB), for 6 MB less
            // peak RSS than 8 MB; 1 MB was 10% slower.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA cache_size = -2048")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 10000")
        }
        try rebaseline()
    }

    deinit {
        statements.removeAll()
    }

    /// Closes the writer's connection, once it is idle: call with no log pending, before the
    /// store's own connection closes. The last connection to close checkpoints the log into the
    /// file and deletes it; left to be freed with the writer, this one could still be open when
    /// the process exited, and the `-wal` file stayed behind.
    package func close() {
        precondition(tickets.isEmpty, "close with a log pending")
        queue.sync {
            statements.removeAll()
            try? dbQueue.close()
        }
    }

    /// Takes the file's state as it is now as the one batches are decided on: call with no log
    /// pending, before the store's cache is checked against the file.
    package func rebaseline() throws {
        precondition(tickets.isEmpty, "rebaseline with a log pending")
        queue.sync { stopped = false }
        baseline = try dbQueue.writeWithoutTransaction { db in
            try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
        }
    }

    /// The logs submitted and not waited for yet.
    package var pendingCount: Int { tickets.count }

    /// Queues `log` to be committed after those submitted before it; `wait` says how it went.
    package func submit(_ log: consuming WriteLog) {
        let ticket = Ticket()
        tickets.append(ticket)
        let log = log
        queue.async {
            let outcome = self.stopped ? .notRun : self.commit(log)
            if case .committed = outcome {} else { self.stopped = true }
            ticket.outcome = outcome
            self.finished.signal()
            self.whenALogEnds?()
        }
    }

    /// How the oldest log submitted and not waited for ended, once it has.
    package func wait() -> Outcome {
        precondition(!tickets.isEmpty, "no log is pending")
        finished.wait()
        return tickets.removeFirst().outcome!
    }

    private struct Conflict: Error {}

    private func commit(_ log: WriteLog) -> Outcome {
        do {
            try dbQueue.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    let version = try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
                    guard version == baseline else { throw Conflict() }
                    try run(log, db)
                    return .commit
                }
            }
            return .committed
        } catch is Conflict {
            return .conflict
        } catch {
            return .failed(error)
        }
    }

    private func run(_ log: WriteLog, _ db: Database) throws {
        for op in log.ops {
            switch op {
            case .run(let body):
                try body(db)
            case .hot(let hot, let values):
                try SQLiteStateStore.step(prepared(hot, db), hot, values, db, bytes: &bytes, texts: &texts)
            }
        }
    }

    private func prepared(_ hot: HotStatement, _ db: Database) throws -> SQLiteStatement {
        if let statement = statements[hot.rawValue] { return statement.sqliteStatement }
        let statement = try db.makeStatement(sql: hot.sql)
        statements[hot.rawValue] = statement
        return statement.sqliteStatement
    }
}
