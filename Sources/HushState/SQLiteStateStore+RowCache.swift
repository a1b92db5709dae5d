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
        try forEachRawRow(db, sql: Self.selectGroupKeys, [.text(user), .text(groupID)]) { row in
            keys.append((try row.required(row.integer(0), 0), try row.required(row.integer(1), 1)))
        }

        var members: [StoredNotification] = []
        members.reserveCapacity(keys.count)
        for key in keys {
            if let cached = rowCache[key.seq, key.rev] {
                members.append(cached)
                continue
            }
            var found: (n: StoredNotification, rev: Int64)?
            try forEachRawRow(db, sql: Self.selectDeliveredBySeq, [.integer(key.seq)]) { row in
                let column = Int32(StoredNotification.sqlColumnCount)
                found = (try StoredNotification(rawRow: row), try row.required(row.integer(column), column))
            }
            guard let (n, rev) = found else { continue }  // deleted since the scan
            guard n.user == user, n.groupID == groupID else { continue }  // moved since the scan
            rowCache.insert(n, seq: key.seq, rev: rev)
            members.append(n)
        }
        return members
    }
}
