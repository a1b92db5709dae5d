import FoundationEssentials
import GRDB
import GRDBSQLite
import HushCore

/// The hot path: the store's hand-written queries, bound and stepped here, their rows decoded
/// straight from the statement into the same records (`StateRecord`) GRDB fetches. GRDB's record
/// cursor maps every column name of its statement (a dictionary of lower-cased names) each time
/// one is made: more work than the query itself for the one-row reads an evaluation makes several
/// times. GRDB still prepares and caches the statements.
extension SQLiteStateStore {
    /// The records `sql` selects; its SELECT list must be `R.selectList`.
    func fetchAll<R: StateRecord>(_: R.Type, _ db: Database, sql: String, _ arguments: [DatabaseValue]) throws -> [R] {
        var records: [R] = []
        try forEachRawRow(db, sql: sql, arguments) { row in
            var columns = ColumnReader(row)
            records.append(try R(columns: &columns))
        }
        return records
    }

    /// The first record `sql` selects; its SELECT list must be `R.selectList`.
    func fetchOne<R: StateRecord>(_: R.Type, _ db: Database, sql: String, _ arguments: [DatabaseValue]) throws -> R? {
        var record: R?
        try forEachRawRow(db, sql: sql, arguments) { row in
            guard record == nil else { return }
            var columns = ColumnReader(row)
            record = try R(columns: &columns)
        }
        return record
    }

    /// The integer in the first column of the first row `sql` selects (nil: no row, or NULL).
    func fetchInteger(_ db: Database, sql: String, _ arguments: [DatabaseValue]) throws -> Int64? {
        var value: Int64?
        var first = true
        try forEachRawRow(db, sql: sql, arguments) { row in
            if first { value = row.integer(at: 0) }
            first = false
        }
        return value
    }

    /// Runs the (cached) statement `sql`, which returns no rows (an insert, update or delete).
    func execute(_ db: Database, sql: String, _ arguments: [DatabaseValue]) throws {
        try Self.execute(db, sql: sql, arguments)
    }

    /// As the method, for a write recorded to run on another connection (`run`): it needs no store.
    static func execute(_ db: Database, sql: String, _ arguments: [DatabaseValue]) throws {
        try execute(db, try db.cachedStatement(sql: sql).sqliteStatement, sql: sql, arguments)
    }

    /// Runs one of the writes of an evaluation, prepared once and kept by the store, with
    /// `values`; writing behind (`SQLiteStateStore+WriteBehind.swift`), records it instead.
    func execute(_ db: Database, _ hot: HotStatement, _ values: HotValues) throws {
        if isRecording { return recording!.ops.append(.hot(hot, values)) }
        let statement: SQLiteStatement
        if let prepared = hotStatements[hot.rawValue] {
            statement = prepared.sqliteStatement
        } else {
            let prepared = try db.makeStatement(sql: hot.sql)
            hotStatements[hot.rawValue] = prepared
            statement = prepared.sqliteStatement
        }
        try Self.step(statement, hot, values, db, bytes: &parameterBytes, texts: &parameterTexts)
    }

    /// Binds `values` to `statement` (the prepared `hot`) and steps it to its end. `bytes` and
    /// `texts` are the caller's buffers, kept between statements so that binding allocates nothing.
    static func step(
        _ statement: SQLiteStatement, _ hot: HotStatement, _ values: HotValues, _ db: Database,
        bytes: inout [UInt8], texts: inout [(index: Int32, start: Int, count: Int)]
    ) throws {
        sqlite3_reset(statement)
        defer { sqlite3_reset(statement) }
        // The buffers are taken for the call and given back.
        var parameters = Parameters(statement: statement, bytes: bytes, texts: texts)
        bytes = []
        texts = []
        defer {
            bytes = parameters.bytes
            texts = parameters.texts
        }
        values.bind(&parameters)
        guard parameters.failure == SQLITE_OK else { throw Self.rawError(db, parameters.failure, hot.sql) }
        guard parameters.index == sqlite3_bind_parameter_count(statement) else {
            throw RawSQLiteError(
                description:
                    "\(parameters.index) arguments for \(sqlite3_bind_parameter_count(statement)) parameters in \(hot.sql)"
            )
        }
        // Never empty, so that an empty text has an address too (a null one would bind NULL).
        parameters.bytes.append(0)
        let texts = parameters.texts
        let code = parameters.bytes.withUnsafeBufferPointer { buffer -> Int32 in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            for text in texts {
                // SQLITE_STATIC (no destructor): SQLite reads the bytes in place, while the buffer
                // lives, instead of copying each text; every parameter is bound again before the
                // statement's next step.
                let code = sqlite3_bind_text(statement, text.index, base + text.start, Int32(text.count), nil)
                guard code == SQLITE_OK else { return code }
            }
            var code = sqlite3_step(statement)
            while code == SQLITE_ROW { code = sqlite3_step(statement) }
            return code
        }
        guard code == SQLITE_DONE else { throw Self.rawError(db, code, hot.sql) }
    }

