import GRDB
package import HushCore

/// Group digests (what a group's summary line is made of), kept by the store so that an
/// evaluation does not re-read every member of its group: in a week of a busy chat a group holds
/// hundreds, and reading them all made each evaluation slower than the last.
///
/// A digest is computed from the members once, then kept up to date with this store's own
/// writes (a notification joining its group is added to it; one replaced, moved or pruned drops
/// the digests it touches, rebuilt when next asked for). What other connections commit is seen
/// through `PRAGMA data_version`: when it changes, every digest is dropped. A failed write or
/// commit drops them all too, as their updates may have been undone.
struct DigestCache {
    static let limit = 4096

    struct Key: Hashable {
        var user: String
        var group: String
    }

    private(set) var entries: [Key: GroupDigest] = [:]
    /// The `data_version` the entries were made at.
    var dataVersion: Int64?
    /// Checked since the write in progress began: no other connection can commit while this one
    /// holds the write lock, so a batch checks once.
    var checkedWhileWriting = false

    subscript(user: String, group: String) -> GroupDigest? {
        entries[Key(user: user, group: group)]
    }

    mutating func insert(_ digest: GroupDigest, user: String, group: String) {
        // Bounded the simple way: start over when full.
        if entries.count >= Self.limit { entries.removeAll(keepingCapacity: true) }
        entries[Key(user: user, group: group)] = digest
    }

    /// Adds a notification that joined its group (not one already in it).
    mutating func add(_ n: StoredNotification, group: String) {
        let key = Key(user: n.user, group: group)
        guard var digest = entries.removeValue(forKey: key) else { return }
        digest.add(n)
        entries[key] = digest
    }

    mutating func drop(user: String, group: String) {
        entries[Key(user: user, group: group)] = nil
    }

    mutating func dropUser(_ user: String) {
        guard !entries.isEmpty else { return }
        entries = entries.filter { $0.key.user != user }
    }

    mutating func clear() {
        entries.removeAll()
        dataVersion = nil
        checkedWhileWriting = false
    }
}

extension SQLiteStateStore {
    static let selectDataVersion = "PRAGMA data_version"

    package func groupDigest(user: String, groupID: String) throws -> GroupDigest? {
        try read("read a group") { db in
            try dropDigestsIfOthersCommitted(db)
            if let digest = digestCache[user, groupID] { return digest }
            let digest = GroupDigest(members: try cachedGroupMembers(db, user: user, groupID: groupID))
            digestCache.insert(digest, user: user, group: groupID)
            return digest
        }
    }

    /// Drops every digest when another connection has committed since they were made.
    func dropDigestsIfOthersCommitted(_ db: Database) throws {
        if isWriting && digestCache.checkedWhileWriting { return }
        let version = try fetchInteger(db, sql: Self.selectDataVersion, []) ?? 0
        if digestCache.dataVersion != version {
            digestCache.clear()
            digestCache.dataVersion = version
        }
        digestCache.checkedWhileWriting = isWriting
    }

    /// Before `n` is written to the delivered list: keeps the digests of its groups right.
    func updateDigests(delivering n: StoredNotification, in db: Database) throws {
        guard !digestCache.entries.isEmpty else { return }
        if let previous = try deliveredGroup(user: n.user, app: n.app, id: n.id, in: db) {
            // Replaced in place or moved: rebuilt from the members when next asked for.
            if let previousGroup = previous.groupID { digestCache.drop(user: n.user, group: previousGroup) }
            if let group = n.groupID { digestCache.drop(user: n.user, group: group) }
        } else if let group = n.groupID {
            digestCache.add(n, group: group)
        }
    }

    /// Before the delivered notification with this key is removed: drops its group's digest.
    func dropDigest(user: String, app: String, id: String, in db: Database) throws {
        guard !digestCache.entries.isEmpty else { return }
        if let group = try deliveredGroup(user: user, app: app, id: id, in: db)?.groupID {
            digestCache.drop(user: user, group: group)
        }
    }

    /// The group of the delivered notification with this key; nil: none is delivered.
    private func deliveredGroup(user: String, app: String, id: String, in db: Database) throws
        -> DeliveredGroupMembership?
    {
        try fetchOne(
            DeliveredGroupMembership.self, db, sql: Self.selectDeliveredGroup,
            [user.databaseValue, app.databaseValue, id.databaseValue])
    }
}
