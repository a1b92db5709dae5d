import GRDB
import HushCore

/// Everything an evaluation reads of one user, in memory: an evaluation's reads never reach
/// SQLite (they were most of the store's cost). A user is loaded from the file at their first
/// read and kept up to date with this store's own writes, made to the file first; pruning prunes
/// it too, so it is bounded by the retention like the file.
///
/// What other connections commit is seen through `PRAGMA data_version`, checked before a read
/// (once per batch: nobody else commits while a batch holds the write lock). When it changed,
/// the `user_versions` table (migration v3) says whose rows changed: every transaction that
/// writes a user's cached rows gives the user a new random version, so only those users are
/// dropped, and loaded again at their next read. A failed write or commit drops every user, as
/// what the cache learnt from it may have been undone.
///
/// A class: every read and write reaches it through one lookup and changes it in place (a struct
/// in the dictionary went through the dictionary's modify accessor and uniqueness checks on each).
/// Its store's one owner alone touches it: the run-time exclusivity checks are left out.
final class CachedUser {
    typealias Key = AppAndID

    /// A delivered notification, held once for its key and its group (a notification stored
    /// inline in the dictionary made every bucket of it as large as a notification).
    final class Stored: HeldByAppAndID {
        @exclusivity(unchecked) var n: StoredNotification
        /// Its row's place in the file (schema v5: the delivered list is keyed by (user, seq)).
        @exclusivity(unchecked) var seq: Int64
        /// The arrival its row stands for (schema v6), if any: written to `arrivals` before the
        /// row is replaced or deleted.
        var arrivalSeq: Int64? {
            get { arrivalSeqOrZero == 0 ? nil : arrivalSeqOrZero }
            set { arrivalSeqOrZero = newValue ?? 0 }
        }
        /// 0: none (seqs start at 1). Not an optional, whose extra byte made every entry 16
        /// bytes larger in malloc's sizes: 3 MB on the benchmark week.
        @exclusivity(unchecked) private var arrivalSeqOrZero: Int64
        init(_ n: StoredNotification, seq: Int64, arrivalSeq: Int64?) {
            self.n = n
            self.seq = seq
            arrivalSeqOrZero = arrivalSeq ?? 0
        }

        var heldApp: String { n.app }
        var heldID: String { n.id }
        func isHeld(under key: Key) -> Bool { n.hasKey(app: key.app, id: key.id) }
    }

    /// Where a delivered notification's row goes (schema v5: keyed by (user, seq), so that a new
    /// row is appended to its user's rows instead of inserted among them).
    enum Placement {
        /// New to the list: a new row at `seq`.
        case new(seq: Int64)
        /// Replaced in place, in the same group: its row at `seq`, rewritten.
        case inPlace(seq: Int64)
        /// Replaced, moving to another group (or out of one): last in its new group, so its row
        /// moves from `from` to `to`.
        case moved(from: Int64, to: Int64)
    }

    /// A group's members in `seq` order, and its digest. A class, as a notification's `Stored`
    /// is: a delivery reaches it with one lookup of the group id, and changes it in place.
    final class Group {
        @exclusivity(unchecked) var members: [Stored] = []
        /// Made from the members when first asked for, then kept up to date by deliveries to the
        /// group; nil: not made yet, or dropped by a change it cannot follow.
        @exclusivity(unchecked) var digest: GroupDigest?
    }

    /// The delivered list: by key, and each group's members in `seq` order (a notification joining
    /// a group, new or moved from another, is given a seq above every other; replaced in place, it
    /// keeps its own), with the group digests made from them when first asked for.
    struct Delivered {
        var byKey = ByAppAndID<Stored>()
        var groups: [String: Group] = [:]
        /// The seq the next notification joining a group takes: above every other of the user's.
        var nextSeq: Int64 = 1
        /// The highest arrival a row stood for when the list was read from the file (0: none).
        var highestArrivalSeq: Int64 = 0
        /// No notification in the list is older than this (a lower bound, lowered by each
        /// delivery; exact after a prune): a prune with an earlier cutoff leaves the list, and the
        /// user's delivered rows in the file, alone instead of scanning them.
        var oldest = Double.infinity

