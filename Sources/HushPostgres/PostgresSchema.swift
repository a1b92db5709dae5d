import Foundation
import HushState
import PostgresNIO

/// The tables (docs/scaling.md), made by numbered migrations that are applied once each, in
/// order, under a lock (several instances may start at once). A registered migration is never
/// edited: a change is a new one.
///
/// How they are laid out, and why:
/// - `hush_users`: one row per user, read with the user's lock at the start of every transaction
///   that touches them (their version, schedule mark, focus set by hand, retention and when they
///   are next due), so it is narrow; hash-partitioned by user.
/// - `hush_delivered`, `hush_queue`: rows replaced in place (a notification updated, a group
///   reordered), keyed by (user, app, id); hash-partitioned by user, so each partition's index and
///   vacuum stay a fraction of the whole.
/// - `hush_arrivals`, `hush_calls`, `hush_interactions`, `hush_events`: written once, read by user
///   and time, forgotten by age: range-partitioned by day, so the retention drops a whole day's
///   partition instead of deleting its rows. A default partition takes rows of a day that has no
///   partition of its own (an old or far-future date).
enum PostgresSchema {
    static let hashPartitions = 8
    static let dayTables = ["hush_arrivals", "hush_calls", "hush_interactions", "hush_events"]

    /// The notification columns, in `NotificationColumn`'s order (`PostgresRows` reads and writes them).
    static let notificationColumns = """
        user_name text NOT NULL, app text NOT NULL, id text NOT NULL, date float8 NOT NULL,
        title text, body text, category text, thread_id text, group_id text, summary_arg text,
        summary_arg_count int NOT NULL, relevance float8, has_media boolean NOT NULL,
        expiration float8, summary_at float8, sender text
        """

    static func hashPartitioned(_ table: String) -> String {
        (0..<hashPartitions).map {
            "CREATE TABLE \(table)_h\($0) PARTITION OF \(table) FOR VALUES WITH (MODULUS \(hashPartitions), REMAINDER \($0));"
        }.joined(separator: "\n")
    }

    static let migrations: [(version: Int, sql: String)] = [
        (
            1,
            """
            CREATE TABLE hush_users (
                name text NOT NULL PRIMARY KEY,
                version bigint NOT NULL,
                has_state boolean NOT NULL,
                due_at float8,
                mark_focus text, mark_announced boolean, mark_through float8,
                manual_set boolean NOT NULL DEFAULT false, manual_name text, manual_since float8, manual_until float8,
                newest float8, pruned_through float8, applies_since_prune int NOT NULL DEFAULT 0,
                policy text
            ) PARTITION BY HASH (name);
            \(hashPartitioned("hush_users"))
            CREATE INDEX hush_users_due ON hush_users (due_at) WHERE due_at IS NOT NULL;

            CREATE SEQUENCE hush_row_seq;

            CREATE TABLE hush_delivered (\(notificationColumns), seq bigint NOT NULL,
                PRIMARY KEY (user_name, app, id)) PARTITION BY HASH (user_name);
            \(hashPartitioned("hush_delivered"))
            CREATE INDEX hush_delivered_user_seq ON hush_delivered (user_name, seq);
            CREATE INDEX hush_delivered_date ON hush_delivered (date);

            CREATE TABLE hush_queue (\(notificationColumns), seq bigint NOT NULL,
                PRIMARY KEY (user_name, app, id)) PARTITION BY HASH (user_name);
            \(hashPartitioned("hush_queue"))
            CREATE INDEX hush_queue_user_seq ON hush_queue (user_name, seq);

            CREATE TABLE hush_arrivals (\(notificationColumns), seq bigint NOT NULL, day int NOT NULL)
                PARTITION BY RANGE (day);
            CREATE TABLE hush_arrivals_default PARTITION OF hush_arrivals DEFAULT;
            CREATE INDEX hush_arrivals_user_seq ON hush_arrivals (user_name, seq);

            CREATE TABLE hush_calls (user_name text NOT NULL, date float8 NOT NULL, app text NOT NULL,
                caller text NOT NULL, seq bigint NOT NULL, day int NOT NULL) PARTITION BY RANGE (day);
            CREATE TABLE hush_calls_default PARTITION OF hush_calls DEFAULT;
            CREATE INDEX hush_calls_user_seq ON hush_calls (user_name, seq);

            CREATE TABLE hush_interactions (user_name text NOT NULL, date float8 NOT NULL,
                direction text NOT NULL, kind text NOT NULL, app text, people text NOT NULL,
                group_name text, seq bigint NOT NULL, day int NOT NULL) PARTITION BY RANGE (day);
            CREATE TABLE hush_interactions_default PARTITION OF hush_interactions DEFAULT;
            CREATE INDEX hush_interactions_user_date ON hush_interactions (user_name, date);

            CREATE TABLE hush_events (seq bigint NOT NULL, day int NOT NULL, user_name text NOT NULL,
                at float8 NOT NULL, kind text NOT NULL, json text NOT NULL, PRIMARY KEY (seq, day))
                PARTITION BY RANGE (day);
            CREATE TABLE hush_events_default PARTITION OF hush_events DEFAULT;
            CREATE INDEX hush_events_user_seq ON hush_events (user_name, seq);

            -- The outbox's numbering: one row, locked by the transaction that records events until
            -- it commits, so events are numbered in the order they become visible.
            CREATE TABLE hush_outbox (id int PRIMARY KEY CHECK (id = 1), last_seq bigint NOT NULL);
            INSERT INTO hush_outbox VALUES (1, 0);

            CREATE TABLE hush_cursors (name text PRIMARY KEY, seq bigint NOT NULL);
            -- The outbox's id (part of each event's idempotency key), drawn once for every instance.
            INSERT INTO hush_cursors VALUES ('outbox id', floor(random() * 9.2e18)::bigint + 1);
            """
        )
    ]

