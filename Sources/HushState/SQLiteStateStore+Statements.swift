import HushCore

/// The SQL of the hot path, prepared once per connection (`cachedStatement`). Each SELECT list is
/// its record's `selectList`; the notification columns are `NotificationColumn`'s.
extension SQLiteStateStore {
    typealias N = NotificationColumn

    static let selectManualFocus = "SELECT \(ManualFocusRow.selectList) FROM manual_focus WHERE user = ?"
    /// In queue order; `SummaryQueue` decides what is due and how it is listed.
    /// Whether anything may be due, from the index alone.
    static let selectAnyDue = "SELECT EXISTS (SELECT 1 FROM queue WHERE user = ? AND summary_at <= ?)"
    static let selectQueue = "SELECT \(QueueRow.selectList) FROM queue WHERE user = ? ORDER BY seq"

    // The delivered list is keyed by (user, seq) (schema v5; a unique index since v7): where a row goes is worked out from
    // the user's list in memory (`CachedUser.Delivered.placement`). A notification keeps its
    // place in its group unless it changes group, and then joins the new one last (its row moves
    // to the user's next seq, above every other).
    // Each row also says which arrival it stands for, if any (`arrival_seq`, schema v6).
    static let insertDelivered =
        "INSERT INTO delivered (seq, \(N.list), arrival_seq) VALUES (?, \(N.placeholders), ?)"
    /// Replaced in place: the row keeps its seq.
    static let replaceDelivered = """
        INSERT INTO delivered (seq, \(N.list), arrival_seq) VALUES (?, \(N.placeholders), ?)
        ON CONFLICT (user, seq) DO UPDATE SET \(N.updateFromExcluded), arrival_seq = excluded.arrival_seq
        """
    /// Replaced in place: it keeps its place (seq) in the queue.
    static let upsertQueued = """
        INSERT INTO queue (seq, \(N.list)) VALUES (?, \(N.placeholders))
        ON CONFLICT (user, app, id) DO UPDATE SET \(N.updateFromExcluded)
        """
    static let insertArrival = """
        INSERT INTO arrivals (seq, \(N.arrivalList)) VALUES (?, \(N.arrivalColumns.map { _ in "?" }.joined(separator: ", ")))
        """
    static let deleteDelivered = "DELETE FROM delivered WHERE user = ? AND seq = ?"
    static let deleteQueued = "DELETE FROM queue WHERE user = ? AND app = ? AND id = ?"
    // The rarer writes, as GRDB's records write them (a NULL seq: the table gives one), on cached
    // statements: a record's insert built its SQL and arguments each time, several times the cost.
    static let insertEvent = "INSERT INTO events (seq, user, at, kind, json) VALUES (NULL, ?, ?, ?, ?)"
    static let insertCall = "INSERT INTO calls (seq, user, date, app, caller) VALUES (NULL, ?, ?, ?, ?)"
    static let upsertRetention = """
        INSERT INTO retention (user, pruned_through) VALUES (?, ?)
        ON CONFLICT (user) DO UPDATE SET pruned_through = excluded.pruned_through
        """
    static let selectRetention = "SELECT \(RetentionRow.selectList) FROM retention WHERE user = ?"
    static let selectEventsAfter = "SELECT \(EventRow.selectList) FROM events WHERE seq > ? ORDER BY seq LIMIT ?"
    static let selectUserEventsAfter =
        "SELECT \(EventRow.selectList) FROM events WHERE seq > ? AND user = ? ORDER BY seq LIMIT ?"
    /// The seq a user's next arrival takes (one step down the (user, seq) index).
    static let selectNextArrivalSeq = "SELECT coalesce(max(seq), 0) + 1 FROM arrivals WHERE user = ?"
}