    private static func execute(_ db: Database, _ statement: SQLiteStatement, sql: String, _ arguments: [DatabaseValue])
        throws
    {
        sqlite3_reset(statement)
        defer { sqlite3_reset(statement) }
        try bind(arguments, to: statement, db, sql)
        var code = sqlite3_step(statement)
        while code == SQLITE_ROW { code = sqlite3_step(statement) }
        guard code == SQLITE_DONE else { throw Self.rawError(db, code, sql) }
    }

    /// Runs the (cached) `sql` with `arguments` and calls `body` with each row, in order.
    private func forEachRawRow(
        _ db: Database, sql: String, _ arguments: [DatabaseValue], _ body: (RawRow) throws -> Void
    ) throws {
        let statement = try readStatement(db, sql: sql)
        sqlite3_reset(statement)
        // Reset again whatever happens: a statement left on a row would hold its read open.
        defer { sqlite3_reset(statement) }
        try Self.bind(arguments, to: statement, db, sql)
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw Self.rawError(db, code, sql) }
            try body(RawRow(statement: statement))
        }
    }

    /// The prepared statement of a read. The reads' SQL is a handful of constant texts, and GRDB's
    /// `cachedStatement(sql:)` hashes the whole text at every call: about 4,000 instructions a line
    /// on 20,000 users × 10, where each user's first notification reads their rows. Found here by
    /// the connection and the text's words instead (`TextWords`: the entry holds the text); a text
    /// made on the fly misses, and is GRDB's to find as before.
    private func readStatement(_ db: Database, sql: String) throws -> SQLiteStatement {
        let connection = ObjectIdentifier(db)
        let words = TextWords(sql)
        for read in readStatements where read.words == words && read.connection == connection {
            return read.statement.sqliteStatement
        }
        let statement = try db.cachedStatement(sql: sql)
        if readStatements.count < ReadStatement.limit {
            readStatements.append(ReadStatement(sql: sql, words: words, connection: connection, statement: statement))
        }
        return statement.sqliteStatement
    }

    private static func bind(_ arguments: [DatabaseValue], to statement: SQLiteStatement, _ db: Database, _ sql: String)
        throws
    {
        guard Int(sqlite3_bind_parameter_count(statement)) == arguments.count else {
            throw RawSQLiteError(
                description:
                    "\(arguments.count) arguments for \(sqlite3_bind_parameter_count(statement)) parameters in \(sql)")
        }
        for (i, argument) in arguments.enumerated() {
            let index = Int32(i + 1)
            let code: Int32
            switch argument.storage {
            case .string(var s):
                code = s.withUTF8 {
                    sqlite3_bind_text(statement, index, $0.baseAddress, Int32($0.count), Self.transient)
                }
            case .double(let d): code = sqlite3_bind_double(statement, index, d)
            case .int64(let n): code = sqlite3_bind_int64(statement, index, n)
            case .null: code = sqlite3_bind_null(statement, index)
            case .blob(let data):
                code = data.withUnsafeBytes {
                    sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), Self.transient)
                }
            }
            guard code == SQLITE_OK else { throw Self.rawError(db, code, sql) }
        }
    }

    /// SQLite copies bound text (`SQLITE_TRANSIENT`): the Swift string's buffer is not kept.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    static func rawError(_ db: Database, _ code: Int32, _ sql: String) -> RawSQLiteError {
        let message = sqlite3_errmsg(db.sqliteConnection).map { String(cString: $0) } ?? "SQLite error \(code)"
        return RawSQLiteError(description: "\(message) (code \(code)) in \(sql)")
    }
}

/// A read's statement, kept by the store (`readStatement`).
struct ReadStatement {
    /// The store's reads: a few more than it has.
    static let limit = 32
    /// Held, so that its words stay its own.
    let sql: String
    let words: TextWords
    let connection: ObjectIdentifier
    let statement: Statement
}

/// The writes of an evaluation, kept prepared by the store (`hotStatements`): GRDB's
/// `cachedStatement(sql:)` hashes the whole SQL text at every call, hundreds of characters for an
/// upsert.
enum HotStatement: Int, CaseIterable {
    case insertDelivered, replaceDelivered, deleteDelivered
    case upsertQueued, insertArrival, deleteQueued, savepoint, release
    case upsertUserVersion

    var sql: String {
        switch self {
        case .insertDelivered: SQLiteStateStore.insertDelivered
        case .replaceDelivered: SQLiteStateStore.replaceDelivered
        case .upsertQueued: SQLiteStateStore.upsertQueued
        case .insertArrival: SQLiteStateStore.insertArrival
        case .deleteDelivered: SQLiteStateStore.deleteDelivered
        case .deleteQueued: SQLiteStateStore.deleteQueued
        case .savepoint: "SAVEPOINT hush_write"
        case .release: "RELEASE hush_write"
        case .upsertUserVersion: SQLiteStateStore.upsertUserVersion
        }
    }
}

