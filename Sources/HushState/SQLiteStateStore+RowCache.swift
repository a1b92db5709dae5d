import GRDB
import HushCore

/// Delivered notifications this store has decoded, by `seq`, each with the `rev` it had. Every
/// insert or update of a delivered row draws a new random `rev` (in any process), so an entry
/// whose `rev` still matches the row's is the row: no invalidation is needed, even when another
/// process writes. Group members are re-read on every evaluation (groups of hundreds are
/// ordinary in a week of chat): this turns decoding every member into an index-only scan.
struct RowCache {
    static let limit = 8192

    private var entries: [Int64: (rev: Int64, notification: StoredNotification)] = [:]

    subscript(seq: Int64, rev: Int64) -> StoredNotification? {
        guard let entry = entries[seq], entry.rev == rev else { return nil }
        return entry.notification
    }

    mutating func insert(_ notification: StoredNotification, seq: Int64, rev: Int64) {
        // Bounded the simple way: start over when full.
        if entries.count >= Self.limit { entries.removeAll(keepingCapacity: true) }
        entries[seq] = (rev, notification)
    }

    var count: Int { entries.count }
}

extension SQLiteStateStore {
    /// The members of a group, oldest first: (seq, rev) from the covering index, then each row
    /// from the cache, or decoded and cached.
    func cachedGroupMembers(_ db: Database, user: String, groupID: String) throws -> [StoredNotification] {
        var keys: [(seq: Int64, rev: Int64)] = []
        let rows = try Row.fetchCursor(db.cachedStatement(sql: Self.selectGroupKeys), arguments: [user, groupID])
        while let row = try rows.next() { keys.append((try row.decode(atIndex: 0), try row.decode(atIndex: 1))) }

        var members: [StoredNotification] = []
        members.reserveCapacity(keys.count)
        for key in keys {
            if let cached = rowCache[key.seq, key.rev] {
                members.append(cached)
                continue
            }
            let rows = try Row.fetchCursor(db.cachedStatement(sql: Self.selectDeliveredBySeq), arguments: [key.seq])
            guard let row = try rows.next() else { continue }  // deleted since the scan
            let n = try StoredNotification(sqlRow: row)
            guard n.user == user, n.groupID == groupID else { continue }  // moved since the scan
            rowCache.insert(n, seq: key.seq, rev: try row.decode(atIndex: StoredNotification.sqlColumnCount))
            members.append(n)
        }
        return members
    }
}