        func members(of group: String) -> [StoredNotification] {
            groups[group]?.members.map(\.n) ?? []
        }

        subscript(key: Key) -> StoredNotification? { byKey[key]?.n }

        /// Where `n`, about to be delivered, is written: `seq` (the user's next) is taken when it
        /// is new or changes group, as `deliver` does.
        func placement(of n: StoredNotification, seq: Int64) -> Placement {
            guard let stored = byKey[Key(app: n.app, id: n.id)] else { return .new(seq: seq) }
            return stored.n.groupID == n.groupID ? .inPlace(seq: stored.seq) : .moved(from: stored.seq, to: seq)
        }

        /// Delivers `n`: new, or replacing the notification of its key. `seq` (the user's next)
        /// is its row's when it is new or changes group; replaced in place, it keeps its own.
        /// `arrivalSeq`: the arrival its row stands for, if any.
        mutating func deliver(_ n: StoredNotification, seq: Int64, arrivalSeq: Int64?) {
            oldest = min(oldest, n.date)
            // One lookup: the new entry is put in the slot found for the key, not looked up again.
            let (stored, isNew) = byKey.value(forKey: Key(app: n.app, id: n.id)) {
                Stored(n, seq: seq, arrivalSeq: arrivalSeq)
            }
            if !isNew {
                // Replaced in place: its place in its group is its entry's.
                let previousGroup = stored.n.groupID
                stored.n = n
                stored.arrivalSeq = arrivalSeq
                if let group = previousGroup { groups[group]?.digest = nil }
                guard previousGroup != n.groupID else { return }
                stored.seq = seq
                if let group = previousGroup { removeMember(stored, from: group) }
                if let group = n.groupID {
                    let joined = Self.group(in: &groups[group])
                    joined.members.append(stored)
                    joined.digest = nil
                }
            } else {
                guard let group = n.groupID else { return }
                let joined = Self.group(in: &groups[group])
                joined.members.append(stored)
                joined.digest?.add(n)
            }
        }

        /// The group in `slot`, or a new empty one put there.
        private static func group(in slot: inout Group?) -> Group {
            if let group = slot { return group }
            let group = Group()
            slot = group
            return group
        }

        mutating func remove(_ key: Key) {
            guard let stored = byKey.removeValue(forKey: key), let group = stored.n.groupID else { return }
            removeMember(stored, from: group)
        }

        private mutating func removeMember(_ stored: Stored, from group: String) {
            guard let found = groups[group] else { return }
            found.members.removeAll { $0 === stored }
            found.digest = nil
            if found.members.isEmpty { groups[group] = nil }
        }
    }

    /// The user's `user_versions` row when this was made or last written by this store; nil: none.
    @exclusivity(unchecked) var version: Int64?
    // Each part is read from the file when first asked for (nil: not yet), each by the read that
    // needs it, so a failed read names what it read.
    @exclusivity(unchecked) var delivered: Delivered?
    /// In queue order (`seq`): a replaced notification keeps its place. Changed only by `load`,
    /// `enqueue`, `dequeue` and `removeDue`, which keep `queuedKeys` with it.
    @exclusivity(unchecked) private(set) var queue: [StoredNotification]? {
        // No `oldValue`: changed in place, as before, not copied.
        didSet { earliestSummary = nil }
    }
    /// The keys in `queue`. Every evaluation asks whether its notification is queued, and it
    /// nearly never is: a search of the queue (a scan, hundreds long under a Focus) cost about a
    /// thousand instructions a notification.
    @exclusivity(unchecked) private var queuedKeys: Set<Key> = []
    /// The earliest summary time in `queue` (`.some(nil)`: none); nil: not worked out since the
    /// queue last changed. Whether a summary is due is asked twice an evaluation, and the queue
    /// changes far less often.
    @exclusivity(unchecked) private var earliestSummary: Double??
    /// The seq the next notification new to the queue takes (known once `queue` is read).
    @exclusivity(unchecked) var nextQueueSeq: Int64 = 1
    /// In `seq` order, as the file keeps them (`StoredNotification.arrival`).
    @exclusivity(unchecked) var arrivals: [StoredNotification]?
    /// The seq of the user's next arrival; nil: not read yet.
    @exclusivity(unchecked) var nextArrivalSeq: Int64?
    /// No arrival of the user's, in the file or written since, is older than this (+infinity:
    /// there are none); nil: not known. Known from the moment the file held none, lowered by each
    /// arrival written, and a prune's cutoff after it: the arrivals' key is (user, seq), so a
    /// prune that cannot skip them scans all the user's rows (every 1,000 notifications).
    @exclusivity(unchecked) private(set) var arrivalsNotBefore: Double?
    @exclusivity(unchecked) var calls: [CallRecord]?
    /// nil: not read yet; `.some(nil)`: none.
    @exclusivity(unchecked) var manualFocus: ManualFocus??
    /// Every part a write may change is loaded (`SQLiteStateStore.loadEveryPart`).
    @exclusivity(unchecked) var loadedForWriting = false

