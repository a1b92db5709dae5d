import Foundation
public import HushCore
public import HushState
package import Logging
import PostgresNIO

/// State in PostgreSQL (docs/scaling.md), shared by several processes at once (`hush serve`
/// instances behind a load balancer, and commands), with the observable behaviour of
/// `InMemoryStateStore`.
///
/// - **One user at a time.** Every transaction that touches a user first takes the user's
///   advisory lock (`pg_advisory_xact_lock`, held to its end), so one user's evaluations are
///   serialized across processes: N instances give the answers one would.
/// - **Reads from memory.** With the lock comes the user's row in `hush_users`, whose `version`
///   changes with every transaction that writes the user. While it is the version this process
///   last wrote or loaded, the user's rows cached in memory (an `InMemoryStateStore`) are
///   current, and every read of the evaluation is answered from memory; otherwise they are loaded
///   again first. Writes go to both: to memory at once, to PostgreSQL as statements sent without
///   waiting (their outcome is collected at the next read or at the commit).
/// - **No deadlock.** A transaction waits for a user's lock only while it holds no other user's:
///   when the lock is taken, it is tried first, and a batch that holds others commits what it has
///   and begins anew before it waits. The scheduler never waits: `claim` only tries.
/// - **Events in commit order.** Events are numbered by `hush_outbox`'s one row, whose lock the
///   recording transaction holds until it commits, so their `seq` order is the order they become
///   visible: a reader that has seen seq N never later finds a new event below N. The commit also
///   `NOTIFY`s `hush_events`, for the other instances' event streams.
/// - **A failed write fails the batch**: PostgreSQL aborts the whole transaction, which is rolled
///   back, and whatever memory learnt from it is forgotten (loaded again at the next touch).
///
/// Not thread-safe: one owner at a time (like the other stores), hence not `Sendable`.
public final class PostgresStateStore: StateStore {
    /// Where the database is, without its password.
    public let location: String
    /// How many days delivered notifications, arrivals and calls are kept.
    public let retentionDays: Double
    let retentionSeconds: Double
    let db: BlockingConnection
    /// The users' rows this process has, as of `versions`.
    let cache: InMemoryStateStore
    let logger: Logger
    let url: String

    /// What `hush_users` holds of each cached user besides their notifications.
    struct UserMeta {
        var version: Int64 = 0
        var dueAt: Double?
        var mark: ScheduleMark?
        var policy: String?
        var lastUse = 0
    }
    private var meta: [String: UserMeta] = [:]
    private var uses = 0
    /// Beyond this many users, the least recently used are dropped from memory.
    let maxCachedUsers: Int

    // The transaction in progress.
    private var inTransaction = false
    /// Users whose lock this transaction holds (and whose cached rows are current).
    private var locked: Set<String> = []
    /// Users this transaction wrote: their row in `hush_users` is written before the commit (and
    /// before a savepoint) with `writeVersion`.
    private var dirty: Set<String> = []
    private var writeVersion: Int64 = 0
    /// Whether this transaction recorded events (its commit tells the listeners).
    private var recordedEvents = false
    private var savepoints = 0
    private var maintainedDays: ClosedRange<Int32>?

    /// Connects to the database at `url` (`postgres://user:password@host:port/database`), and
    /// migrates it to this Hush's schema.
    /// - Parameter retentionDays: as `SQLiteStateStore`'s.
    /// - Throws: `HushError` `state_unusable` when the database cannot be reached or used.
    public convenience init(url: String, retentionDays: Double = 7) throws(HushError) {
        do {
            try self.init(url: url, retentionDays: retentionDays, pruneEvery: 1000)
        } catch {
            throw HushError(code: .stateUnusable, message: "\(error)")
        }
    }

