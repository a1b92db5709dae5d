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
struct CachedUser {
    struct Key: Hashable {
        var app: String
        var id: String
    }

    /// The delivered list: by key, and each group's members in `seq` order (a notification joining
    /// a group, new or moved from another, is given a seq above every other; replaced in place, it
    /// keeps its own), with the group digests made from them when first asked for.
    struct Delivered {
        var byKey: [Key: StoredNotification] = [:]
        var groups: [String: [Key]] = [:]
        var digests: [String: GroupDigest] = [:]

        func members(of group: String) -> [StoredNotification] {
            guard let keys = groups[group] else { return [] }
            return keys.compactMap { byKey[$0] }
        }

        /// Writes `n` as the upsert does.
        mutating func deliver(_ n: StoredNotification) {
            let key = Key(app: n.app, id: n.id)
            if let previous = byKey.updateValue(n, forKey: key) {
                if let group = previous.groupID { digests[group] = nil }
                if let group = n.groupID { digests[group] = nil }
                guard previous.groupID != n.groupID else { return }
                if let group = previous.groupID { removeMember(key, from: group) }
                if let group = n.groupID { groups[group, default: []].append(key) }
            } else if let group = n.groupID {
                groups[group, default: []].append(key)
                digests[group]?.add(n)
            }
        }

        mutating func remove(_ key: Key) {
            guard let previous = byKey.removeValue(forKey: key), let group = previous.groupID else { return }
            removeMember(key, from: group)
            digests[group] = nil
        }

        private mutating func removeMember(_ key: Key, from group: String) {
            guard var keys = groups.removeValue(forKey: group) else { return }
            keys.removeAll { $0 == key }
            if !keys.isEmpty { groups[group] = keys }
        }
    }

    /// The user's `user_versions` row when this was made or last written by this store; nil: none.
    var version: Int64?
    // Each part is read from the file when first asked for (nil: not yet), each by the read that
    // needs it, so a failed read names what it read.
    var delivered: Delivered?
    /// In queue order (`seq`): a replaced notification keeps its place.
    var queue: [StoredNotification]?
    /// In `seq` order.
    var arrivals: [StoredNotification]?
    var calls: [CallRecord]?
    /// nil: not read yet; `.some(nil)`: none.
    var manualFocus: ManualFocus??

    static func index(in queue: [StoredNotification], app: String, id: String) -> Int? {
        queue.firstIndex { $0.id == id && $0.app == app }
    }

    mutating func enqueue(_ n: StoredNotification) {
        guard queue != nil else { return }
        if let index = Self.index(in: queue!, app: n.app, id: n.id) { queue![index] = n } else { queue!.append(n) }
    }

    mutating func dequeue(app: String, id: String) {
        guard queue != nil, let index = Self.index(in: queue!, app: app, id: id) else { return }
        queue!.remove(at: index)
    }

    /// Forgets what `pruneUser` deletes from the file.
    mutating func prune(before t: Double) {
        arrivals?.removeAll { $0.date < t }
        calls?.removeAll { $0.date < t }
        guard let old = delivered?.byKey.filter({ $0.value.date < t }), !old.isEmpty else { return }
        for key in old.keys { delivered!.remove(key) }
    }

}

/// The users in memory, and what this connection knows of the file's changes.
struct UserCache {
    /// Rows read or written (all users) before the cache starts over: far above a week of a busy stream's
    /// users, a bound for a long-running server with many users.
    static let rowLimit = 1_000_000