/// The values of one hot statement, as they are: bound at once, or kept whole by write-behind and
/// bound by the writer (a notification kept is one reference, not a copy of its texts).
enum HotValues: @unchecked Sendable {
    case none
    case notification(seq: Int64, StoredNotification, [NotificationColumn])
    /// A delivered row: every column, and the arrival it stands for (schema v6), if any.
    case delivered(seq: Int64, StoredNotification, arrivalSeq: Int64?)
    case key(user: String, app: String, id: String)
    case userVersion(user: String, version: Int64)
    /// A row of the delivered list (schema v5's key).
    case userSeq(user: String, seq: Int64)

    func bind(_ p: inout Parameters) {
        switch self {
        case .none: break
        case .notification(let seq, let n, let columns):
            p.integer(seq)
            p.notification(n, columns)
        case .delivered(let seq, let n, let arrivalSeq):
            p.integer(seq)
            p.notification(n, NotificationColumn.every)
            p.integer(arrivalSeq)
        case .key(let user, let app, let id):
            p.text(user)
            p.text(app)
            p.text(id)
        case .userVersion(let user, let version):
            p.text(user)
            p.integer(version)
        case .userSeq(let user, let seq):
            p.text(user)
            p.integer(seq)
        }
    }
}

/// The parameters of one hot statement, in order. Numbers and NULLs are bound at once; texts are
/// gathered in `bytes` and bound by `execute` in place (GRDB's values, and SQLite's copy of each
/// text, cost more than the insert itself).
struct Parameters {
    let statement: SQLiteStatement
    /// The last parameter bound (1-based, as SQLite counts them).
    private(set) var index: Int32 = 0
    var bytes: [UInt8]
    var texts: [(index: Int32, start: Int, count: Int)]
    /// The first binding that failed, if any.
    private(set) var failure = SQLITE_OK

    init(statement: SQLiteStatement, bytes: [UInt8], texts: [(index: Int32, start: Int, count: Int)]) {
        self.statement = statement
        self.bytes = bytes
        self.texts = texts
        self.bytes.removeAll(keepingCapacity: true)
        self.texts.removeAll(keepingCapacity: true)
    }

    mutating func text(_ value: String?) {
        index += 1
        guard let value else { return note(sqlite3_bind_null(statement, index)) }
        let start = bytes.count
        // One copy of the contiguous bytes (a Swift string's always are); the sequence's generic
        // append cost three times as much, on every text of every row written.
        if value.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
            bytes.append(contentsOf: value.utf8)
        }
        texts.append((index, start, bytes.count - start))
    }

    mutating func real(_ value: Double?) {
        index += 1
        // NaN is bound as NULL by SQLite itself, as GRDB's values were.
        note(value.map { sqlite3_bind_double(statement, index, $0) } ?? sqlite3_bind_null(statement, index))
    }

    mutating func integer(_ value: Int64) {
        index += 1
        note(sqlite3_bind_int64(statement, index, value))
    }

    mutating func integer(_ value: Int64?) {
        guard let value else {
            index += 1
            return note(sqlite3_bind_null(statement, index))
        }
        integer(value)
    }

    /// `n`'s values of `columns`, in that order.
    mutating func notification(_ n: StoredNotification, _ columns: [NotificationColumn]) {
        for column in columns {
            switch column {
            case .user: text(n.user)
            case .app: text(n.app)
            case .id: text(n.id)
            case .date: real(n.date)
            case .title: text(n.title)
            case .body: text(n.body)
            case .category: text(n.category)
            case .threadID: text(n.threadID)
            case .groupID: text(n.groupID)
            case .summaryArgument: text(n.summaryArgument)
            case .summaryArgumentCount: integer(Int64(n.summaryArgumentCount))
            case .relevance: real(n.relevance)
            case .hasMedia: integer(n.hasMedia ? 1 : 0)
            case .expiration: real(n.expiration)
            case .summaryAt: real(n.summaryAt)
            case .sender: text(n.sender)
            }
        }
    }

    private mutating func note(_ code: Int32) {
        if code != SQLITE_OK && failure == SQLITE_OK { failure = code }
    }
}

/// The row a statement is on; valid only inside the `forEachRawRow` call that gave it.
struct RawRow: ColumnSource {
    let statement: SQLiteStatement

    private func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    func text(at column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    func real(at column: Int32) -> Double? { isNull(column) ? nil : sqlite3_column_double(statement, column) }

    func integer(at column: Int32) -> Int64? { isNull(column) ? nil : sqlite3_column_int64(statement, column) }

    func columnName(at column: Int32) -> String {
        sqlite3_column_name(statement, column).map { String(cString: $0) } ?? "#\(column)"
    }
}

struct RawSQLiteError: Error, CustomStringConvertible {
    let description: String
}