    package init(
        url: String, retentionDays: Double, pruneEvery: Int, maxCachedUsers: Int = 100_000,
        logger: Logger = Logger(label: "hush.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws {
        let location = try PostgresLocation(url: url)
        self.url = url
        self.location = location.redacted
        self.retentionDays = retentionDays
        do {
            cache = try InMemoryStateStore(retentionDays: retentionDays, pruneEvery: pruneEvery)
        } catch {
            throw PostgresStateError(message: "\(location.redacted): \(error)")
        }
        retentionSeconds = retentionDays * 86400
        self.maxCachedUsers = max(1, maxCachedUsers)
        self.logger = logger
        db = BlockingConnection(location, logger: logger)
        try PostgresSchema.migrate(db)
        try maintainPartitions(now: Date().timeIntervalSince1970)
    }

    // MARK: - Transactions

    /// Runs `body` in the transaction in progress, else in one of its own.
    private func transaction<T>(_ action: String, _ body: () throws -> T) throws -> T {
        if inTransaction { return try body() }
        try begin()
        let result: T
        do {
            result = try body()
        } catch {
            rollback()
            throw error
        }
        try commit(action)
        return result
    }

    private func begin() throws {
        try db.query("BEGIN", action: "begin a transaction")
        inTransaction = true
        writeVersion = Int64.random(in: 1...Int64.max)
    }

    /// Writes the dirty users' rows, numbers and inserts the events, and commits.
    private func commit(_ action: String) throws {
        do {
            try flushUsers()
            if recordedEvents {
                try db.send("SELECT pg_notify('hush_events', '')", action: "announce events")
            }
            try db.query("COMMIT", action: "commit (\(action))")
        } catch {
            rollback()
            throw error
        }
        for user in dirty { meta[user]?.version = writeVersion }
        end()
    }

    private func rollback() {
        _ = try? db.query("ROLLBACK", action: "roll back")
        // What memory learnt in the transaction is undone with it: those users are loaded again.
        for user in dirty.union(locked) { forget(user) }
        end()
    }

    private func end() {
        inTransaction = false
        locked.removeAll(keepingCapacity: true)
        dirty.removeAll(keepingCapacity: true)
        recordedEvents = false
        savepoints = 0
        trimCache()
    }

    /// Runs `body` as one batch: one transaction (or the one in progress), committed when it
    /// returns. A batch may commit early, once, before it waits for a user another process holds
    /// (see the type's comment); nothing of it is answered before `batch` returns either way.
    public func batch<T>(_ body: () -> T) throws(HushError) -> T {
        if inTransaction { return body() }
        do {
            try begin()
        } catch {
            rollback()
            throw HushError(code: .stateFailed, message: "\(error)")
        }
        let result = body()
        do {
            try commit("a batch")
        } catch {
            throw HushError(code: .stateFailed, message: "\(error)")
        }
        return result
    }

    package func atomically<T>(_ body: () throws -> T) throws -> T {
        guard inTransaction else { return try transaction("write atomically", body) }
        try flushUsers()
        savepoints += 1
        defer { savepoints -= 1 }
        let dirtyBefore = dirty
        try db.send("SAVEPOINT hush_atomic", action: "begin an atomic write")
        do {
            let result = try body()
            try db.send("RELEASE SAVEPOINT hush_atomic", action: "end an atomic write")
            return result
        } catch {
            try? db.query("ROLLBACK TO SAVEPOINT hush_atomic", action: "undo an atomic write")
            try? db.query("RELEASE SAVEPOINT hush_atomic", action: "undo an atomic write")
            // Memory is loaded again from what the transaction holds now (its writes up to the
            // savepoint: the user rows were written before it began).
            for user in dirty.union(locked) {
                forget(user)
                locked.remove(user)
            }
            dirty = dirtyBefore
            throw error
        }
    }

    // MARK: - Users: lock, version, cache

    /// The advisory lock key of a user: a 64-bit FNV-1a hash of the name (stable across
    /// processes and versions, unlike Swift's `hashValue`).
    static func lockKey(_ user: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in user.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    /// Makes the transaction in progress hold `user`'s lock, with the user's rows in memory current.
    private func own(_ user: String) throws {
        precondition(inTransaction)
        if locked.contains(user) { return }
        let key = Self.lockKey(user)
        if !locked.isEmpty {
            let rows = try db.query(
                "SELECT pg_try_advisory_xact_lock($1)", binds(key), action: "lock the user \"\(user)\"")
            let got = try rows.first?.decode(Bool.self) ?? false
            if !got && savepoints == 0 {
                // Waiting while holding other users could deadlock with another process doing the
                // same the other way round: commit what this batch did so far, then wait.
                try commit("a batch, before waiting for a user")
                try begin()
            }
            if !got {
                try db.send("SELECT pg_advisory_xact_lock($1)", binds(key), action: "lock the user \"\(user)\"")
            }
        } else {
            try db.send("SELECT pg_advisory_xact_lock($1)", binds(key), action: "lock the user \"\(user)\"")
        }
        // A statement of its own after the lock: its snapshot is taken once the lock is held.
        let rows = try db.query(
            """
            SELECT version, due_at, mark_focus, mark_announced, mark_through, manual_set, manual_name,
                manual_since, manual_until, newest, pruned_through, applies_since_prune
            FROM hush_users WHERE name = $1
            """, binds(user), action: "read the user \"\(user)\"")
        locked.insert(user)
        uses += 1
        guard let row = rows.first else {
            // Nobody has written this user (or their row is gone): nothing to remember.
            forget(user)
            meta[user] = UserMeta(lastUse: uses)
            cache.load(user: user, UserRows())
            return
        }
        var c = CellReader(row)
        let version = try c.integer() ?? 0
        if let known = meta[user], known.version == version, cache.holds(user: user) {
            meta[user]!.lastUse = uses
            return
        }
        var m = UserMeta(version: version, lastUse: uses)
        m.dueAt = try c.real()
        let markFocus = try c.text()
        let markAnnounced = try c.bool()
        if let through = try c.real() {
            m.mark = ScheduleMark(focus: markFocus, announced: markAnnounced ?? false, through: through)
        }
        var loaded = UserRows()
        let manualSet = try c.requiredBool()
        let manualName = try c.text()
        let manualSince = try c.real()
        let manualUntil = try c.real()
        if manualSet, let manualSince {
            loaded.manualFocus = ManualFocus(name: manualName, since: manualSince, until: manualUntil)
        }
        let newest = try c.real()
        loaded.retention = RetentionBookEntry(prunedThrough: try c.real())
        loaded.retention.newest = newest ?? -.infinity
        loaded.retention.appliesSincePrune = try c.int()
        try load(user, into: &loaded, meta: &m)
        meta[user] = m
        cache.load(user: user, loaded)
    }

    /// Reads the user's notifications, calls and policy into `rows` (the user's lock is held).
    /// Reads the rest of the user into `rows` (their retention is already there), under their lock.
    private func load(_ user: String, into rows: inout UserRows, meta m: inout UserMeta) throws {
        let entry = rows.retention
        // What memory would have pruned by now is not loaded (rows are forgotten from PostgreSQL
        // by whole days, later).
        let cutoff = entry.prunedThrough.map { $0 - retentionSeconds } ?? -Double.infinity
        let action = "load the user \"\(user)\""
        rows.delivered = try db.query(
            "SELECT \(NotificationRow.columns) FROM hush_delivered WHERE user_name = $1 AND date >= $2 ORDER BY seq",
            binds(user, cutoff), action: action
        ).map { row in
            var c = CellReader(row)
            return try NotificationRow.read(&c)
        }
        rows.queue = try db.query(
            "SELECT \(NotificationRow.columns) FROM hush_queue WHERE user_name = $1 ORDER BY seq", binds(user),
            action: action
        ).map { row in
            var c = CellReader(row)
            return try NotificationRow.read(&c)
        }
        rows.arrivals = try db.query(
            "SELECT \(NotificationRow.columns) FROM hush_arrivals WHERE user_name = $1 AND date >= $2 ORDER BY seq",
            binds(user, cutoff), action: action
        ).map { row in
            var c = CellReader(row)
            return try NotificationRow.read(&c)
        }
        rows.calls = try db.query(
            "SELECT date, app, caller FROM hush_calls WHERE user_name = $1 AND date >= $2 ORDER BY seq",
            binds(user, cutoff), action: action
        ).map { row in
            let (date, app, caller) = try row.decode((Double, String, String).self)
            return CallRecord(user: user, date: date, app: app, caller: try PersonJSON.decodePerson(caller))
        }
        m.policy = try db.query("SELECT policy FROM hush_users WHERE name = $1", binds(user), action: action)
            .first?.decode(String?.self)
    }

    private func forget(_ user: String) {
        meta[user] = nil
        cache.forget(user: user)
    }

    /// Drops the least recently used users from memory beyond `maxCachedUsers` (between transactions).
    private func trimCache() {
        guard meta.count > maxCachedUsers else { return }
        let excess = meta.count - maxCachedUsers + maxCachedUsers / 10
        for (user, _) in meta.sorted(by: { $0.value.lastUse < $1.value.lastUse }).prefix(excess) { forget(user) }
    }

    /// Marks `user` written: their `hush_users` row is written before the commit.
    private func touch(_ user: String) {
        dirty.insert(user)
    }

    /// Writes the rows of the users written since the last flush.
    private func flushUsers() throws {
        for user in dirty.sorted() {
            let m = meta[user] ?? UserMeta()
            let manual = cache.manualFocus(user: user)
            let entry = cache.retentionEntry(user: user) ?? RetentionBookEntry()
            let hasState = cache.holdsAnything(user: user) || m.mark != nil || m.policy != nil
            var b = PostgresBindings(capacity: 16)
            b.add(user)
            b.add(writeVersion)
            b.add(hasState)
            b.add(m.dueAt.flatMap { $0.isFinite ? $0 : nil })
            b.add(m.mark?.focus)
            b.add(m.mark?.announced)
            b.add(m.mark?.through)
            b.add(manual != nil)
            b.add(manual?.name)
            b.add(manual?.since)
            b.add(manual?.until)
            b.add(entry.newest.isFinite ? entry.newest : nil)
            b.add(entry.prunedThrough)
            b.add(Int32(clamping: entry.appliesSincePrune))
            b.add(m.policy)
            try db.send(
                """
                INSERT INTO hush_users (name, version, has_state, due_at, mark_focus, mark_announced, mark_through,
                    manual_set, manual_name, manual_since, manual_until, newest, pruned_through, applies_since_prune,
                    policy)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
                ON CONFLICT (name) DO UPDATE SET version = excluded.version, has_state = excluded.has_state,
                    due_at = excluded.due_at, mark_focus = excluded.mark_focus,
                    mark_announced = excluded.mark_announced, mark_through = excluded.mark_through,
                    manual_set = excluded.manual_set, manual_name = excluded.manual_name,
                    manual_since = excluded.manual_since, manual_until = excluded.manual_until,
                    newest = excluded.newest, pruned_through = excluded.pruned_through,
                    applies_since_prune = excluded.applies_since_prune, policy = excluded.policy
                """, b, action: "write the user \"\(user)\"")
        }
    }

    // MARK: - Reading (from memory, once the user is owned)

    private func reading<T>(_ user: String, _ body: () throws -> T) throws -> T {
        try transaction("read the user \"\(user)\"") {
            try own(user)
            return try body()
        }
    }

    package func delivered(user: String, app: String, id: String) throws -> StoredNotification? {
        try reading(user) { cache.delivered(user: user, app: app, id: id) }
    }

    package func queued(user: String, app: String, id: String) throws -> StoredNotification? {
        try reading(user) { cache.queued(user: user, app: app, id: id) }
    }

    package func groupMembers(user: String, groupID: String) throws -> [StoredNotification] {
        try reading(user) { cache.groupMembers(user: user, groupID: groupID) }
    }

    package func groupDigest(user: String, groupID: String) throws -> GroupDigest? {
        try reading(user) { cache.groupDigest(user: user, groupID: groupID) }
    }

    package func calls(user: String, since: Double) throws -> [CallRecord] {
        try reading(user) { cache.calls(user: user, since: since) }
    }

    package func manualFocus(user: String) throws -> ManualFocus? {
        try reading(user) { cache.manualFocus(user: user) }
    }

    package func recent(user: String, since: Double) throws -> [StoredNotification] {
        try reading(user) { cache.recent(user: user, since: since) }
    }

    package func queuedNotifications(user: String) throws -> [StoredNotification] {
        try reading(user) { cache.queuedNotifications(user: user) }
    }

    package func hasDueSummaries(user: String, upTo t: Double) throws -> Bool {
        try reading(user) { cache.hasDueSummaries(user: user, upTo: t) }
    }

    /// Read by `hush suggest` only, straight from PostgreSQL (interactions are not kept in memory).
    package func interactions(user: String, since: Double) throws -> [Interaction] {
        // What memory would have pruned (see `RetentionPolicy`) is not read.
        let prunedThrough = try reading(user) { cache.retentionEntry(user: user)?.prunedThrough }
        let kept = prunedThrough.map { $0 - max(retentionSeconds, Suggestions.windowSeconds) } ?? -Double.infinity
        let since = max(since, kept)
        return try db.query(
            """
            SELECT date, direction, kind, app, people, group_name FROM hush_interactions
            WHERE user_name = $1 AND date >= $2 ORDER BY seq
            """, binds(user, since), action: "read interactions"
        ).map { row in
            var c = CellReader(row)
            let date = try c.requiredReal()
            let direction = try c.requiredText(), kind = try c.requiredText()
            guard let d = Interaction.Direction(rawValue: direction), let k = Communication.Kind(rawValue: kind) else {
                throw PostgresStateError(message: "an interaction with an unknown direction or kind")
            }
            return Interaction(
                user: user, date: date, direction: d, kind: k, app: try c.text(),
                people: try PersonJSON.decodePeople(try c.requiredText()), group: try c.text())
        }
    }

    // MARK: - Writing

    package func apply(_ changes: [StateChange]) throws {
        guard !changes.isEmpty else { return }
        try transaction("record an evaluation") {
            // Every user first: taking a lock may commit what the batch did so far (see `own`),
            // which must not fall between these changes' writes and memory.
            var users: Set<String> = []
            for change in changes {
                switch change {
                case .deliver(let n), .enqueue(let n), .replace(let n, _): users.insert(n.user)
                case .dequeue(let user, _, _), .withdraw(let user, _, _): users.insert(user)
                case .recordCall(let call): users.insert(call.user)
                }
            }
            for user in users.sorted() { try own(user) }
            /// The group each key is delivered in, as the changes so far left it (nil inner: none).
            var deliveredGroup: [String: String??] = [:]
            func currentGroup(_ user: String, _ app: String, _ id: String) -> String?? {
                if let known = deliveredGroup["\(user)\u{0}\(app)\u{0}\(id)"] { return known }
                return cache.delivered(user: user, app: app, id: id).map { $0.groupID }
            }
            for change in changes {
                switch change {
                case .deliver(let n):
                    try own(n.user)
                    try upsertDelivered(n, keepSeq: currentGroup(n.user, n.app, n.id) == .some(n.groupID))
                    deliveredGroup["\(n.user)\u{0}\(n.app)\u{0}\(n.id)"] = .some(n.groupID)
                    if n.summaryAt == nil { try insertArrival(n) }
                    touch(n.user)
                case .enqueue(let n):
                    try own(n.user)
                    try upsertQueued(n)
                    try insertArrival(n)
                    touch(n.user)
                case .replace(let n, let queued):
                    try own(n.user)
                    if queued {
                        try upsertQueued(n)
                    } else {
                        try upsertDelivered(n, keepSeq: currentGroup(n.user, n.app, n.id) == .some(n.groupID))
                        deliveredGroup["\(n.user)\u{0}\(n.app)\u{0}\(n.id)"] = .some(n.groupID)
                    }
                    touch(n.user)
                case .dequeue(let user, let app, let id):
                    try own(user)
                    try db.send(
                        "DELETE FROM hush_queue WHERE user_name = $1 AND app = $2 AND id = $3", binds(user, app, id),
                        action: "dequeue a notification")
                    touch(user)
                case .withdraw(let user, let app, let id):
                    try own(user)
                    try db.send(
                        "DELETE FROM hush_queue WHERE user_name = $1 AND app = $2 AND id = $3", binds(user, app, id),
                        action: "withdraw a notification")
                    try db.send(
                        "DELETE FROM hush_delivered WHERE user_name = $1 AND app = $2 AND id = $3",
                        binds(user, app, id), action: "withdraw a notification")
                    deliveredGroup["\(user)\u{0}\(app)\u{0}\(id)"] = .some(nil)
                    touch(user)
                case .recordCall(let call):
                    try own(call.user)
                    try db.send(
                        """
                        INSERT INTO hush_calls (user_name, date, app, caller, seq, day)
                        VALUES ($1, $2, $3, $4, nextval('hush_row_seq'), $5)
                        """,
                        binds(
                            call.user, call.date, call.app, PersonJSON.encode(call.caller),
                            PostgresSchema.day(call.date)),
                        action: "record a call")
                    touch(call.user)
                }
            }
            cache.apply(changes)
        }
    }

    private func upsertDelivered(_ n: StoredNotification, keepSeq: Bool) throws {
        var b = PostgresBindings(capacity: NotificationRow.count)
        NotificationRow.bind(n, to: &b)
        // Replaced in its group, a notification keeps its place (seq); in a new group it goes last.
        let seqOnConflict = keepSeq ? "" : ", seq = excluded.seq"
        try db.send(
            """
            INSERT INTO hush_delivered (\(NotificationRow.columns), seq)
            VALUES (\(NotificationRow.placeholders()), nextval('hush_row_seq'))
            ON CONFLICT (user_name, app, id) DO UPDATE SET \(NotificationRow.updateFromExcluded)\(seqOnConflict)
            """, b, action: "record a delivered notification")
    }

    private func upsertQueued(_ n: StoredNotification) throws {
        var b = PostgresBindings(capacity: NotificationRow.count)
        NotificationRow.bind(n, to: &b)
        // A replaced notification keeps its place in the queue.
        try db.send(
            """
            INSERT INTO hush_queue (\(NotificationRow.columns), seq)
            VALUES (\(NotificationRow.placeholders()), nextval('hush_row_seq'))
            ON CONFLICT (user_name, app, id) DO UPDATE SET \(NotificationRow.updateFromExcluded)
            """, b, action: "queue a notification")
    }

    private func insertArrival(_ n: StoredNotification) throws {
        var b = PostgresBindings(capacity: NotificationRow.count + 1)
        NotificationRow.bind(n, to: &b)
        b.add(PostgresSchema.day(n.date))
        try db.send(
            """
            INSERT INTO hush_arrivals (\(NotificationRow.columns), seq, day)
            VALUES (\(NotificationRow.placeholders()), nextval('hush_row_seq'), $\(NotificationRow.count + 1))
            """, b, action: "record an arrival")
    }

    package func takeDueSummaries(user: String, upTo t: Double) throws -> [SummaryBatch] {
        try transaction("take the due summaries") {
            try own(user)
            guard cache.hasDueSummaries(user: user, upTo: t) else { return [] }
            try db.send(
                "DELETE FROM hush_queue WHERE user_name = $1 AND summary_at <= $2", binds(user, t),
                action: "take the due summaries")
            touch(user)
            return cache.takeDueSummaries(user: user, upTo: t)
        }
    }

    package func deliverDueSummaries(
        user: String, upTo t: Double,
        recording changes: (SummaryBatch) throws -> [StateChange]
    ) throws -> [SummaryBatch] {
        guard try hasDueSummaries(user: user, upTo: t) else { return [] }
        return try atomically {
            let batches = try takeDueSummaries(user: user, upTo: t)
            for batch in batches { try apply(try changes(batch)) }
            return batches
        }
    }

    package func setManualFocus(user: String, _ focus: ManualFocus?) throws {
        try transaction("set the manual focus") {
            try own(user)
            cache.setManualFocus(user: user, focus)
            touch(user)
        }
    }

    package func addInteractions(_ interactions: [Interaction]) throws {
        guard !interactions.isEmpty else { return }
        try transaction("record interactions") {
            for i in interactions {
                var b = PostgresBindings(capacity: 8)
                b.add(i.user)
                b.add(i.date)
                b.add(i.direction.rawValue)
                b.add(i.kind.rawValue)
                b.add(i.app)
                b.add(PersonJSON.encode(i.people))
                b.add(i.group)
                b.add(PostgresSchema.day(i.date))
                try db.send(
                    """
                    INSERT INTO hush_interactions (user_name, date, direction, kind, app, people, group_name, seq, day)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, nextval('hush_row_seq'), $8)
                    """, b, action: "record interactions")
            }
        }
    }

    // MARK: - Retention

    /// Forgets delivered notifications, arrivals and calls older than `t`, and the events older
    /// than `t` that every webhook has taken (`OutboxHolds`): whole day partitions are dropped, and only the day
    /// `t` falls in (and the default partition) is deleted from row by row.
    package func prune(before t: Double) throws {
        try transaction("prune") {
            // Only the webhooks' cursors hold events back (`OutboxHolds`); the table holds other entries too.
            var cursors: [String: Int64] = [:]
            for row in try db.query("SELECT name, seq FROM hush_cursors", action: "read the cursors") {
                let (name, seq) = try row.decode((String, Int64).self)
                cursors[name] = seq
            }
            let prune = (cursors[OutboxHolds.prunesName] ?? 0) + 1
            try db.send(
                "INSERT INTO hush_cursors (name, seq) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET seq = excluded.seq",
                binds(OutboxHolds.prunesName, prune), action: "count the prunes")
            let acknowledged = OutboxHolds.acknowledged(
                cursors: cursors, prune: prune, retentionSeconds: retentionSeconds)
            let days = try PostgresSchema.partitionDays(db)
            // Interactions are kept as long as contact suggestions look back, if that is longer.
            let interactionsBefore = t + retentionSeconds - max(retentionSeconds, Suggestions.windowSeconds)
            for table in PostgresSchema.dayTables {
                let before = table == "hush_interactions" ? interactionsBefore : t
                for day in days[table, default: []] where day < PostgresSchema.day(before) {
                    if table == "hush_events", let acknowledged {
                        let newest = try db.query(
                            "SELECT max(seq) FROM hush_events_d\(day)", action: "read a day of events"
                        ).first?.decode(Int64?.self)
                        if let newest, newest > acknowledged { continue }
                    }
                    try db.query("DROP TABLE \(table)_d\(day)", action: "drop the partition \(table)_d\(day)")
                }
            }
            try db.send(
                "DELETE FROM hush_arrivals WHERE day <= $1 AND date < $2", binds(PostgresSchema.day(t), t),
                action: "prune arrivals")
            try db.send(
                "DELETE FROM hush_calls WHERE day <= $1 AND date < $2", binds(PostgresSchema.day(t), t),
                action: "prune calls")
            try db.send("DELETE FROM hush_delivered WHERE date < $1", binds(t), action: "prune delivered")
            if let acknowledged {
                try db.send(
                    "DELETE FROM hush_events WHERE day <= $1 AND at < $2 AND seq <= $3",
                    binds(PostgresSchema.day(t), t, acknowledged), action: "prune events")
            } else {
                try db.send(
                    "DELETE FROM hush_events WHERE day <= $1 AND at < $2", binds(PostgresSchema.day(t), t),
                    action: "prune events")
            }
            cache.prune(before: t)
        }
        try maintainPartitions(now: Date().timeIntervalSince1970)
    }

    /// Makes the day partitions from yesterday to three days ahead (by the wall clock) exist.
    private func maintainPartitions(now: Double) throws {
        let today = PostgresSchema.day(now)
        let days = (today - 1)...(today + 3)
        if maintainedDays == days { return }
        try PostgresSchema.ensurePartitions(db, days: days)
        maintainedDays = days
    }

    // MARK: - The outbox

    /// Numbers the events after every event recorded before (the outbox row stays locked until
    /// the transaction commits) and inserts them.
    @discardableResult
    package func appendEvents(_ events: [StoredEvent]) throws -> [StoredEvent] {
        guard !events.isEmpty else { return [] }
        return try transaction("record events") {
            let count = Int64(events.count)
            let last =
                try db.query(
                    "UPDATE hush_outbox SET last_seq = last_seq + $1 WHERE id = 1 RETURNING last_seq", binds(count),
                    action: "number events"
                ).first?.decode(Int64.self) ?? count
            var numbered = events
            for i in numbered.indices { numbered[i].seq = last - count + 1 + Int64(i) }
            var b = PostgresBindings(capacity: 6)
            b.add(numbered.map(\.seq))
            b.add(numbered.map { PostgresSchema.day($0.at) })
            b.add(numbered.map(\.user))
            b.add(numbered.map(\.at))
            b.add(numbered.map(\.kind))
            b.add(numbered.map(\.json))
            try db.send(
                """
                INSERT INTO hush_events (seq, day, user_name, at, kind, json)
                SELECT * FROM unnest($1::int8[], $2::int4[], $3::text[], $4::float8[], $5::text[], $6::text[])
                """, b, action: "record events")
            recordedEvents = true
            return numbered
        }
    }

    package func events(after seq: Int64, user: String?, limit: Int) throws -> [StoredEvent] {
        guard limit > 0 else { return [] }
        let rows: [PostgresRow]
        if let user {
            rows = try db.query(
                "SELECT seq, user_name, at, kind, json FROM hush_events WHERE user_name = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                binds(user, seq, Int64(limit)), action: "read events")
        } else {
            rows = try db.query(
                "SELECT seq, user_name, at, kind, json FROM hush_events WHERE seq > $1 ORDER BY seq LIMIT $2",
                binds(seq, Int64(limit)), action: "read events")
        }
        return try rows.map { row in
            let (seq, user, at, kind, json) = try row.decode((Int64, String, Double, String, String).self)
            return StoredEvent(seq: seq, user: user, at: at, kind: kind, json: json)
        }
    }

    package func lastEventSeq() throws -> Int64 {
        try db.query("SELECT last_seq FROM hush_outbox WHERE id = 1", action: "read the last event").first?.decode(
            Int64.self) ?? 0
    }

    // MARK: - Marks, policies, cursors, users

    package func scheduleMark(user: String) throws -> ScheduleMark? {
        try reading(user) { meta[user]?.mark }
    }

    package func setScheduleMark(user: String, _ mark: ScheduleMark) throws {
        try transaction("set a schedule mark") {
            try own(user)
            meta[user, default: UserMeta()].mark = mark
            touch(user)
        }
    }

    package func userPolicy(user: String) throws -> String? {
        try reading(user) { meta[user]?.policy }
    }

    package func setUserPolicy(user: String, _ text: String?) throws {
        try transaction(text == nil ? "remove a user's policy" : "set a user's policy") {
            try own(user)
            meta[user, default: UserMeta()].policy = text
            touch(user)
        }
    }

    package func cursor(_ name: String) throws -> Int64 {
        try db.query("SELECT seq FROM hush_cursors WHERE name = $1", binds(name), action: "read a cursor").first?
            .decode(
                Int64.self) ?? 0
    }

    package func setCursor(_ name: String, _ seq: Int64) throws {
        try transaction("set a cursor") {
            try db.send(
                "INSERT INTO hush_cursors (name, seq) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET seq = excluded.seq",
                binds(name, seq), action: "set a cursor")
        }
    }

    package func knownUsers() throws -> [String] {
        try db.query(
            """
            SELECT name FROM hush_users WHERE has_state
            UNION SELECT user_name FROM hush_interactions
            UNION SELECT user_name FROM hush_events
            ORDER BY 1
            """, action: "list the users"
        ).map { try $0.decode(String.self) }
    }

    // MARK: - Several instances (`SharedScheduling`)

    package var isShared: Bool { true }

    package func dueAt(user: String) throws -> Double? {
        try reading(user) { meta[user]?.dueAt }
    }

    package func setDueAt(user: String, _ t: Double?) throws {
        try transaction("schedule a user") {
            try own(user)
            meta[user, default: UserMeta()].dueAt = t
            touch(user)
        }
    }

    package func usersDue(upTo t: Double, limit: Int) throws -> [String] {
        try db.query(
            "SELECT name FROM hush_users WHERE due_at <= $1 ORDER BY due_at LIMIT $2", binds(t, Int64(limit)),
            action: "find the users with events due"
        ).map { try $0.decode(String.self) }
    }

    package func claim(user: String) throws -> Bool {
        guard inTransaction else { return true }
        if locked.contains(user) { return true }
        let got =
            try db.query(
                "SELECT pg_try_advisory_xact_lock($1)", binds(Self.lockKey(user)), action: "claim the user \"\(user)\""
            ).first?.decode(Bool.self) ?? false
        guard got else { return false }
        // Held now: `own` reads the user's row (its lock call returns at once).
        try own(user)
        return true
    }

    package func watchEvents(_ onNew: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)? {
        let listener = EventListener(url: url, logger: logger, onNew: onNew)
        listener.start()
        return { listener.stop() }
    }
}