    /// The parts of a user the file holds no rows of (no delivered, queued, arrival, call or
    /// manual focus row), known without reading each: a user new to the file cost six reads that
    /// found nothing (about 40,000 instructions; most of a line on a stream of many users), where
    /// the one that says there is nothing costs a few thousand. Arrivals stay unread: few policies
    /// read them, and kept for every user they would only take memory.
    func startEmpty() {
        delivered = Delivered()
        load(queue: [])
        nextQueueSeq = 1
        readNextArrivalSeq(1, highestDelivered: 0)
        calls = []
        manualFocus = .some(nil)
    }

    /// Whether anything in the queue is due at `t` (`SummaryQueue.isDue`); nil: the queue is not
    /// read yet.
    func anyDue(upTo t: Double) -> Bool? {
        guard let queue else { return nil }
        if earliestSummary == nil {
            // As `SummaryQueue.isDue` compares (a NaN is never due, nor the earliest).
            earliestSummary = .some(
                queue.reduce(nil) { (earliest: Double?, n) in
                    guard let at = n.summaryAt, !at.isNaN else { return earliest }
                    return min(earliest ?? at, at)
                })
        }
        guard let earliest = earliestSummary!, earliest <= t else { return false }
        return true
    }

    /// The queue as read from the file.
    func load(queue: [StoredNotification]) {
        self.queue = queue
        queuedKeys = Set(queue.lazy.map { Key(app: $0.app, id: $0.id) })
    }

    /// The queued notification of that key, if the queue is read and holds one.
    func queued(app: String, id: String) -> StoredNotification? {
        index(app: app, id: id).map { queue![$0] }
    }

    private func index(app: String, id: String) -> Int? {
        guard let queue, !queue.isEmpty, queuedKeys.contains(Key(app: app, id: id)) else { return nil }
        return queue.firstIndex { $0.hasKey(app: app, id: id) }
    }

    func enqueue(_ n: StoredNotification) {
        guard queue != nil else { return }
        if let index = index(app: n.app, id: n.id) {
            queue![index] = n
        } else {
            queue!.append(n)
            queuedKeys.insert(Key(app: n.app, id: n.id))
        }
    }

    func dequeue(app: String, id: String) {
        guard let index = index(app: app, id: id) else { return }
        queue!.remove(at: index)
        queuedKeys.remove(Key(app: app, id: id))
    }

    /// Takes out what is due at `t` (`SummaryQueue.isDue`).
    func removeDue(upTo t: Double) {
        guard queue != nil else { return }
        queue!.removeAll { n in
            guard SummaryQueue.isDue(n, upTo: t) else { return false }
            queuedKeys.remove(Key(app: n.app, id: n.id))
            return true
        }
    }

    /// `nextArrivalSeq` as read from the file: `nextInTable` from `arrivals`, where 1 says that
    /// table holds none of the user's (a prune then has none to look for there until one is
    /// written), and the highest seq a delivered row stands for.
    func readNextArrivalSeq(_ nextInTable: Int64, highestDelivered: Int64) {
        nextArrivalSeq = max(nextInTable, highestDelivered + 1)
        if nextInTable == 1 { arrivalsNotBefore = .infinity }
    }

