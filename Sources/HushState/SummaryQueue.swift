package import HushCore

/// The notifications of one scheduled summary, in presentation order, and those that expired.
package struct SummaryBatch: Sendable, Hashable {
    package var user: String
    package var at: Double
    package var notifications: [StoredNotification]
    package var dropped: [StoredNotification]

    package init(user: String, at: Double, notifications: [StoredNotification], dropped: [StoredNotification]) {
        self.user = user
        self.at = at
        self.notifications = notifications
        self.dropped = dropped
    }

    /// Relevance highest first (missing = 0), then those with media, then newest first.
    package static func presentationOrder(_ a: StoredNotification, _ b: StoredNotification) -> Bool {
        let ra = a.relevance ?? 0, rb = b.relevance ?? 0
        if ra != rb { return ra > rb }
        if a.hasMedia != b.hasMedia { return a.hasMedia }
        return a.date > b.date
    }
}

/// The rules of the summary queue, the same for every store: which queued notifications fall due,
/// how they make `SummaryBatch`es, what is dropped, and how the queue is listed. Each takes one
/// user's queue in queue order (first enqueued first; a replaced notification keeps its place),
/// which breaks every tie, so both stores answer alike to the last notification.
enum SummaryQueue {
    /// Whether `n`'s summary is due at or before `t`; one without a summary instant never is.
    static func isDue(_ n: StoredNotification, upTo t: Double) -> Bool {
        guard let at = n.summaryAt else { return false }
        return at <= t
    }

    /// Whether `n` expired before its summary at `at`, and is dropped from it.
    static func isExpired(_ n: StoredNotification, at: Double) -> Bool {
        (n.expiration ?? .infinity) < at
    }

    /// The summaries of `queue` due at or before `t`, earliest first, one per summary instant: the
    /// notifications still valid at the instant in presentation order, and those expired, dropped,
    /// oldest first. The store then removes every notification `isDue` from its queue.
    static func dueBatches(of queue: [StoredNotification], user: String, upTo t: Double) -> [SummaryBatch] {
        var byInstant: [Double: [StoredNotification]] = [:]
        for n in queue where isDue(n, upTo: t) { byInstant[n.summaryAt!, default: []].append(n) }
        return byInstant.keys.sorted().map { at in
            let due = byInstant[at]!
            return SummaryBatch(
                user: user, at: at,
                notifications: sortedKeepingQueueOrder(
                    due.filter { !isExpired($0, at: at) },
                    by: SummaryBatch.presentationOrder),
                dropped: sortedKeepingQueueOrder(due.filter { isExpired($0, at: at) }) { $0.date < $1.date })
        }
    }

    /// `queue` as a user sees it listed (`queuedNotifications`): by summary instant (none first),
    /// then date.
    static func listed(_ queue: [StoredNotification]) -> [StoredNotification] {
        sortedKeepingQueueOrder(queue) { ($0.summaryAt ?? 0, $0.date) < ($1.summaryAt ?? 0, $1.date) }
    }

    /// Sorted by `areInIncreasingOrder`, ties in their order in `queue` (the standard library's
    /// sort does not promise to be stable).
    private static func sortedKeepingQueueOrder(
        _ queue: [StoredNotification],
        by areInIncreasingOrder: (StoredNotification, StoredNotification) -> Bool
    )
        -> [StoredNotification]
    {
        queue.enumerated().sorted { a, b in
            if areInIncreasingOrder(a.element, b.element) { return true }
            if areInIncreasingOrder(b.element, a.element) { return false }
            return a.offset < b.offset
        }.map(\.element)
    }
}
