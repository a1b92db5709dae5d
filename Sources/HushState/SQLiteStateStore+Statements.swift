import HushCore

/// The SQL of the hot path, prepared once per connection (`cachedStatement`).
extension SQLiteStateStore {
    typealias N = StoredNotification

    static let selectDelivered = "SELECT \(N.sqlColumns) FROM delivered WHERE user = ? AND app = ? AND id = ?"
    static let selectQueued = "SELECT \(N.sqlColumns) FROM queue WHERE user = ? AND app = ? AND id = ?"
    /// Oldest member (first to join the group) first; from the covering index alone.
    static let selectGroupKeys = "SELECT seq, rev FROM delivered WHERE user = ? AND group_id = ? ORDER BY seq"
    static let selectDeliveredBySeq = "SELECT \(N.sqlColumns), rev FROM delivered WHERE seq = ?"
    static let selectCalls = "SELECT date, app, caller FROM calls WHERE user = ? AND date >= ? ORDER BY seq"
    static let selectManualFocus = "SELECT name, since, until FROM manual_focus WHERE user = ?"
    static let selectRecent = "SELECT \(N.sqlColumns) FROM arrivals WHERE user = ? AND date >= ? ORDER BY seq"
    static let selectInteractions = """
        SELECT date, direction, kind, app, people, group_name FROM interactions WHERE user = ? AND date >= ? ORDER BY seq
        """
    /// In queue order; `SummaryQueue` decides what is due and how it is listed.
    static let selectQueue = "SELECT \(N.sqlColumns), seq FROM queue WHERE user = ? ORDER BY seq"
    /// Whether anything may be due, from the index alone: most evaluations have nothing to take.
    static let selectAnyDue = "SELECT EXISTS (SELECT 1 FROM queue WHERE user = ? AND summary_at <= ?)"
    static let deleteQueuedBySeq = "DELETE FROM queue WHERE seq = ?"

    /// Replaced in place: a notification keeps its place in its group unless it changes group,
    /// and then joins the new one last (a new seq, above every other).
    static let upsertDelivered = """
        INSERT INTO delivered (\(N.sqlColumns), rev) VALUES (\(N.sqlPlaceholders), random())
        ON CONFLICT (user, app, id) DO UPDATE SET
            seq = CASE WHEN delivered.group_id IS excluded.group_id THEN delivered.seq
                       ELSE (SELECT max(seq) + 1 FROM delivered) END,
            rev = random(),
            \(N.sqlUpdateFromExcluded)
        """
    static let upsertQueued = """
        INSERT INTO queue (\(N.sqlColumns)) VALUES (\(N.sqlPlaceholders))
        ON CONFLICT (user, app, id) DO UPDATE SET \(N.sqlUpdateFromExcluded)
        """
    static let insertArrival = "INSERT INTO arrivals (\(N.sqlColumns)) VALUES (\(N.sqlPlaceholders))"
    static let deleteDelivered = "DELETE FROM delivered WHERE user = ? AND app = ? AND id = ?"
    static let deleteQueued = "DELETE FROM queue WHERE user = ? AND app = ? AND id = ?"
    static let insertCall = "INSERT INTO calls (user, date, app, caller) VALUES (?, ?, ?, ?)"
    static let upsertManualFocus = """
        INSERT INTO manual_focus (user, name, since, until) VALUES (?, ?, ?, ?)
        ON CONFLICT (user) DO UPDATE SET name = excluded.name, since = excluded.since, until = excluded.until
        """
    static let deleteManualFocus = "DELETE FROM manual_focus WHERE user = ?"
    static let insertInteraction = """
        INSERT INTO interactions (user, date, direction, kind, app, people, group_name) VALUES (?, ?, ?, ?, ?, ?, ?)
        """
}