    /// An arrival written (`arrivalsNotBefore`). A NaN date is stored as NULL, which no prune
    /// deletes: `min` keeps the bound.
    func noteArrival(_ n: StoredNotification) {
        if let bound = arrivalsNotBefore { arrivalsNotBefore = min(bound, n.date) }
    }

    /// Whether a prune before `t` may find arrivals to forget.
    func mayHaveArrivals(before t: Double) -> Bool {
        guard let bound = arrivalsNotBefore else { return true }
        return bound < t
    }

    /// Forgets what `pruneUser` deletes from the file.
    func prune(before t: Double) {
        arrivals?.removeAll { $0.date < t }
        // What the prune leaves is no older than `t` (and what is written after it lowers this).
        if mayHaveArrivals(before: t) && arrivalsNotBefore != nil { arrivalsNotBefore = t }
        calls?.removeAll { $0.date < t }
        guard delivered != nil, delivered!.oldest < t else { return }
        var old: [Key] = []
        var oldestKept = Double.infinity
        delivered!.byKey.forEach { key, stored in
            let date = stored.n.date
            if date < t { old.append(key) } else { oldestKept = min(oldestKept, date) }
        }
        delivered!.oldest = oldestKept
        for key in old { delivered!.remove(key) }
    }

    /// Whether a prune before `t` may find delivered notifications to forget: true unless the
    /// list is loaded and nothing in it is older.
    func mayHaveDelivered(before t: Double) -> Bool {
        guard let delivered else { return true }
        return delivered.oldest < t
    }

}

extension SQLiteStateStore {
    /// For a process about to exit: the users cached are kept from being freed when the store goes
    /// (the exit reclaims them at once; one by one, 200,000 lines' took a quarter of a second).
    package func keepCacheUntilExit() {
        final class Kept {
            let users: [String: CachedUser]
            init(_ users: [String: CachedUser]) { self.users = users }
        }
        _ = Unmanaged.passRetained(Kept(userCache.users))
    }
}

/// The users in memory, and what this connection knows of the file's changes.
struct UserCache {
    /// The version stamps this connection writes (`stampWrittenUsers`).
    var versions = VersionStamps()

    /// Rows read or written (all users) before the cache starts over: far above a week of a busy stream's
    /// users, a bound for a long-running server with many users.
    static let rowLimit = 1_000_000

    /// Any change to it forgets the user last looked up (`user(_:)`).
    var users: [String: CachedUser] {
        get { storedUsers }
        set {
            forgetLastUser()
            storedUsers = newValue
        }
        _modify {
            forgetLastUser()
            yield &storedUsers
        }
    }
    private var storedUsers: [String: CachedUser] = [:]
    /// The user last looked up: an evaluation reaches its user's state several times, and a
    /// stream often has runs of one user; comparing a short name is far cheaper than hashing it.
    /// Two properties, not a tuple: a tuple was copied whole to be compared (a retain and a
    /// release of the name, ten times a line).
    private var lastUserName: String?
    private var lastUserCached: CachedUser?

    private mutating func forgetLastUser() {
        lastUserName = nil
        lastUserCached = nil
    }

    /// `users[name]`, remembered until `users` changes.
    mutating func user(_ name: String) -> CachedUser? {
        if lastUserName == name, let cached = lastUserCached { return cached }
        guard let found = storedUsers[name] else { return nil }
        lastUserName = name
        lastUserCached = found
        return found
    }

    /// The `data_version` the entries were checked at.
    var dataVersion: Int64?
    /// The `schema_version` the entries were read at.
    var schemaVersion: Int64?
    /// Checked since the write in progress began: no other connection can commit while this one
    /// holds the write lock, so a batch checks once.
    var checkedWhileWriting = false
    /// Users whose rows the transaction in progress wrote: given a new version at its commit.
    var written: Set<String> {
        get { storedWritten }
        set {
            lastWritten = nil
            storedWritten = newValue
        }
        _modify {
            lastWritten = nil
            yield &storedWritten
        }
    }
    private var storedWritten: Set<String> = []
    /// The user last marked written (`markWritten`), until `written` changes.
    private var lastWritten: String?

