import Foundation
import HushCore

/// When a store forgets on its own, so it never grows without bound: the same rules for both
/// stores, which only differ in how they delete. Delivered notifications, arrivals and calls older
/// than the retention, behind the newest date applied for their user, are pruned; interactions
/// when they are older than contact suggestions look back, or than the retention if that is longer.
struct RetentionPolicy: Sendable {
    static let defaultDays = 7.0
    static let defaultPruneEvery = 1000
    /// The default retention (7 days is a valid one).
    static let standard = try! RetentionPolicy(days: defaultDays)
    /// Interactions are kept at least as long as contact suggestions look back.
    static let interactionSeconds = Suggestions.windowSeconds

    var seconds: Double
    var interactionSeconds: Double
    /// Prune a user after this many applies that touched them in this process…
    var pruneEvery: Int
    /// …or as soon as the user's newest date is this far past the last prune (the SQLite store
    /// records it in the file, so short-lived `hush` processes prune too).
    var interval: Double

    /// Throws for a retention that is not a positive number of days (0, negative, NaN): whoever
    /// asked to keep nothing, or made a typo, is told, rather than silently given another retention.
    init(days: Double, pruneEvery: Int = defaultPruneEvery) throws(RetentionError) {
        guard days > 0 else { throw RetentionError(days: days) }
        seconds = days * 86400
        interactionSeconds = max(Self.interactionSeconds, seconds)
        self.pruneEvery = max(1, pruneEvery)
        interval = min(86400, seconds)
    }

    /// What to prune a user's rows before.
    struct Cutoffs: Sendable, Hashable {
        /// For delivered notifications, arrivals and calls.
        var notifications: Double
        var interactions: Double
    }

    /// Counts one apply that touched the user, whose newest date in it was `date` (-infinity when
    /// none of its changes has one, such as a dequeue). Returns what to prune the user's rows
    /// before when a prune is due, and then records it in `entry` as done.
    func noteApply(_ entry: inout RetentionBookEntry, newest date: Double) -> Cutoffs? {
        // A date far in the future (a bad clock, a typo) must not prune everything real.
        let ceiling = Date().timeIntervalSince1970 + 86400
        if date.isFinite { entry.newest = max(entry.newest, min(date, ceiling)) }
        entry.appliesSincePrune += 1
        let due =
            entry.appliesSincePrune >= pruneEvery || entry.prunedThrough.map { entry.newest - $0 >= interval } ?? true
        guard due && entry.newest.isFinite else { return nil }
        entry.prunedThrough = entry.newest
        entry.appliesSincePrune = 0
        return Cutoffs(notifications: entry.newest - seconds, interactions: entry.newest - interactionSeconds)
    }

    /// The users an apply touches, each with the newest date among its changes (-infinity when
    /// none has one, such as a dequeue: it still counts as an apply).
    struct TouchedUsers {
        private var first: (user: String, newest: Double)?
        /// Only for the rare apply that touches several users.
        private var others: [String: Double] = [:]

        /// Noted by the store as it takes the changes apart (a second `switch` over a change copies
        /// it): a delivery, enqueue, replacement or call with its date, a dequeue or withdrawal with
        /// -infinity.
        mutating func note(_ user: String, date: Double) {
            if let first, first.user != user {
                others[user] = max(others[user] ?? -.infinity, date)
            } else {
                first = (user, max(first?.newest ?? -.infinity, date))
            }
        }

        func forEach(_ body: (_ user: String, _ newest: Double) throws -> Void) rethrows {
            guard let first else { return }
            try body(first.user, first.newest)
            for (user, newest) in others { try body(user, newest) }
        }
    }
}

/// What a store knows of one user's retention.
package struct RetentionBookEntry: Sendable, Hashable {
    /// The newest date applied for this user (never beyond tomorrow's wall clock); -infinity: none.
    package var newest: Double
    /// The `newest` the user's rows were last pruned against; nil: never.
    package var prunedThrough: Double?
    package var appliesSincePrune: Int

    /// A user this store knows nothing of yet, or one last pruned against `prunedThrough`.
    package init(prunedThrough: Double? = nil) {
        newest = prunedThrough ?? -.infinity
        self.prunedThrough = prunedThrough
        appliesSincePrune = 0
    }
}

/// A retention that is not a positive number of days.
package struct RetentionError: Error, Sendable, Equatable, CustomStringConvertible {
    package var days: Double

    package var description: String { "retention must be a positive number of days, got \(days)" }
}

/// Which events of the outbox `prune(before:)` must keep for the webhooks, whatever their age.
/// The `cursors` table holds more than consumers' cursors (`outbox id`, `configured webhook URL`,
/// the entries below), so only the names `webhook URL` count as consumers: each holds the events
/// after the last one its receiver acknowledged, for as long as a server sends to it. A URL no
/// server sends to any more (`--webhook` removed or changed) lets go after `lapse` prunes: the
/// running sender writes the number of the latest prune under `alive webhook URL`, and the
/// count goes on only while a server runs, so a stopped server does not make its webhook lapse.
package enum OutboxHolds {
    package static let consumerPrefix = "webhook "
    /// How many prunes there have been (each store counts them in the cursors table).
    package static let prunesName = "prunes"
    /// Where the sender of the webhook whose cursor is `cursorName` writes the latest prune it saw.
    package static func aliveName(forCursor cursorName: String) -> String { "alive " + cursorName }

    /// How many prunes a webhook may miss before its events are no longer held: the retention in
    /// the service's hourly prunes, and at least a day's worth, so that the sender's first renewal
    /// after a start, or a slow one under a fast `--clock`, is never late enough to lose events.
    package static func lapse(retentionSeconds: Double) -> Int64 {
        max(24, Int64((retentionSeconds / 3600).rounded(.up)))
    }

    /// The highest seq every holding webhook has acknowledged (what a prune may forget up to, by
    /// age); nil when no webhook holds anything. `cursors`: every entry of the cursors table;
    /// `prune`: the number of the prune in progress.
    package static func acknowledged(cursors: [String: Int64], prune: Int64, retentionSeconds: Double) -> Int64? {
        let lapse = lapse(retentionSeconds: retentionSeconds)
        var lowest: Int64?
        for (name, seq) in cursors where name.hasPrefix(consumerPrefix) {
            // No entry yet (a state from before the renewals): counted from the first prune.
            let alive = cursors[aliveName(forCursor: name)] ?? 0
            guard prune - alive <= lapse else { continue }
            lowest = min(lowest ?? seq, seq)
        }
        return lowest
    }
}
