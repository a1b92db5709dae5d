import GRDB

/// The versioned schema. Each migration is registered as "vN", runs in its own transaction (GRDB
/// records it in `grdb_migrations`) and sets `PRAGMA user_version = N`, so both GRDB and a plain
/// `sqlite3` can tell which Hush wrote a file. Never edit a registered migration: add "vN+1".
extension SQLiteStateStore {
    /// The newest schema this code knows.
    static let schemaVersion = 7

    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try createSchemaV1(db)
            try db.execute(sql: "PRAGMA user_version = 1")
        }
        migrator.registerMigration("v2") { db in
            try createSchemaV2(db)
            try db.execute(sql: "PRAGMA user_version = 2")
        }
        migrator.registerMigration("v3") { db in
            try createSchemaV3(db)
            try db.execute(sql: "PRAGMA user_version = 3")
        }
        migrator.registerMigration("v4") { db in
            try createSchemaV4(db)
            try db.execute(sql: "PRAGMA user_version = 4")
        }
        migrator.registerMigration("v5") { db in
            try createSchemaV5(db)
            try db.execute(sql: "PRAGMA user_version = 5")
        }
        migrator.registerMigration("v6") { db in
            try createSchemaV6(db)
            try db.execute(sql: "PRAGMA user_version = 6")
        }
        migrator.registerMigration("v7") { db in
            try createSchemaV7(db)
            try db.execute(sql: "PRAGMA user_version = 7")
        }
        return migrator
    }()

    /// Every table is keyed by user. The notification tables share one column set (read and
    /// written through `NotificationColumn`, `StateRecords.swift`); `seq` is the insertion sequence, an alias of the rowid
    /// (so VACUUM keeps it), and (user, app, id) is the notification's key, the conflict target of
    /// the upserts.
    private static func createSchemaV1(_ db: Database) throws {
        let notificationColumns = """
            user TEXT NOT NULL,
            app TEXT NOT NULL,
            id TEXT NOT NULL,
            date REAL NOT NULL,
            title TEXT,
            body TEXT,
            category TEXT,
            thread_id TEXT,
            group_id TEXT,
            summary_arg TEXT,
            summary_arg_count INTEGER NOT NULL DEFAULT 1,
            relevance REAL,
            has_media INTEGER NOT NULL DEFAULT 0,
            expiration REAL,
            summary_at REAL,
            sender TEXT
            """
        try db.execute(
            sql: """
                -- The delivered list. seq is renewed when a notification joins a group, so a group's
                -- members come back oldest (first joined) first; replaced in place, it keeps it.
                -- rev: drawn at random on every insert and update, so a reader can tell a row it
                -- decoded before from a changed one (see SQLiteStateStore+RowCache.swift).
                CREATE TABLE delivered (
                    seq INTEGER PRIMARY KEY,
                    rev INTEGER NOT NULL,
                    \(notificationColumns),
                    UNIQUE (user, app, id)
                );
                CREATE INDEX delivered_by_group ON delivered (user, group_id, seq, rev);
                CREATE INDEX delivered_by_date ON delivered (user, date);

                -- The summary queue.
                CREATE TABLE queue (
                    seq INTEGER PRIMARY KEY,
                    \(notificationColumns),
                    UNIQUE (user, app, id)
                );
                CREATE INDEX queue_by_summary ON queue (user, summary_at);

                -- Every arrival, delivered or queued, as `hush.recent` counts them: kept when the
                -- queued one is summarised or replaced, pruned with the delivered list.
                CREATE TABLE arrivals (
                    seq INTEGER PRIMARY KEY,
                    \(notificationColumns)
                );
                CREATE INDEX arrivals_by_date ON arrivals (user, date);

                -- Calls, for repeated calls. caller: the person as JSON (handle, name, contact, aliases).
                CREATE TABLE calls (
                    seq INTEGER PRIMARY KEY,
                    user TEXT NOT NULL,
                    date REAL NOT NULL,
                    app TEXT NOT NULL,
                    caller TEXT NOT NULL
                );
                CREATE INDEX calls_by_date ON calls (user, date);

                -- A focus turned on by hand. name NULL: every focus turned off by hand.
                CREATE TABLE manual_focus (
                    user TEXT NOT NULL PRIMARY KEY,
                    name TEXT,
                    since REAL NOT NULL,
                    until REAL
                );

                -- Donated interactions (SPEC §6). people: a JSON array of persons.
                CREATE TABLE interactions (
                    seq INTEGER PRIMARY KEY,
                    user TEXT NOT NULL,
                    date REAL NOT NULL,
                    direction TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    app TEXT,
                    people TEXT NOT NULL,
                    group_name TEXT
                );
                CREATE INDEX interactions_by_date ON interactions (user, date);

                -- Automatic retention: the newest date each user's rows were last pruned against.
                CREATE TABLE retention (
                    user TEXT NOT NULL PRIMARY KEY,
                    pruned_through REAL NOT NULL
                );
                """)
    }

    /// What a long-running Hush keeps (`ServiceState`), read and written through the records of
    /// `StateRecords.swift`. Added to a v1 file as it is: nothing of v1 changes.
    private static func createSchemaV2(_ db: Database) throws {
        try db.execute(
            sql: """
                -- The outbox: events in the order they were recorded. AUTOINCREMENT: a seq is never
                -- given twice, even once the newest events are pruned, as consumers hold on to them
                -- (Last-Event-ID, webhook idempotency keys, cursors).
                CREATE TABLE events (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    user TEXT NOT NULL,
                    at REAL NOT NULL,
                    kind TEXT NOT NULL,
                    json TEXT NOT NULL
                );
                CREATE INDEX events_by_user ON events (user, seq);

                -- How far each user's schedule was worked out. focus NULL: none announced (or on).
                CREATE TABLE schedule_marks (
                    user TEXT PRIMARY KEY,
                    focus TEXT,
                    announced INTEGER NOT NULL,
                    through REAL NOT NULL
                );

                -- Each user's own policy (Lua). updated: wall clock, UNIX seconds.
                CREATE TABLE user_policies (
                    user TEXT PRIMARY KEY,
                    text TEXT NOT NULL,
                    updated REAL NOT NULL
                );

                -- How far each consumer of the outbox has taken it: the last seq it acknowledged.
                CREATE TABLE cursors (
                    name TEXT PRIMARY KEY,
                    seq INTEGER NOT NULL
                );
                """)
    }

    /// What lets each connection keep users in memory (`SQLiteStateStore+UserCache.swift`): a
    /// version per user, renewed by every transaction that writes their notifications, calls or
    /// manual focus. Every user already in the file gets one. The group index goes: a group's
    /// members are read from memory now, and it cost a write on every delivery.
    private static func createSchemaV3(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE user_versions (
                    user TEXT PRIMARY KEY,
                    version INTEGER NOT NULL
                );
                \(stampEveryUser);
                DROP INDEX IF EXISTS delivered_by_group;
                """)
    }

    /// Fewer B-trees and bytes written per notification (each was two rows and five index
    /// entries): the notification tables become WITHOUT ROWID tables keyed by what is looked up,
    /// so a row is one entry of one B-tree. `delivered` and `queue` are keyed by (user, app, id),
    /// the upserts' conflict target; `seq` (group and queue order) is a plain column the store
    /// gives per user. `arrivals` keeps what `hush.recent` counts (app, id, date, thread,
    /// sender), keyed by (user, seq). The date indexes go (a user's rows are pruned by a scan of
    /// their key range; the queue keeps its summary index), and so does `rev` (the row cache that
    /// read it went in v3). Every row, and its seq, is kept. `user_versions`, written for every
    /// user a batch touches, is keyed by user alone too.
    private static func createSchemaV4(_ db: Database) throws {
        let details = notificationDetailsV4
        let columns = notificationColumnsV4
        let arrivalColumns = "user, app, id, date, thread_id, sender"
        var sql = ""
        for table in ["delivered", "queue"] {
            sql += """
                CREATE TABLE \(table)_v4 (
                    seq INTEGER NOT NULL,
                    user TEXT NOT NULL,
                    app TEXT NOT NULL,
                    id TEXT NOT NULL,
                    \(details),
                    PRIMARY KEY (user, app, id)
                ) WITHOUT ROWID;
                INSERT INTO \(table)_v4 (seq, \(columns)) SELECT seq, \(columns) FROM \(table);
                DROP TABLE \(table);
                ALTER TABLE \(table)_v4 RENAME TO \(table);

                """
        }
        // Whether a summary is due is answered from this index alone until the queue is read
        // (`anyDue`): a command that only asks (`hush status`) never reads the queue's rows there.
        sql += """
            CREATE INDEX queue_by_summary ON queue (user, summary_at);
            CREATE TABLE arrivals_v4 (
                seq INTEGER NOT NULL,
                user TEXT NOT NULL,
                app TEXT NOT NULL,
                id TEXT NOT NULL,
                date REAL NOT NULL,
                thread_id TEXT,
                sender TEXT,
                PRIMARY KEY (user, seq)
            ) WITHOUT ROWID;
            INSERT INTO arrivals_v4 (seq, \(arrivalColumns)) SELECT seq, \(arrivalColumns) FROM arrivals;
            DROP TABLE arrivals;
            ALTER TABLE arrivals_v4 RENAME TO arrivals;

            CREATE TABLE user_versions_v4 (
                user TEXT PRIMARY KEY,
                version INTEGER NOT NULL
            ) WITHOUT ROWID;
            INSERT INTO user_versions_v4 (user, version) SELECT user, version FROM user_versions;
            DROP TABLE user_versions;
            ALTER TABLE user_versions_v4 RENAME TO user_versions;
            """
        try db.execute(sql: sql)
    }

    /// The delivered list keyed by (user, seq) instead of (user, app, id): a user's new rows go
    /// after their others, so a batch of writes changes about one page per user it touches, where
    /// new ids (random) landed on a different page each, which every commit wrote again. Where a
    /// notification's row is (its seq) is found in the user's list, which the store reads before
    /// any write of it. Each user's rows are numbered again from 1 in their order: the order (a
    /// group's members) is what seq means, and the new key needs it unique per user.
    private static func createSchemaV5(_ db: Database) throws {
        let details = notificationDetailsV4
        let columns = notificationColumnsV4
        try db.execute(
            sql: """
                CREATE TABLE delivered_v5 (
                    seq INTEGER NOT NULL,
                    user TEXT NOT NULL,
                    app TEXT NOT NULL,
                    id TEXT NOT NULL,
                    \(details),
                    PRIMARY KEY (user, seq)
                ) WITHOUT ROWID;
                INSERT INTO delivered_v5 (seq, \(columns))
                SELECT row_number() OVER (PARTITION BY user ORDER BY seq, app, id), \(columns) FROM delivered;
                DROP TABLE delivered;
                ALTER TABLE delivered_v5 RENAME TO delivered;
                \(stampEveryUser);
                """)
    }

    /// A delivered row may stand for its notification's arrival too (`arrival_seq`: its place
    /// among the user's arrivals), instead of a second row in `arrivals` with the same columns:
    /// most notifications are delivered as they arrive, and each commit rewrote a page of both
    /// tables for every user it touched. The arrival goes to `arrivals` when the row is replaced
    /// or withdrawn (an arrival outlives its notification); both are pruned by the same date. The
    /// rows already in `arrivals` stay as they are: a user's arrivals are both, in seq order.
    private static func createSchemaV6(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE delivered ADD COLUMN arrival_seq INTEGER")
    }

    /// The notification tables in the order their rows are written, their keys unique indexes.
    /// Keyed by (user, seq) or (user, app, id), a user's new row went among their others, in the
    /// middle of the table: each commit rewrote, and often split, a page of every table for every
    /// user it touched (1,000 users: 540,000 page writes for a week of 200,000 lines). Now new rows
    /// go at the end of the table, which fills one page after another, and only the index entries,
    /// a few dozen bytes each, go among the user's (1,000 users: 111,000 writes). The statements
    /// are the same: an upsert's conflict target may be a unique index.
    private static func createSchemaV7(_ db: Database) throws {
        let columns = "\(notificationColumnsV4), arrival_seq"
        let arrivalColumns = "user, app, id, date, thread_id, sender"
        try db.execute(
            sql: """
                CREATE TABLE delivered_v7 (
                    seq INTEGER NOT NULL,
                    user TEXT NOT NULL,
                    app TEXT NOT NULL,
                    id TEXT NOT NULL,
                    \(notificationDetailsV4),
                    arrival_seq INTEGER
                );
                INSERT INTO delivered_v7 (seq, \(columns)) SELECT seq, \(columns) FROM delivered ORDER BY user, seq;
                DROP TABLE delivered;
                ALTER TABLE delivered_v7 RENAME TO delivered;
                CREATE UNIQUE INDEX delivered_by_user ON delivered (user, seq);
                CREATE TABLE arrivals_v7 (
                    seq INTEGER NOT NULL,
                    user TEXT NOT NULL,
                    app TEXT NOT NULL,
                    id TEXT NOT NULL,
                    date REAL NOT NULL,
                    thread_id TEXT,
                    sender TEXT
                );
                INSERT INTO arrivals_v7 (seq, \(arrivalColumns)) SELECT seq, \(arrivalColumns) FROM arrivals ORDER BY user, seq;
                DROP TABLE arrivals;
                ALTER TABLE arrivals_v7 RENAME TO arrivals;
                CREATE UNIQUE INDEX arrivals_by_user ON arrivals (user, seq);
                CREATE TABLE queue_v7 (
                    seq INTEGER NOT NULL,
                    user TEXT NOT NULL,
                    app TEXT NOT NULL,
                    id TEXT NOT NULL,
                    \(notificationDetailsV4)
                );
                INSERT INTO queue_v7 (seq, \(notificationColumnsV4)) SELECT seq, \(notificationColumnsV4) FROM queue ORDER BY user, seq;
                DROP TABLE queue;
                ALTER TABLE queue_v7 RENAME TO queue;
                CREATE UNIQUE INDEX queue_by_key ON queue (user, app, id);
                CREATE INDEX queue_by_summary ON queue (user, summary_at);
                """)
    }

    // The notification tables' columns from v4 on, after their key. Spelled out, like the tables:
    // a registered migration never changes with the code.
    private static let notificationDetailsV4 = """
        date REAL NOT NULL,
            title TEXT,
            body TEXT,
            category TEXT,
            thread_id TEXT,
            group_id TEXT,
            summary_arg TEXT,
            summary_arg_count INTEGER NOT NULL DEFAULT 1,
            relevance REAL,
            has_media INTEGER NOT NULL DEFAULT 0,
            expiration REAL,
            summary_at REAL,
            sender TEXT
        """
    private static let notificationColumnsV4 = """
        user, app, id, date, title, body, category, thread_id, group_id, summary_arg, \
        summary_arg_count, relevance, has_media, expiration, summary_at, sender
        """

    /// A new version for every user with rows the cache holds (after a change to all of them).
    static let stampEveryUser = """
        INSERT OR REPLACE INTO user_versions (user, version)
        SELECT user, random() FROM (
            SELECT user FROM delivered UNION SELECT user FROM queue UNION SELECT user FROM arrivals
            UNION SELECT user FROM calls UNION SELECT user FROM manual_focus)
        """

    /// Refuses a file migrated by a newer Hush, before anything is written to it.
    /// - Parameter identifiers: the applied migrations (`grdb_migrations`), read by the caller.
    static func checkSchemaIsKnown(_ db: Database, path: String, identifiers: [String]) throws {
        let userVersion = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        let unknown = Set(identifiers).subtracting(migrator.migrations)
        guard userVersion > schemaVersion || !unknown.isEmpty else { return }
        let newest = unknown.compactMap { $0.first == "v" ? Int($0.dropFirst()) : nil }.max() ?? schemaVersion + 1
        throw Error.newerSchema(path: path, found: max(userVersion, newest), supported: schemaVersion)
    }

    /// Runs the missing migrations. Two processes opening a new file at once may both try the
    /// same migration: the loser's fails (the table exists) and is retried against the file the
    /// winner migrated.
    static func migrate(_ dbQueue: DatabaseQueue, path: String) throws {
        var attempt = 0
        while true {
            do {
                try migrator.migrate(dbQueue)
                break
            } catch {
                attempt += 1
                let done = (try? dbQueue.unsafeRead { db in try migrator.hasCompletedMigrations(db) }) ?? false
                if done { break }
                if attempt >= 3 {
                    throw Error.failed(path: path, action: "create or upgrade the schema", reason: "\(error)")
                }
            }
        }
        // A newer Hush may have migrated the file between our check and our migration.
        try dbQueue.unsafeRead { db in
            try checkSchemaIsKnown(
                db, path: path, identifiers: String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"))
        }
    }
}