    /// Adds `user` to `written` (a user's writes come in runs: most are in already).
    mutating func markWritten(_ user: String) {
        if lastWritten == user { return }
        storedWritten.insert(user)
        lastWritten = user
    }

    mutating func clear() {
        users.removeAll()
        dataVersion = nil
        schemaVersion = nil
        checkedWhileWriting = false
    }
}

extension SQLiteStateStore {
    static let selectSchemaVersion = "PRAGMA schema_version"
    static let selectUserVersions = "SELECT user, version FROM user_versions"
    static let selectUserVersion = "SELECT version FROM user_versions WHERE user = ?"
    /// 1 when the user has a row in any table a `CachedUser` holds a part of, else 0.
    static let selectUserHasRows = """
        SELECT EXISTS (SELECT 1 FROM delivered WHERE user = ?1) OR EXISTS (SELECT 1 FROM queue WHERE user = ?1)
            OR EXISTS (SELECT 1 FROM arrivals WHERE user = ?1) OR EXISTS (SELECT 1 FROM calls WHERE user = ?1)
            OR EXISTS (SELECT 1 FROM manual_focus WHERE user = ?1)
        """
    static let upsertUserVersion = """
        INSERT INTO user_versions (user, version) VALUES (?, ?) ON CONFLICT (user) DO UPDATE SET version = excluded.version
        """
    static let selectUserDelivered = "SELECT \(DeliveredRow.selectList) FROM delivered WHERE user = ? ORDER BY seq"
    /// The user's arrivals: the rows of `arrivals`, and the delivered rows that stand for theirs
    /// (schema v6), in seq order.
    static let selectUserArrivals = """
        SELECT \(ArrivalRow.selectList) FROM arrivals WHERE user = ?1
        UNION ALL
        SELECT \(NotificationColumn.arrivalList), arrival_seq FROM delivered WHERE user = ?1 AND arrival_seq IS NOT NULL
        ORDER BY 7
        """
    static let selectUserCalls = "SELECT \(CallRow.selectList) FROM calls WHERE user = ? ORDER BY seq"

    /// The user's cached state, loaded first when needed; `body` may change it (this store's own
    /// writes, made to the file already).
    func withUser<T>(_ db: Database, _ user: String, _ body: (CachedUser) throws -> T) throws -> T {
        try dropUsersOthersChanged(db)
        if let cached = userCache.user(user) { return try body(cached) }
        // Bounded the simple way: start over when full and a user not in it is needed. Not
        // while writing behind, where a user with a pending write must stay: the caller starts
        // it over between batches (`cacheIsFull`).
        if cachedRows > cacheRowLimit {
            if isRecording {
                cacheWantsRestart = true
            } else {
                cachedRows = 0
                userCache.users.removeAll()
            }
        }
        let cached = try loadUser(db, user)
        userCache.users[user] = cached
        return try body(cached)
    }

    /// Changes the user's cached state after a write of theirs, if it is loaded (else it is loaded
    /// from the file, written already, when next read). Marks the user as written.
    func noteWrite(_ user: String, _ change: (CachedUser) -> Void) {
        userCache.markWritten(user)
        if let db = recordingDatabase, userCache.user(user)?.loadedForWriting != true {
            do { try loadEveryPart(db, user) } catch { recording!.failed = true }
        }
        guard let cached = userCache.user(user) else { return }
        change(cached)
        // Counted as a row more (most writes add one; what pruning removes is not counted back).
        cachedRows += 1
    }

