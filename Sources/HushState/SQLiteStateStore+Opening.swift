import Foundation
import GRDB

/// Opening a state file: one connection (a `DatabaseQueue`) in WAL mode, `synchronous=NORMAL`,
/// a checkpoint every 1,000 pages of log, a 5 s busy timeout and foreign keys on. The file is
/// checked before anything is written to it: not a database, damaged, another program's database
/// or a newer Hush's file → an error, and the file is left as it is.
extension SQLiteStateStore {
    /// How long a writer waits for another process's transaction before giving up.
    static let busyTimeout: TimeInterval = 5

    static func openDatabase(path: String) throws -> DatabaseQueue {
        try createParentDirectory(of: path)

        var config = Configuration()
        config.label = "Hush state"
        config.busyMode = .timeout(busyTimeout)
        config.foreignKeysEnabled = true
        // WAL is switched on below, once the file is known to be ours: GRDB's `.wal` would
        // convert (write to) a file before we could refuse it.
        config.journalMode = .default

        let dbQueue: DatabaseQueue
        do {
            dbQueue = try DatabaseQueue(path: path, configuration: config)
        } catch {
            throw openingError(error, path: path)
        }
        var isNew = false
        do {
            try dbQueue.writeWithoutTransaction { db in
                // One snapshot, so a file another Hush is creating right now looks consistent.
                try db.inTransaction(.deferred) {
                    isNew = try checkIsHushFile(db, path: path)
                    return .commit
                }
                let mode = try switchToWAL(db)
                guard mode == "wal" else {
                    throw Error.cannotOpen(
                        path: path, reason: "could not turn on write-ahead logging (journal mode: \(mode ?? "unknown"))"
                    )
                }
                // In WAL, NORMAL syncs at checkpoints only: a commit survives the process being
                // killed (it is in the WAL, in the OS's cache); a power loss may lose the last
                // commits but never corrupts the file.
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                // Evaluations read from memory (`UserCache`): SQLite reads the pages its writes
                // touch, the newest of each user's index entries, which 16 MB holds. (Mapping the
                // file made every page it ever touched count towards the process's memory.)
                try db.execute(sql: "PRAGMA cache_size = -16384")
                // A checkpoint every 1,000 pages of log (SQLite's own): it runs in the commit that
                // crosses the line, so its size is a stall for whoever waits on that commit (a
                // request of `hush serve`). Batch work raises it (`checkpointEvery(pages:)`).
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.defaultCheckpointPages)")
            }
            try migrate(dbQueue, path: path)
            if isNew {
                // The migrations of a new file made tables and dropped them (v4): the schema's
                // pages end up among the data's. A new file is tiny; rewritten, the schema comes
                // first again, where damage to the rest of the file leaves it readable. Only
                // tidiness: a failure (another process holds the file) is left alone.
                try? dbQueue.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
            }
        } catch {
            throw openingError(error, path: path)
        }
        return dbQueue
    }

    /// WAL is persistent: usually the file is in WAL already. Converting a new file needs an
    /// exclusive lock, and SQLite answers SQLITE_BUSY at once, without the busy handler, when
    /// another process is converting or opening it at the same moment: retry until the busy timeout.
    private static func switchToWAL(_ db: Database) throws -> String? {
        if let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode"), mode.lowercased() == "wal" { return "wal" }
        let deadline = Date().addingTimeInterval(busyTimeout)
        while true {
            do {
                return try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")?.lowercased()
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && Date() < deadline {
                usleep(useconds_t.random(in: 1000...10000))
            }
        }
    }

    private static func createParentDirectory(of path: String) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw Error.cannotOpen(
                path: path, reason: "cannot create the directory \(directory.path): \(error.localizedDescription)")
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw Error.cannotOpen(path: path, reason: "it is a directory")
        }
    }

    /// An empty database is fine (it becomes a state file), and so is one another Hush has just
    /// begun to create (an empty `grdb_migrations`); otherwise it must hold Hush's migrations,
    /// none of them newer than ours.
    /// - Returns: whether the file holds no table yet (it is new).
    @discardableResult
    private static func checkIsHushFile(_ db: Database, path: String) throws -> Bool {
        let tables = try String.fetchAll(
            db,
            sql: """
                SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name
                """)
        if tables.isEmpty { return true }
        let identifiers =
            tables.contains("grdb_migrations")
            ? try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") : []
        let isHush =
            identifiers.contains { $0.first == "v" && Int($0.dropFirst()) != nil }
            || (tables == ["grdb_migrations"] && identifiers.isEmpty)
        if !isHush {
            let names = tables.prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", …" : "")
            throw Error.notAStateFile(path: path, reason: "an SQLite database with other tables: \(names)")
        }
        try checkSchemaIsKnown(db, path: path, identifiers: identifiers)
        return false
    }

    private static func openingError(_ error: any Swift.Error, path: String) -> any Swift.Error {
        if error is Error { return error }
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_NOTADB, .SQLITE_CORRUPT:
                return Error.notAStateFile(path: path, reason: error.message ?? "file is not a database")
            default:
                return Error.cannotOpen(path: path, reason: "\(error)")
            }
        }
        return Error.cannotOpen(path: path, reason: "\(error)")
    }
}
