import GRDB
import HushCore

/// The state tables as GRDB records (schema: `SQLiteStateStore+Migrations.swift`). Each record
/// lists the columns it selects once, in `selection`: that list is its `databaseSelection`, the
/// SELECT list of the store's hand-written queries, and the order `init(columns:)` reads them in.
/// The notifications' rows are written by hand-written upserts (`SQLiteStateStore+Statements.swift`,
/// from `NotificationColumn`), the other tables' by GRDB's persistence methods.
protocol StateRecord: FetchableRecord, TableRecord {
    /// The columns a fetch selects, in the order `init(columns:)` reads them.
    static var selection: [any ColumnExpression] { get }
    init(columns: inout ColumnReader<some ColumnSource>) throws
}

extension StateRecord {
    static var databaseSelection: [any SQLSelectable] { selection }

    /// `selection` as SQL, for a SELECT list: "a, b, c".
    static var selectList: String { selection.map(\.name).joined(separator: ", ") }

    init(row: Row) throws {
        var columns = ColumnReader(row)
        try self.init(columns: &columns)
    }
}

// MARK: - The notification tables

/// The columns of a notification, shared by `delivered`, `queue` and `arrivals`: the one list of
/// them. SELECT and INSERT lists, the upserts' assignments, decoding and encoding all follow it.
/// (The v1 migration spells them out as it created them: a registered migration is never edited.
/// A test checks the tables against this list.)
enum NotificationColumn: String, ColumnExpression, CaseIterable {
    case user, app, id, date, title, body, category
    case threadID = "thread_id"
    case groupID = "group_id"
    case summaryArgument = "summary_arg"
    case summaryArgumentCount = "summary_arg_count"
    case relevance
    case hasMedia = "has_media"
    case expiration
    case summaryAt = "summary_at"
    case sender

    /// A notification's key, the conflict target of the upserts.
    static let key: [NotificationColumn] = [.user, .app, .id]
    /// Every column, in order (`allCases` makes a new array at each call).
    static let every = allCases
    /// Every column, as SQL: "user, app, …".
    static let list = allCases.map(\.name).joined(separator: ", ")
    /// As many placeholders as columns: "?, ?, …".
    static let placeholders = allCases.map { _ in "?" }.joined(separator: ", ")
    /// For an upsert: every column but the key takes the new row's value.
    static let updateFromExcluded = allCases.filter { !key.contains($0) }
        .map { "\($0.name) = excluded.\($0.name)" }.joined(separator: ", ")
    /// What `arrivals` keeps of a notification (schema v4): what `hush.recent` counts by, and the
    /// key.
    static let arrivalColumns: [NotificationColumn] = [.user, .app, .id, .date, .threadID, .sender]
    static let arrivalList = arrivalColumns.map(\.name).joined(separator: ", ")
}

extension StoredNotification {
    /// Reads the notification columns, in `NotificationColumn` order.
    init(columns c: inout ColumnReader<some ColumnSource>) throws {
        typealias C = NotificationColumn
        self.init(
            user: try c.requiredText(C.user), app: try c.requiredText(C.app), id: try c.requiredText(C.id),
            date: try c.requiredReal(C.date), title: try c.text(C.title), body: try c.text(C.body),
            category: try c.text(C.category), threadID: try c.text(C.threadID), groupID: try c.text(C.groupID),
            summaryArgument: try c.text(C.summaryArgument),
            summaryArgumentCount: Int(try c.requiredInteger(C.summaryArgumentCount)),
            relevance: try c.real(C.relevance), hasMedia: try c.requiredInteger(C.hasMedia) != 0,
            expiration: try c.real(C.expiration), summaryAt: try c.real(C.summaryAt), sender: try c.text(C.sender))
    }
}

extension StoredNotification {
    /// The stored columns of a notification, in order: the one list, for the other stores too
    /// (`PostgresStateStore` binds and reads them in this order).
    package static let columnNames = NotificationColumn.allCases.map(\.rawValue)
}

/// A row of `delivered`: a notification delivered and still kept. `seq` orders a group: kept when
/// the notification is replaced in place, renewed (above every other of the user's) when it
/// changes group. `arrivalSeq` (schema v6): the row stands for the notification's arrival too, the
/// user's arrival of that seq; nil when the arrival is in `arrivals` (or was a summary's).
struct DeliveredRow: StateRecord {
    static let databaseTableName = "delivered"
    static var selection: [any ColumnExpression] {
        NotificationColumn.allCases as [any ColumnExpression] + [SequenceColumn.seq, ArrivalSeqColumn.arrivalSeq]
    }

