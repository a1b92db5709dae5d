import Foundation
import GRDB
import HushCore

/// When the store forgets on its own, so the file never grows without bound.
struct RetentionPolicy: Sendable {
    static let defaultPruneEvery = 1000
    /// Interactions are kept at least as long as contact suggestions look back.
    static let interactionSeconds = Suggestions.windowSeconds

    /// Delivered notifications, arrivals and calls older than this (relative to the user's newest
    /// applied date) are pruned.
    var seconds: Double
    var interactionSeconds: Double
    /// Prune a user after this many applies in this process…
    var pruneEvery: Int
    /// …or as soon as the user's newest date is this far past the last prune (recorded in the
    /// file, so short-lived `hush` processes prune too).
    var interval: Double

    init(days: Double, pruneEvery: Int) {
        seconds = days * 86400
        interactionSeconds = max(Self.interactionSeconds, seconds)
        self.pruneEvery = max(1, pruneEvery)
        interval = min(86400, seconds)
    }
}

/// What the store knows of one user's retention in this process.
struct RetentionBookEntry: Sendable, Hashable {
    /// The newest date applied for this user (never beyond tomorrow's wall clock).
    var newest: Double
    /// The `newest` the user's rows were last pruned against; nil: never.
    var prunedThrough: Double?
    var appliesSincePrune: Int
}

extension SQLiteStateStore {
    /// After the changes of one apply, in its transaction: prunes the users it touched when due.
    /// Returns the updated bookkeeping, to keep once the transaction commits.
    func pruneAutomatically(_ db: Database, after changes: [StateChange]) throws -> [String: RetentionBookEntry] {
        var dates: [String: Double] = [:]
        for change in changes {
            switch change {
            case .deliver(let n), .enqueue(let n), .replace(let n, _): dates[n.user] = max(dates[n.user] ?? -.infinity, n.date)
            case .dequeue(let user, _, _), .withdraw(let user, _, _): dates[user] = max(dates[user] ?? -.infinity, -.infinity)
            case .recordCall(let call): dates[call.user] = max(dates[call.user] ?? -.infinity, call.date)
            }
        }
        // A date far in the future (a bad clock, a typo) must not prune everything real.
        let ceiling = Date().timeIntervalSince1970 + 86400
        var updated: [String: RetentionBookEntry] = [:]
        for (user, date) in dates {
            var entry = try retentionBook[user] ?? loadRetention(db, user: user)
            if date.isFinite { entry.newest = max(entry.newest, min(date, ceiling)) }
            entry.appliesSincePrune += 1
            let due = entry.appliesSincePrune >= retention.pruneEvery
                || entry.prunedThrough.map { entry.newest - $0 >= retention.interval } ?? true
            if due && entry.newest.isFinite {
                try pruneUser(db, user: user, before: entry.newest - retention.seconds,
                              interactionsBefore: entry.newest - retention.interactionSeconds)
                try db.cachedStatement(sql: """
                    INSERT INTO retention (user, pruned_through) VALUES (?, ?)
                    ON CONFLICT (user) DO UPDATE SET pruned_through = excluded.pruned_through
                    """).execute(arguments: [user, entry.newest])
                entry.prunedThrough = entry.newest
                entry.appliesSincePrune = 0
            }
            updated[user] = entry
        }
        return updated
    }

    private func loadRetention(_ db: Database, user: String) throws -> RetentionBookEntry {
        let through = try Double.fetchOne(db.cachedStatement(sql: "SELECT pruned_through FROM retention WHERE user = ?"),
                                          arguments: [user])
        return RetentionBookEntry(newest: through ?? -.infinity, prunedThrough: through, appliesSincePrune: 0)
    }

    /// One user's old rows, through the (user, date) indexes.
    func pruneUser(_ db: Database, user: String, before t: Double, interactionsBefore ti: Double) throws {
        digestCache.dropUser(user)
        try db.cachedStatement(sql: "DELETE FROM delivered WHERE user = ? AND date < ?").execute(arguments: [user, t])
        try db.cachedStatement(sql: "DELETE FROM arrivals WHERE user = ? AND date < ?").execute(arguments: [user, t])
        try db.cachedStatement(sql: "DELETE FROM calls WHERE user = ? AND date < ?").execute(arguments: [user, t])
        try db.cachedStatement(sql: "DELETE FROM interactions WHERE user = ? AND date < ?").execute(arguments: [user, ti])
    }
}
