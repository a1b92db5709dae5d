package import HushCore

/// Where Hush remembers things between notifications (docs/reference.md, "State and events"), per user. Implementations: the
/// in-memory twin (tests, `--ephemeral`) and SQLite.
package protocol StateStore: StateReading, AnyObject {
    /// Records what one evaluation produced, atomically.
    func apply(_ changes: [StateChange]) throws
    /// Takes the queued notifications whose summary is due at or before `t`, by summary instant.
    func takeDueSummaries(user: String, upTo t: Double) throws -> [SummaryBatch]
    /// Takes the due summaries and records `changes(batch)` for each, atomically: a batch is never
    /// taken from the queue without its delivery being recorded (nor the other way round).
    func deliverDueSummaries(user: String, upTo t: Double,
                             recording changes: (SummaryBatch) throws -> [StateChange]) throws -> [SummaryBatch]
    func setManualFocus(user: String, _ focus: ManualFocus?) throws
    func addInteractions(_ interactions: [Interaction]) throws
    /// Every queued notification of a user, for status.
    func queuedNotifications(user: String) throws -> [StoredNotification]
    /// Forgets delivered notifications and calls older than an instant.
    func prune(before t: Double) throws
    /// Starts a batch: the writes that follow are made durable together by `commitBatch()`, so a
    /// stream of evaluations pays for one commit per batch instead of one per notification. Each
    /// write inside stays all or nothing; none is durable (nor to be reported as done) before the
    /// commit. Does nothing when a batch is open already.
    func beginBatch() throws
    /// Commits the open batch (nothing when none is open). When the commit fails, every write of
    /// the batch is undone and the error thrown.
    func commitBatch() throws
}

extension StateStore {
    /// A store whose writes are done as they are made (in memory) has nothing to batch.
    package func beginBatch() throws {}
    package func commitBatch() throws {}

    /// Take, then apply: atomic for a store whose writes cannot fail halfway (in memory). A store
    /// with separate transactions must do both in one (see `SQLiteStateStore`).
    package func deliverDueSummaries(user: String, upTo t: Double,
                                    recording changes: (SummaryBatch) throws -> [StateChange]) throws -> [SummaryBatch] {
        let batches = try takeDueSummaries(user: user, upTo: t)
        for batch in batches { try apply(changes(batch)) }
        return batches
    }
}

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
