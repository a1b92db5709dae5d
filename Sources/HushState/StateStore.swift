import HushCore

/// Where Hush remembers things between notifications (SPEC §7), per user. Implementations: the
/// in-memory twin (tests, `--ephemeral`) and SQLite.
public protocol StateStore: StateReading, AnyObject {
    /// Records what one evaluation produced, atomically.
    func apply(_ changes: [StateChange]) throws
    /// Takes the queued notifications whose summary is due at or before `t`, by summary instant.
    func takeDueSummaries(user: String, upTo t: Double) throws -> [SummaryBatch]
    func setManualFocus(user: String, _ focus: ManualFocus?) throws
    func addInteractions(_ interactions: [Interaction]) throws
    /// Every queued notification of a user, for status.
    func queuedNotifications(user: String) -> [StoredNotification]
    /// Forgets delivered notifications and calls older than an instant.
    func prune(before t: Double) throws
}

/// The notifications of one scheduled summary, in presentation order, and those that expired.
public struct SummaryBatch: Sendable, Hashable {
    public var user: String
    public var at: Double
    public var notifications: [StoredNotification]
    public var dropped: [StoredNotification]

    public init(user: String, at: Double, notifications: [StoredNotification], dropped: [StoredNotification]) {
        self.user = user
        self.at = at
        self.notifications = notifications
        self.dropped = dropped
    }

    /// Relevance highest first (missing = 0), then those with media, then newest first.
    public static func presentationOrder(_ a: StoredNotification, _ b: StoredNotification) -> Bool {
        let ra = a.relevance ?? 0, rb = b.relevance ?? 0
        if ra != rb { return ra > rb }
        if a.hasMedia != b.hasMedia { return a.hasMedia }
        return a.date > b.date
    }
}