    var notification: StoredNotification
    var seq: Int64
    var arrivalSeq: Int64?

    init(columns c: inout ColumnReader<some ColumnSource>) throws {
        notification = try StoredNotification(columns: &c)
        seq = try c.requiredInteger(SequenceColumn.seq)
        arrivalSeq = try c.integer(ArrivalSeqColumn.arrivalSeq)
    }
}

/// The column schema v6 adds to `delivered`.
enum ArrivalSeqColumn: String, ColumnExpression { case arrivalSeq = "arrival_seq" }

/// A row that is a notification and its `seq`: `queue`'s (`delivered` has the same columns and one
/// more, `DeliveredRow`).
protocol SequencedNotificationRow: StateRecord {
    var notification: StoredNotification { get }
    var seq: Int64 { get }
    init(notification: StoredNotification, seq: Int64)
}

/// The column a sequenced row adds to the notification's.
enum SequenceColumn: String, ColumnExpression { case seq }

extension SequencedNotificationRow {
    static var selection: [any ColumnExpression] {
        NotificationColumn.allCases as [any ColumnExpression] + [SequenceColumn.seq]
    }

    init(columns c: inout ColumnReader<some ColumnSource>) throws {
        self.init(notification: try StoredNotification(columns: &c), seq: try c.requiredInteger(SequenceColumn.seq))
    }
}

/// A row of `queue`: a notification waiting for its summary. `seq` is its place in the queue
/// (kept when it is replaced), which `SummaryQueue` breaks ties by.
struct QueueRow: SequencedNotificationRow {
    static let databaseTableName = "queue"
    var notification: StoredNotification
    var seq: Int64
}

/// A row of `arrivals`: every notification as it arrived, delivered or queued, for `hush.recent`:
/// what it counts by (`NotificationColumn.arrivalColumns`), the rest left out.
struct ArrivalRow: StateRecord {
    static let databaseTableName = "arrivals"
    static var selection: [any ColumnExpression] {
        NotificationColumn.arrivalColumns as [any ColumnExpression] + [SequenceColumn.seq]
    }

    var notification: StoredNotification
    var seq: Int64

    init(columns c: inout ColumnReader<some ColumnSource>) throws {
        typealias C = NotificationColumn
        notification = StoredNotification(
            user: try c.requiredText(C.user), app: try c.requiredText(C.app), id: try c.requiredText(C.id),
            date: try c.requiredReal(C.date), threadID: try c.text(C.threadID), sender: try c.text(C.sender))
        seq = try c.requiredInteger(SequenceColumn.seq)
    }
}

extension StoredNotification {
    /// What `arrivals` keeps of it: the same notification as read back from the file.
    var arrival: StoredNotification {
        StoredNotification(user: user, app: app, id: id, date: date, threadID: threadID, sender: sender)
    }
}

// MARK: - The other tables

/// A row of `calls`: a call, for repeated calls. The caller is kept as JSON (`PersonJSON`).
struct CallRow: StateRecord, PersistableRecord {
    static let databaseTableName = "calls"
    enum Columns: String, ColumnExpression, CaseIterable { case seq, user, date, app, caller }
    static var selection: [any ColumnExpression] { Columns.allCases }

    var call: CallRecord
    /// nil until inserted.
    var seq: Int64?

    init(_ call: CallRecord) {
        self.call = call
    }

    init(columns c: inout ColumnReader<some ColumnSource>) throws {
        seq = try c.requiredInteger(Columns.seq)
        call = CallRecord(
            user: try c.requiredText(Columns.user), date: try c.requiredReal(Columns.date),
            app: try c.requiredText(Columns.app),
            caller: try PersonJSON.decodePerson(c.requiredText(Columns.caller)))
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.seq] = seq
        container[Columns.user] = call.user
        container[Columns.date] = call.date
        container[Columns.app] = call.app
        container[Columns.caller] = PersonJSON.encode(call.caller)
    }
}

/// A row of `manual_focus`: the focus a user turned on (or every focus off, `name` NULL) by hand.
struct ManualFocusRow: StateRecord, PersistableRecord {
    static let databaseTableName = "manual_focus"
    enum Columns: String, ColumnExpression, CaseIterable { case user, name, since, until }
    static var selection: [any ColumnExpression] { Columns.allCases }

    var user: String
    var focus: ManualFocus

    init(user: String, focus: ManualFocus) {
        self.user = user
        self.focus = focus
    }

