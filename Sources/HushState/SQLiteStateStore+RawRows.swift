import GRDB
import GRDBSQLite
import HushCore

/// The hot reads, straight from SQLite. A GRDB `Row` cursor maps its statement's column names
/// (a dictionary of lower-cased names) every time one is made: more work than the query itself
/// for the one-row lookups an evaluation makes several times. These statements are read by
/// column index only, so they are bound and stepped here; GRDB still prepares and caches them.
enum RawArgument {
    case text(String)
    case real(Double)
    case integer(Int64)
    case null

    static func text(_ s: String?) -> RawArgument { s.map { .text($0) } ?? .null }
    static func real(_ d: Double?) -> RawArgument { d.map { .real($0) } ?? .null }
}

/// The row a statement is on; valid only inside the `forEachRawRow` call that gave it.
struct RawRow {
    let statement: SQLiteStatement

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    func text(_ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    func real(_ column: Int32) -> Double? { isNull(column) ? nil : sqlite3_column_double(statement, column) }

    func integer(_ column: Int32) -> Int64? { isNull(column) ? nil : sqlite3_column_int64(statement, column) }

    /// A column that may not be NULL.
    func required<T>(_ value: T?, _ column: Int32) throws -> T {
        guard let value else {
            let name = sqlite3_column_name(statement, column).map { String(cString: $0) } ?? "#\(column)"
            throw RawSQLiteError(description: "column \(name) is NULL where a value is required")
        }
        return value
    }
}

struct RawSQLiteError: Error, Sendable, CustomStringConvertible {
    let description: String
}

extension SQLiteStateStore {
    /// Runs the (cached) `sql` with `arguments` and calls `body` with each row, in order.
    func forEachRawRow(_ db: Database, sql: String, _ arguments: [RawArgument], _ body: (RawRow) throws -> Void) throws {
        let statement = try db.cachedStatement(sql: sql).sqliteStatement
        sqlite3_reset(statement)
        // Reset again whatever happens: a statement left on a row would hold its read open.
        defer { sqlite3_reset(statement) }
        try bind(arguments, to: statement, db, sql)
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw Self.rawError(db, code, sql) }
            try body(RawRow(statement: statement))
        }
    }

    /// Runs the (cached) statement `sql`, which returns no rows (an insert, update or delete).
    func executeRaw(_ db: Database, sql: String, _ arguments: [RawArgument]) throws {
        let statement = try db.cachedStatement(sql: sql).sqliteStatement
        sqlite3_reset(statement)
        defer { sqlite3_reset(statement) }
        try bind(arguments, to: statement, db, sql)
        var code = sqlite3_step(statement)
        while code == SQLITE_ROW { code = sqlite3_step(statement) }
        guard code == SQLITE_DONE else { throw Self.rawError(db, code, sql) }
    }

    private func bind(_ arguments: [RawArgument], to statement: SQLiteStatement, _ db: Database, _ sql: String) throws {
        guard Int(sqlite3_bind_parameter_count(statement)) == arguments.count else {
            throw RawSQLiteError(description: "\(arguments.count) arguments for \(sqlite3_bind_parameter_count(statement)) parameters in \(sql)")
        }
        for (i, argument) in arguments.enumerated() {
            let index = Int32(i + 1)
            let code: Int32
            switch argument {
            case .text(var s):
                code = s.withUTF8 { sqlite3_bind_text(statement, index, $0.baseAddress, Int32($0.count), Self.transient) }
            case .real(let d): code = sqlite3_bind_double(statement, index, d)
            case .integer(let n): code = sqlite3_bind_int64(statement, index, n)
            case .null: code = sqlite3_bind_null(statement, index)
            }
            guard code == SQLITE_OK else { throw Self.rawError(db, code, sql) }
        }
    }

    /// SQLite copies bound text (`SQLITE_TRANSIENT`): the Swift string's buffer is not kept.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static func rawError(_ db: Database, _ code: Int32, _ sql: String) -> RawSQLiteError {
        let message = sqlite3_errmsg(db.sqliteConnection).map { String(cString: $0) } ?? "SQLite error \(code)"
        return RawSQLiteError(description: "\(message) (code \(code)) in \(sql)")
    }
}

extension StoredNotification {
    /// The values of the columns `sqlColumns`, in order.
    var rawArguments: [RawArgument] {
        [.text(user), .text(app), .text(id), .real(date), .text(title), .text(body), .text(category), .text(threadID),
         .text(groupID), .text(summaryArgument), .integer(Int64(summaryArgumentCount)), .real(relevance),
         .integer(hasMedia ? 1 : 0), .real(expiration), .real(summaryAt), .text(sender)]
    }

    /// Reads the columns `sqlColumns` starting at `offset`, as `init(sqlRow:offset:)` does.
    init(rawRow row: RawRow, offset: Int32 = 0) throws {
        let i = offset
        self.init(user: try row.required(row.text(i), i), app: try row.required(row.text(i + 1), i + 1),
                  id: try row.required(row.text(i + 2), i + 2), date: try row.required(row.real(i + 3), i + 3),
                  title: row.text(i + 4), body: row.text(i + 5), category: row.text(i + 6), threadID: row.text(i + 7),
                  groupID: row.text(i + 8), summaryArgument: row.text(i + 9),
                  summaryArgumentCount: Int(try row.required(row.integer(i + 10), i + 10)),
                  relevance: row.real(i + 11), hasMedia: try row.required(row.integer(i + 12), i + 12) != 0,
                  expiration: row.real(i + 13), summaryAt: row.real(i + 14), sender: row.text(i + 15))
    }
}
