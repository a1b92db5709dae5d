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
        let versions = try fetchAll(
            DeliveredRowVersion.self, db, sql: Self.selectGroupVersions,
            [user.databaseValue, groupID.databaseValue])
        var members: [StoredNotification] = []
        members.reserveCapacity(versions.count)
        for version in versions {
            if let cached = rowCache[version.seq, version.rev] {
                members.append(cached)
                continue
            }
            guard
                let row = try fetchOne(
                    DeliveredRow.self, db, sql: Self.selectDeliveredBySeq, [version.seq.databaseValue])
            else { continue }  // deleted since the scan
            let n = row.notification
            guard n.user == user, n.groupID == groupID else { continue }  // moved since the scan
            rowCache.insert(n, seq: row.seq, rev: row.rev)
            members.append(n)
        }
        return members
    }
}