    init(columns c: inout ColumnReader<some ColumnSource>) throws {
        user = try c.requiredText(Columns.user)
        focus = ManualFocus(
            name: try c.text(Columns.name), since: try c.requiredReal(Columns.since),
            until: try c.real(Columns.until))
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.user] = user
        container[Columns.name] = focus.name
        container[Columns.since] = focus.since
        container[Columns.until] = focus.until
    }
}

/// A row of `interactions`: a donated interaction, for contact suggestions. People are kept as a
/// JSON array (`PersonJSON`).
struct InteractionRow: StateRecord, PersistableRecord {
    static let databaseTableName = "interactions"
    enum Columns: String, ColumnExpression, CaseIterable {
        case seq, user, date, direction, kind, app, people
        case group = "group_name"
    }
    static var selection: [any ColumnExpression] { Columns.allCases }

    var interaction: Interaction
    /// nil until inserted.
    var seq: Int64?

    init(_ interaction: Interaction) {
        self.interaction = interaction
    }

    init(columns c: inout ColumnReader<some ColumnSource>) throws {
        seq = try c.requiredInteger(Columns.seq)
        let user = try c.requiredText(Columns.user), date = try c.requiredReal(Columns.date)
        let direction = try c.requiredText(Columns.direction), kind = try c.requiredText(Columns.kind)
        guard let d = Interaction.Direction(rawValue: direction), let k = Communication.Kind(rawValue: kind) else {
            throw PersonJSON.DecodingError(
                description: "an interaction with an unknown direction \"\(direction)\" or kind \"\(kind)\"")
        }
        interaction = Interaction(
            user: user, date: date, direction: d, kind: k, app: try c.text(Columns.app),
            people: try PersonJSON.decodePeople(c.requiredText(Columns.people)),
            group: try c.text(Columns.group))
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.seq] = seq
        container[Columns.user] = interaction.user
        container[Columns.date] = interaction.date
        container[Columns.direction] = interaction.direction.rawValue
        container[Columns.kind] = interaction.kind.rawValue
        container[Columns.app] = interaction.app
        container[Columns.people] = PersonJSON.encode(interaction.people)
        container[Columns.group] = interaction.group
    }
}

/// A row of `retention`: the newest date a user's rows were last pruned against, so the next
/// process knows when the user is due again (`RetentionPolicy`).
struct RetentionRow: StateRecord, PersistableRecord {
    static let databaseTableName = "retention"
    enum Columns: String, ColumnExpression, CaseIterable {
        case user
        case prunedThrough = "pruned_through"
    }
    static var selection: [any ColumnExpression] { Columns.allCases }

    var user: String
    var prunedThrough: Double

    init(user: String, prunedThrough: Double) {
        self.user = user
        self.prunedThrough = prunedThrough
    }

    init(columns c: inout ColumnReader<some ColumnSource>) throws {
        user = try c.requiredText(Columns.user)
        prunedThrough = try c.requiredReal(Columns.prunedThrough)
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.user] = user
        container[Columns.prunedThrough] = prunedThrough
    }
}

// MARK: - What a long-running Hush keeps (`ServiceState`, schema v2)

/// A row of `events`: one event of the outbox. Mutable persistence, as GRDB hands the `seq` the
/// table's AUTOINCREMENT gave it to `didInsert`: it is the event's id for its consumers.
struct EventRow: StateRecord, MutablePersistableRecord {
    static let databaseTableName = "events"
    enum Columns: String, ColumnExpression, CaseIterable { case seq, user, at, kind, json }
    static var selection: [any ColumnExpression] { Columns.allCases }

    /// Its `seq` is 0 until inserted (written as NULL, so the table gives one).
    var event: StoredEvent

    init(_ event: StoredEvent) {
        self.event = event
    }

    init(columns c: inout ColumnReader<some ColumnSource>) throws {
        event = StoredEvent(
            seq: try c.requiredInteger(Columns.seq), user: try c.requiredText(Columns.user),
            at: try c.requiredReal(Columns.at), kind: try c.requiredText(Columns.kind),
            json: try c.requiredText(Columns.json))
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.seq] = event.seq > 0 ? event.seq : nil
        container[Columns.user] = event.user
        container[Columns.at] = event.at
        container[Columns.kind] = event.kind
        container[Columns.json] = event.json
    }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        event.seq = inserted.rowID
    }
}

/// A row of `schedule_marks`: how far a user's scheduled events were worked out.
struct ScheduleMarkRow: StateRecord, PersistableRecord {
    static let databaseTableName = "schedule_marks"
    enum Columns: String, ColumnExpression, CaseIterable { case user, focus, announced, through }
    static var selection: [any ColumnExpression] { Columns.allCases }

    var user: String
    var mark: ScheduleMark