    /// Drops the users another connection changed since the last check.
    func dropUsersOthersChanged(_ db: Database) throws {
        if isWriting && userCache.checkedWhileWriting { return }
        // Writing behind, the writer checks for other connections' commits (`BackgroundWriter`).
        if isRecording { return }
        let version = try fetchInteger(db, sql: Self.selectDataVersion, []) ?? 0
        if userCache.dataVersion != version {
            // A table dropped or changed: every part is read again (and fails if it must).
            let schema = try fetchInteger(db, sql: Self.selectSchemaVersion, []) ?? 0
            if userCache.schemaVersion != schema {
                userCache.users.removeAll()
                cachedRows = 0
                userCache.schemaVersion = schema
            }
            if !userCache.users.isEmpty {
                var versions: [String: Int64] = [:]
                let statement = try db.cachedStatement(sql: Self.selectUserVersions)
                let rows = try Row.fetchCursor(statement)
                while let row = try rows.next() {
                    let user: String = row[0]
                    let version: Int64 = row[1]
                    versions[user] = version
                }
                for (user, cached) in userCache.users where versions[user] != cached.version {
                    userCache.users[user] = nil
                }
            }
            userCache.dataVersion = version
        }
        userCache.checkedWhileWriting = isWriting
    }

    /// A user this connection has not met (or dropped): their version, the parts come when read.
    /// A user without a version (new to the file, as a rule) is asked once whether they have any
    /// rows at all; with none, every part is known empty (`CachedUser.startEmpty`). A missing
    /// version alone does not say so: a transaction stamps the users it wrote only as it commits,
    /// and a file written by other means may hold rows without one.
    private func loadUser(_ db: Database, _ user: String) throws -> CachedUser {
        let cached = CachedUser()
        let name = user.databaseValue
        cached.version = try fetchInteger(db, sql: Self.selectUserVersion, [name])
        if cached.version == nil, try fetchInteger(db, sql: Self.selectUserHasRows, [name]) == 0 {
            cached.startEmpty()
        }
        return cached
    }

    func cachedDelivered<T>(_ db: Database, _ user: String, _ body: (inout CachedUser.Delivered) -> T) throws -> T {
        try withUser(db, user) { cached in
            try loadDelivered(db, user, into: cached)
            return body(&cached.delivered!)
        }
    }

    /// The user's delivered list, read from the file unless it is in memory already.
    private func loadDelivered(_ db: Database, _ user: String, into cached: CachedUser) throws {
        if cached.delivered == nil {
            var delivered = CachedUser.Delivered()
            let rows = try fetchAll(DeliveredRow.self, db, sql: Self.selectUserDelivered, [user.databaseValue])
            for row in rows {
                delivered.deliver(row.notification, seq: row.seq, arrivalSeq: row.arrivalSeq)
                delivered.nextSeq = max(delivered.nextSeq, row.seq + 1)
                if let arrival = row.arrivalSeq {
                    delivered.highestArrivalSeq = max(delivered.highestArrivalSeq, arrival)
                }
            }
            cachedRows += rows.count
            cached.delivered = delivered
        }
    }

    func cachedQueue(_ db: Database, _ user: String) throws -> [StoredNotification] {
        try withQueue(db, user) { $0.queue! }
    }

    /// `body` of the user, with their queue read.
    func withQueue<T>(_ db: Database, _ user: String, _ body: (CachedUser) -> T) throws -> T {
        try withUser(db, user) { cached in
            if cached.queue == nil {
                let rows = try fetchAll(QueueRow.self, db, sql: Self.selectQueue, [user.databaseValue])
                cached.load(queue: rows.map(\.notification))
                cached.nextQueueSeq = (rows.last?.seq ?? 0) + 1
                cachedRows += rows.count
            }
            return body(cached)
        }
    }

    // The seqs of the user's next rows, given by this store (since schema v4): only group, queue and
    // arrival order within the user depend on them. Worked out from the file when the user is
    // loaded (again after another connection wrote them), then counted here.

    /// Where `n` is written (`Delivered.placement`), the user's next seq taken for it.
    func nextDeliveredPlacement(_ db: Database, _ n: StoredNotification) throws -> CachedUser.Placement {
        try cachedDelivered(db, n.user) { delivered in
            defer { delivered.nextSeq += 1 }
            return delivered.placement(of: n, seq: delivered.nextSeq)
        }
    }

    func nextQueueSeq(_ db: Database, _ user: String) throws -> Int64 {
        _ = try cachedQueue(db, user)
        return try withUser(db, user) { cached in
            defer { cached.nextQueueSeq += 1 }
            return cached.nextQueueSeq
        }
    }