    var users: [String: CachedUser] = [:]
    /// The `data_version` the entries were checked at.
    var dataVersion: Int64?
    /// The `schema_version` the entries were read at.
    var schemaVersion: Int64?
    /// Checked since the write in progress began: no other connection can commit while this one
    /// holds the write lock, so a batch checks once.
    var checkedWhileWriting = false
    /// Users whose rows the transaction in progress wrote: given a new version at its commit.
    var written: Set<String> = []

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
    static let upsertUserVersion = "INSERT OR REPLACE INTO user_versions (user, version) VALUES (?, ?)"
    static let selectUserDelivered = "SELECT \(DeliveredRow.selectList) FROM delivered WHERE user = ? ORDER BY seq"
    static let selectUserArrivals = "SELECT \(ArrivalRow.selectList) FROM arrivals WHERE user = ? ORDER BY seq"
    static let selectUserCalls = "SELECT \(CallRow.selectList) FROM calls WHERE user = ? ORDER BY seq"

    /// The user's cached state, loaded first when needed; `body` may change it (this store's own
    /// writes, made to the file already).
    func withUser<T>(_ db: Database, _ user: String, _ body: (inout CachedUser) throws -> T) throws -> T {
        try dropUsersOthersChanged(db)
        if userCache.users[user] == nil {
            if cachedRows > UserCache.rowLimit {
                // Bounded the simple way: start over when full.
                cachedRows = 0
                userCache.users.removeAll()
            }
            userCache.users[user] = try loadUser(db, user)
        }
        return try body(&userCache.users[user]!)
    }

    /// Changes the user's cached state after a write of theirs, if it is loaded (else it is loaded
    /// from the file, written already, when next read). Marks the user as written.
    func noteWrite(_ user: String, _ change: (inout CachedUser) -> Void) {
        userCache.written.insert(user)
        guard userCache.users[user] != nil else { return }
        change(&userCache.users[user]!)
        // Counted as a row more (most writes add one; what pruning removes is not counted back).
        cachedRows += 1
    }

    /// Drops the users another connection changed since the last check.
    func dropUsersOthersChanged(_ db: Database) throws {
        if isWriting && userCache.checkedWhileWriting { return }
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
    private func loadUser(_ db: Database, _ user: String) throws -> CachedUser {
        var cached = CachedUser()
        cached.version = try fetchInteger(db, sql: Self.selectUserVersion, [user.databaseValue])
        return cached
    }

    func cachedDelivered<T>(_ db: Database, _ user: String, _ body: (inout CachedUser.Delivered) -> T) throws -> T {
        try withUser(db, user) { cached in
            if cached.delivered == nil {
                var delivered = CachedUser.Delivered()
                let rows = try fetchAll(DeliveredRow.self, db, sql: Self.selectUserDelivered, [user.databaseValue])
                for row in rows { delivered.deliver(row.notification) }
                cachedRows += rows.count
                cached.delivered = delivered
            }
            return body(&cached.delivered!)
        }
    }

    func cachedQueue(_ db: Database, _ user: String) throws -> [StoredNotification] {
        try cachedList(db, user, \.queue) {
            try fetchAll(QueueRow.self, db, sql: Self.selectQueue, [user.databaseValue]).map(\.notification)
        }
    }

    func cachedArrivals(_ db: Database, _ user: String) throws -> [StoredNotification] {
        try cachedList(db, user, \.arrivals) {
            try fetchAll(ArrivalRow.self, db, sql: Self.selectUserArrivals, [user.databaseValue]).map(\.notification)
        }
    }

    func cachedCalls(_ db: Database, _ user: String) throws -> [CallRecord] {
        try cachedList(db, user, \.calls) {
            try fetchAll(CallRow.self, db, sql: Self.selectUserCalls, [user.databaseValue]).map(\.call)
        }
    }

    /// One of the user's lists, read from the file the first time it is asked for.
    private func cachedList<Item>(
        _ db: Database, _ user: String, _ part: WritableKeyPath<CachedUser, [Item]?>, read: () throws -> [Item]
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
            let version = Int64.random(in: .min ... .max)
            try execute(db, sql: Self.upsertUserVersion, [user.databaseValue, version.databaseValue])
            userCache.users[user]?.version = version
        }
        userCache.written.removeAll(keepingCapacity: true)
    }
}
