import GRDB
import HushCore

/// How a notification is laid out in the `delivered`, `queue` and `arrivals` tables.
extension StoredNotification {
    /// The columns, in the order of `sqlArguments` and `init(sqlRow:)`.
    static let sqlColumns = """
        user, app, id, date, title, body, category, thread_id, group_id, summary_arg, \
        summary_arg_count, relevance, has_media, expiration, summary_at, sender
        """
    static let sqlPlaceholders = "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"
    /// For an upsert: every column but the key takes the new row's value.
    static let sqlUpdateFromExcluded = """
        date = excluded.date, title = excluded.title, body = excluded.body, \
        category = excluded.category, thread_id = excluded.thread_id, group_id = excluded.group_id, \
        summary_arg = excluded.summary_arg, summary_arg_count = excluded.summary_arg_count, \
        relevance = excluded.relevance, has_media = excluded.has_media, expiration = excluded.expiration, \
        summary_at = excluded.summary_at, sender = excluded.sender
        """
    static let sqlColumnCount = 16

    var sqlArguments: StatementArguments {
        [user, app, id, date, title, body, category, threadID, groupID, summaryArgument,
         summaryArgumentCount, relevance, hasMedia, expiration, summaryAt, sender]
    }

    /// Reads the columns `sqlColumns` starting at `offset`.
    init(sqlRow row: Row, offset i: Int = 0) throws {
        self.init(user: try row.decode(atIndex: i), app: try row.decode(atIndex: i + 1), id: try row.decode(atIndex: i + 2),
                  date: try row.decode(atIndex: i + 3), title: try row.decode(atIndex: i + 4),
                  body: try row.decode(atIndex: i + 5), category: try row.decode(atIndex: i + 6),
                  threadID: try row.decode(atIndex: i + 7), groupID: try row.decode(atIndex: i + 8),
                  summaryArgument: try row.decode(atIndex: i + 9), summaryArgumentCount: try row.decode(atIndex: i + 10),
                  relevance: try row.decode(atIndex: i + 11), hasMedia: try row.decode(atIndex: i + 12),
                  expiration: try row.decode(atIndex: i + 13), summaryAt: try row.decode(atIndex: i + 14),
                  sender: try row.decode(atIndex: i + 15))
    }
}