    func nextArrivalSeq(_ db: Database, _ user: String) throws -> Int64 {
        try withUser(db, user) { cached in
            try readNextArrivalSeq(db, user, into: cached)
            let seq = cached.nextArrivalSeq!
            cached.nextArrivalSeq = seq + 1
            return seq
        }
    }

    /// The user's next arrival seq, read from the file unless known: after those of `arrivals` and
    /// of the delivered rows that stand for arrivals (read with the delivered list).
    func readNextArrivalSeq(_ db: Database, _ user: String, into cached: CachedUser) throws {
        guard cached.nextArrivalSeq == nil else { return }
        try loadDelivered(db, user, into: cached)
        let highestDelivered = cached.delivered!.highestArrivalSeq
        let nextInTable = try fetchInteger(db, sql: Self.selectNextArrivalSeq, [user.databaseValue]) ?? 1
        cached.readNextArrivalSeq(nextInTable, highestDelivered: highestDelivered)
    }

    func cachedArrivals(_ db: Database, _ user: String) throws -> [StoredNotification] {
        try cachedList(db, user, \.arrivals) {
            guard isRecording else {
                return try fetchAll(ArrivalRow.self, db, sql: Self.selectUserArrivals, [user.databaseValue])
                    .map(\.notification)
            }
            // Writing behind, the file may lack what was recorded for them and not committed yet:
            // the batch being decided, and maybe those being committed meanwhile. Which of those
            // the file holds says its version of the user (`stampWrittenUsers`), read in the same
            // snapshot as the arrivals.
            var arrivals: [StoredNotification] = []
            var fileVersion: Int64?
            try db.inTransaction(.deferred) {
                fileVersion = try fetchInteger(db, sql: Self.selectUserVersion, [user.databaseValue])
                arrivals = try fetchAll(ArrivalRow.self, db, sql: Self.selectUserArrivals, [user.databaseValue])
                    .map(\.notification)
                return .commit
            }
            return withPendingArrivals(user, arrivals, fileVersion: fileVersion)
        }
    }

    func cachedCalls(_ db: Database, _ user: String) throws -> [CallRecord] {
        try cachedList(db, user, \.calls) {
            try fetchAll(CallRow.self, db, sql: Self.selectUserCalls, [user.databaseValue]).map(\.call)
        }
    }

    /// One of the user's lists, read from the file the first time it is asked for.
    private func cachedList<Item>(
        _ db: Database, _ user: String, _ part: ReferenceWritableKeyPath<CachedUser, [Item]?>, read: () throws -> [Item]
    ) throws -> [Item] {
        try withUser(db, user) { cached in
            if let list = cached[keyPath: part] { return list }
            let list = try read()
            cached[keyPath: part] = list
            cachedRows += list.count
            return list
        }
    }

    func cachedManualFocus(_ db: Database, _ user: String) throws -> ManualFocus? {
        try withUser(db, user) { cached in
            if let focus = cached.manualFocus { return focus }
            let focus = try fetchOne(ManualFocusRow.self, db, sql: Self.selectManualFocus, [user.databaseValue])?.focus
            cached.manualFocus = .some(focus)
            return focus
        }
    }

    /// Before the transaction in progress commits: a new version for every user it wrote, so that
    /// other connections drop them from their caches.
    func stampWrittenUsers(_ db: Database) throws {
        guard !userCache.written.isEmpty else { return }
        for user in userCache.written {
            let version = Int64(bitPattern: userCache.versions.next())
            try execute(db, .upsertUserVersion, .userVersion(user: user, version: version))
            userCache.users[user]?.version = version
        }
        userCache.written.removeAll(keepingCapacity: true)
    }
}

/// The versions a connection stamps on the users it writes: unlike each other within the process
/// (SplitMix64 runs through every 64-bit value before it repeats one) and, from a random start,
/// unlike another process's. Asking the system for a random number per user per batch cost one
/// system call each (13,000 on the benchmark week).
struct VersionStamps {
    private var state = UInt64.random(in: .min ... .max)

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z &>> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z &>> 31)
    }
}
