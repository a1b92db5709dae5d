import GRDB
import HushCore

/// Automatic retention (`RetentionPolicy`): the per-user bookkeeping lives in `retentionBook` and,
/// for the next process, in the `retention` table.
extension SQLiteStateStore {
    /// After the changes of one apply, in its transaction: prunes the users it touched when due.
    /// Returns the updated bookkeeping, to keep once the transaction commits.
    func pruneAutomatically(_ db: Database, touched: RetentionPolicy.TouchedUsers) throws -> RetentionUpdates {
        var updated = RetentionUpdates()
        try touched.forEach { user, newest in
            var entry = try retentionBook[user] ?? loadRetention(db, user: user)
            if let cutoffs = retention.noteApply(&entry, newest: newest) {
                try pruneUser(db, user: user, before: cutoffs)
                let arguments = [user.databaseValue, entry.newest.databaseValue]
                try run(db) { db in try Self.execute(db, sql: Self.upsertRetention, arguments) }
            }
            updated.set(user, entry)
        }
        return updated
    }

    func loadRetention(_ db: Database, user: String) throws -> RetentionBookEntry {
        // A cached statement: GRDB's query interface prepared one for each user's first write.
        RetentionBookEntry(
            prunedThrough: try fetchOne(RetentionRow.self, db, sql: Self.selectRetention, [user.databaseValue])?
                .prunedThrough)
    }

    /// One user's old rows, through the (user, date) indexes. Cached statements: every user new to
    /// this process is pruned on its first apply.
    func pruneUser(_ db: Database, user: String, before cutoffs: RetentionPolicy.Cutoffs) throws {
        let t = cutoffs.notifications
        // The user's delivered rows are read (through their (user, seq) key) only when the cached
        // list, the file's rows and those written since, holds one older than the cutoff: a
        // week of notifications kept a week has none, and every prune scanned them all.
        let delivered = userCache.user(user)?.mayHaveDelivered(before: t) ?? true
        // The same for arrivals, also keyed by (user, seq): skipped when none written is older.
        let arrivals = userCache.user(user)?.mayHaveArrivals(before: t) ?? true
        // Before the change to memory: the arrivals not loaded yet are pruned when read.
        if isRecording { notePending(user, .prune(arrivals: t, interactions: cutoffs.interactions)) }
        noteWrite(user) { $0.prune(before: t) }
        try run(db) { db in
            var cutoffs = [("calls", t), ("interactions", cutoffs.interactions)]
            if arrivals { cutoffs.insert(("arrivals", t), at: 0) }
            if delivered { cutoffs.insert(("delivered", t), at: 0) }
            for (table, cutoff) in cutoffs {
                try Self.execute(
                    db, sql: "DELETE FROM \(table) WHERE user = ? AND date < ?",
                    [user.databaseValue, cutoff.databaseValue])
            }
        }
    }
}

/// The retention bookkeeping an apply updated, to keep once its transaction commits. Most applies
/// touch one user: no dictionary is made for them (one was, for every evaluation).
struct RetentionUpdates {
    private var first: (user: String, entry: RetentionBookEntry)?
    /// Only for an apply that touches several users.
    private var others: [String: RetentionBookEntry] = [:]

    mutating func set(_ user: String, _ entry: RetentionBookEntry) {
        if first == nil || first!.user == user {
            first = (user, entry)
        } else {
            others[user] = entry
        }
    }

    /// `later`'s entries over these.
    mutating func merge(_ later: RetentionUpdates) {
        if let first = later.first { set(first.user, first.entry) }
        for (user, entry) in later.others { set(user, entry) }
    }

    func keep(in book: inout [String: RetentionBookEntry]) {
        if let first { book[first.user] = first.entry }
        for (user, entry) in others { book[user] = entry }
    }
}