    /// A key for `pg_advisory_lock` held while migrating (an arbitrary constant of Hush's).
    static let migrationLock: Int64 = 0x4875_7368_0000_0001

    /// Brings the database to the newest schema. Refuses a database a newer Hush migrated.
    static func migrate(_ db: BlockingConnection) throws {
        try db.query("SELECT pg_advisory_lock($1)", binds(migrationLock), action: "wait for the migration lock")
        defer { _ = try? db.query("SELECT pg_advisory_unlock($1)", binds(migrationLock), action: "unlock") }
        try db.query(
            "CREATE TABLE IF NOT EXISTS hush_schema (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
            action: "make the schema table")
        let rows = try db.query("SELECT coalesce(max(version), 0) FROM hush_schema", action: "read the schema version")
        let current = try rows.first.map { try $0.decode(Int.self) } ?? 0
        guard current <= migrations.last!.version else {
            throw PostgresStateError(
                message:
                    "the database was migrated by a newer Hush (schema \(current); this one knows \(migrations.last!.version))"
            )
        }
        for migration in migrations where migration.version > current {
            try db.query("BEGIN", action: "begin a migration")
            do {
                for statement in statements(migration.sql) {
                    try db.query(statement, action: "migrate to v\(migration.version)")
                }
                try db.query(
                    "INSERT INTO hush_schema (version) VALUES ($1)", binds(migration.version), action: "migrate")
                try db.query("COMMIT", action: "commit a migration")
            } catch {
                _ = try? db.query("ROLLBACK", action: "roll back a migration")
                throw error
            }
        }
    }

    /// The statements of a migration (extended-protocol queries run one statement each).
    static func statements(_ sql: String) -> [String] {
        sql.components(separatedBy: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("--") }
            .joined(separator: "\n").components(separatedBy: ";")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }

    // MARK: - Day partitions

    /// The day a UNIX time falls on (UTC), the partition key of the day tables.
    static func day(_ t: Double) -> Int32 {
        guard t.isFinite else { return t < 0 ? Int32.min + 1 : Int32.max - 1 }
        return Int32(clamping: Int64((t / 86400).rounded(.down)))
    }

    /// Makes the day partitions of `days` that are missing. A day whose rows already went to the
    /// default partition keeps them there (its partition cannot be made over them); they are
    /// forgotten by `DELETE` rather than by a drop.
    static func ensurePartitions(_ db: BlockingConnection, days: ClosedRange<Int32>) throws {
        let existing = try partitionDays(db)
        for table in dayTables {
            for day in days where !(existing[table]?.contains(day) ?? false) {
                do {
                    try db.query(
                        "CREATE TABLE IF NOT EXISTS \(table)_d\(day) PARTITION OF \(table) FOR VALUES FROM (\(day)) TO (\(day + 1))",
                        action: "make the partition \(table)_d\(day)")
                } catch let error as PostgresStateError {
                    // 23514: rows of that day are in the default partition; 42P07/23505: another
                    // instance made it at the same moment.
                    guard ["23514", "42P07", "23505"].contains(error.sqlState ?? "") else { throw error }
                }
            }
        }
    }

    /// The day partitions that exist, by table.
    static func partitionDays(_ db: BlockingConnection) throws -> [String: Set<Int32>] {
        let rows = try db.query(
            """
            SELECT parent.relname, child.relname FROM pg_inherits
            JOIN pg_class parent ON parent.oid = pg_inherits.inhparent
            JOIN pg_class child ON child.oid = pg_inherits.inhrelid
            JOIN pg_namespace ns ON ns.oid = child.relnamespace
            WHERE ns.nspname = current_schema() AND parent.relname = ANY($1)
            """, binds(dayTables), action: "list the partitions")
        var out: [String: Set<Int32>] = [:]
        for row in rows {
            let (parent, child) = try row.decode((String, String).self)
            guard let range = child.range(of: "_d", options: .backwards), let day = Int32(child[range.upperBound...])
            else { continue }
            out[parent, default: []].insert(day)
        }
        return out
    }
}

/// Bindings from a list of values.
func binds(_ values: any PostgresNonThrowingEncodable...) -> PostgresBindings {
    var bindings = PostgresBindings(capacity: values.count)
    for value in values { bindings.append(value) }
    return bindings
}
