package import HushCore

/// Where Hush remembers things between notifications (docs/reference.md, "State and events"), per user. Implementations: the
/// in-memory twin (tests, `--ephemeral`) and SQLite.
package protocol StateStore: StateReading, ServiceState, SharedScheduling, AnyObject {
    /// Records what one evaluation produced, atomically.
    func apply(_ changes: [StateChange]) throws
    /// Takes the queued notifications whose summary is due at or before `t`, by summary instant.
    func takeDueSummaries(user: String, upTo t: Double) throws -> [SummaryBatch]
    /// Takes the due summaries and records `changes(batch)` for each, atomically: a batch is never
    /// taken from the queue without its delivery being recorded (nor the other way round).
    func deliverDueSummaries(
        user: String, upTo t: Double,
        recording changes: (SummaryBatch) throws -> [StateChange]
    ) throws -> [SummaryBatch]
    func setManualFocus(user: String, _ focus: ManualFocus?) throws
    func addInteractions(_ interactions: [Interaction]) throws
    /// Every queued notification of a user, for status.
    func queuedNotifications(user: String) throws -> [StoredNotification]
    /// Forgets delivered notifications and calls older than an instant.
    func prune(before t: Double) throws
    /// Runs `body` as one batch: the writes it makes are made durable together when it returns,
    /// so a stream of evaluations pays for one commit per batch instead of one per notification.
    /// Each write inside stays all or nothing on its own (a failed one is undone alone and throws
    /// to `body`); none is durable, nor to be reported as done, before `batch` returns. Throws when
    /// the batch cannot begin (`body` did not run: nothing happened) or commit (every write of the
    /// batch is undone). Inside a batch, `body` joins it.
    func batch<T>(_ body: () -> T) throws -> T
}

extension StateStore {
    /// A store whose writes are done as they are made (in memory) has nothing to batch.
    package func batch<T>(_ body: () -> T) throws -> T { body() }

    /// Take, then apply: atomic for a store whose writes cannot fail halfway (in memory). A store
    /// with separate transactions must do both in one (see `SQLiteStateStore`).
    package func deliverDueSummaries(
        user: String, upTo t: Double,
        recording changes: (SummaryBatch) throws -> [StateChange]
    ) throws -> [SummaryBatch] {
        let batches = try takeDueSummaries(user: user, upTo: t)
        for batch in batches { try apply(changes(batch)) }
        return batches
    }
}
