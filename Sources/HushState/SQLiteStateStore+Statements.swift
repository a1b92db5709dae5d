import HushCore

/// The SQL of the hot path, prepared once per connection (`cachedStatement`). Each SELECT list is
/// its record's `selectList`; the notification columns are `NotificationColumn`'s.
extension SQLiteStateStore {
    typealias N = NotificationColumn

    static let selectDelivered =
        "SELECT \(DeliveredRow.selectList) FROM delivered WHERE user = ? AND app = ? AND id = ?"
    static let selectQueued = "SELECT \(QueueRow.selectList) FROM queue WHERE user = ? AND app = ? AND id = ?"
    /// Oldest member (first to join the group) first; from the covering index alone.
    static let selectGroupVersions = """
        SELECT \(DeliveredRowVersion.selectList) FROM delivered WHERE user = ? AND group_id = ? ORDER BY seq
        """
    static let selectDeliveredBySeq = "SELECT \(DeliveredRow.selectList) FROM delivered WHERE seq = ?"
    static let selectDeliveredGroup = """
        SELECT \(DeliveredGroupMembership.selectList) FROM delivered WHERE user = ? AND app = ? AND id = ?
        """
    static let selectCalls = "SELECT \(CallRow.selectList) FROM calls WHERE user = ? AND date >= ? ORDER BY seq"
    static let selectManualFocus = "SELECT \(ManualFocusRow.selectList) FROM manual_focus WHERE user = ?"
    static let selectRecent = "SELECT \(ArrivalRow.selectList) FROM arrivals WHERE user = ? AND date >= ? ORDER BY seq"
    /// In queue order; `SummaryQueue` decides what is due and how it is listed.
    static let selectQueue = "SELECT \(QueueRow.selectList) FROM queue WHERE user = ? ORDER BY seq"
    /// Whether anything may be due, from the index alone: most evaluations have nothing to take.
    static let selectAnyDue = "SELECT EXISTS (SELECT 1 FROM queue WHERE user = ? AND summary_at <= ?)"

    /// Replaced in place: a notification keeps its place in its group unless it changes group,
    /// and then joins the new one last (a new seq, above every other).
    static let upsertDelivered = """
        INSERT INTO delivered (\(N.list), rev) VALUES (\(N.placeholders), random())
        ON CONFLICT (user, app, id) DO UPDATE SET
            seq = CASE WHEN delivered.group_id IS excluded.group_id THEN delivered.seq
                       ELSE (SELECT max(seq) + 1 FROM delivered) END,
            rev = random(),
            \(N.updateFromExcluded)
        """
    /// Replaced in place: it keeps its place in the queue.
    static let upsertQueued = """
        INSERT INTO queue (\(N.list)) VALUES (\(N.placeholders))
        ON CONFLICT (user, app, id) DO UPDATE SET \(N.updateFromExcluded)
        """
    static let insertArrival = "INSERT INTO arrivals (\(N.list)) VALUES (\(N.placeholders))"
    static let deleteDelivered = "DELETE FROM delivered WHERE user = ? AND app = ? AND id = ?"
    static let deleteQueued = "DELETE FROM queue WHERE user = ? AND app = ? AND id = ?"
    static let deleteQueuedBySeq = "DELETE FROM queue WHERE seq = ?"
}