    init(user: String, mark: ScheduleMark) {
        self.user = user
        self.mark = mark
    }

    init(columns c: inout ColumnReader<some ColumnSource>) throws {
        user = try c.requiredText(Columns.user)
        mark = ScheduleMark(
            focus: try c.text(Columns.focus), announced: try c.requiredInteger(Columns.announced) != 0,
            through: try c.requiredReal(Columns.through))
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.user] = user
        container[Columns.focus] = mark.focus
        container[Columns.announced] = mark.announced
        container[Columns.through] = mark.through
    }
}

/// A row of `user_policies`: a user's own policy (Lua text) and when it was last set, by the wall
/// clock (for whoever looks at the file: the store does not read it back).
struct UserPolicyRow: StateRecord, PersistableRecord {
    static let databaseTableName = "user_policies"
    enum Columns: String, ColumnExpression, CaseIterable { case user, text, updated }
    static var selection: [any ColumnExpression] { Columns.allCases }

    var user: String
    var text: String
    /// UNIX seconds.
    var updated: Double

    init(user: String, text: String, updated: Double) {
        self.user = user
        self.text = text
        self.updated = updated
    }

    init(columns c: inout ColumnReader<some ColumnSource>) throws {
        user = try c.requiredText(Columns.user)
        text = try c.requiredText(Columns.text)
        updated = try c.requiredReal(Columns.updated)
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.user] = user
        container[Columns.text] = text
        container[Columns.updated] = updated
    }
}

/// A row of `cursors`: the last event `seq` the consumer `name` acknowledged.
struct CursorRow: StateRecord, PersistableRecord {
    static let databaseTableName = "cursors"
    enum Columns: String, ColumnExpression, CaseIterable { case name, seq }
    static var selection: [any ColumnExpression] { Columns.allCases }

    var name: String
    var seq: Int64

    init(name: String, seq: Int64) {
        self.name = name
        self.seq = seq
    }

    init(columns c: inout ColumnReader<some ColumnSource>) throws {
        name = try c.requiredText(Columns.name)
        seq = try c.requiredInteger(Columns.seq)
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.name] = name
        container[Columns.seq] = seq
    }
}

// MARK: - Reading columns

/// Where a record's column values are read from, by position in its `selection`: a GRDB `Row`,
/// or, on the hot path, the row a statement is on (`RawRow`).
protocol ColumnSource {
    func text(at index: Int32) throws -> String?
    func real(at index: Int32) throws -> Double?
    func integer(at index: Int32) throws -> Int64?
    /// The name the statement gives the column, for messages and checks.
    func columnName(at index: Int32) -> String
}

/// Reads a record's columns one after another, in the order of its `selection`. Each read names
/// its column: a debug build checks it is the one the statement has there, and a NULL where a
/// value is required is reported by name.
struct ColumnReader<Source: ColumnSource> {
    let source: Source
    private var position: Int32 = 0

    init(_ source: Source) {
        self.source = source
    }

    mutating func text(_ column: some ColumnExpression) throws -> String? { try source.text(at: advance(past: column)) }
    mutating func real(_ column: some ColumnExpression) throws -> Double? { try source.real(at: advance(past: column)) }
    mutating func integer(_ column: some ColumnExpression) throws -> Int64? {
        try source.integer(at: advance(past: column))
    }

    mutating func requiredText(_ column: some ColumnExpression) throws -> String { try required(text(column), column) }
    mutating func requiredReal(_ column: some ColumnExpression) throws -> Double { try required(real(column), column) }
    mutating func requiredInteger(_ column: some ColumnExpression) throws -> Int64 {
        try required(integer(column), column)
    }

    private mutating func advance(past column: some ColumnExpression) -> Int32 {
        assert(
            source.columnName(at: position).lowercased() == column.name,
            "reading \(column.name) where the statement has \(source.columnName(at: position))")
        defer { position += 1 }
        return position
    }

    private func required<T>(_ value: T?, _ column: some ColumnExpression) throws -> T {
        guard let value else {
            throw ColumnError(description: "column \(column.name) is NULL where a value is required")
        }
        return value
    }
}

struct ColumnError: Error, CustomStringConvertible {
    let description: String
}

extension Row: ColumnSource {
    func text(at index: Int32) throws -> String? { try decode(String?.self, atIndex: Int(index)) }
    func real(at index: Int32) throws -> Double? { try decode(Double?.self, atIndex: Int(index)) }
    func integer(at index: Int32) throws -> Int64? { try decode(Int64?.self, atIndex: Int(index)) }
    func columnName(at index: Int32) -> String { Array(columnNames)[Int(index)] }
}
