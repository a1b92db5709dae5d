import Foundation
import HushCore
import HushState
import PostgresNIO

/// Reads a row's columns one after another, in the order they were selected.
struct CellReader {
    private var cells: PostgresRow.Iterator

    init(_ row: PostgresRow) { cells = row.makeIterator() }

    private mutating func next() throws -> PostgresCell {
        guard let cell = cells.next() else {
            throw PostgresStateError(message: "a row has fewer columns than selected")
        }
        return cell
    }

    mutating func text() throws -> String? { try next().decode(String?.self) }
    mutating func requiredText() throws -> String { try next().decode(String.self) }
    mutating func real() throws -> Double? { try next().decode(Double?.self) }
    mutating func requiredReal() throws -> Double { try next().decode(Double.self) }
    mutating func integer() throws -> Int64? { try next().decode(Int64?.self) }
    mutating func int() throws -> Int { Int(try next().decode(Int32.self)) }
    mutating func bool() throws -> Bool? { try next().decode(Bool?.self) }
    mutating func requiredBool() throws -> Bool { try next().decode(Bool.self) }
}

extension PostgresBindings {
    /// Binds an optional as NULL when absent.
    mutating func add(_ value: (some PostgresNonThrowingEncodable)?) {
        if let value { append(value) } else { appendNull() }
    }

    mutating func add(_ value: some PostgresNonThrowingEncodable) { append(value) }
}

/// A notification's columns, as `PostgresSchema.notificationColumns` lists them.
enum NotificationRow {
    static let columns = StoredNotification.columnNames.map { $0 == "user" ? "user_name" : $0 }
        .joined(separator: ", ")
    static let count = StoredNotification.columnNames.count
    /// "$1, …, $16" after `offset` bindings.
    static func placeholders(from first: Int = 1) -> String {
        (first..<(first + count)).map { "$\($0)" }.joined(separator: ", ")
    }
    /// For an upsert: every column but the key takes the new row's value.
    static let updateFromExcluded = columns.components(separatedBy: ", ").filter {
        !["user_name", "app", "id"].contains($0)
    }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")

    static func bind(_ n: StoredNotification, to b: inout PostgresBindings) {
        b.add(n.user)
        b.add(n.app)
        b.add(n.id)
        b.add(n.date)
        b.add(n.title)
        b.add(n.body)
        b.add(n.category)
        b.add(n.threadID)
        b.add(n.groupID)
        b.add(n.summaryArgument)
        b.add(Int32(clamping: n.summaryArgumentCount))
        b.add(n.relevance)
        b.add(n.hasMedia)
        b.add(n.expiration)
        b.add(n.summaryAt)
        b.add(n.sender)
    }

    static func read(_ c: inout CellReader) throws -> StoredNotification {
        StoredNotification(
            user: try c.requiredText(), app: try c.requiredText(), id: try c.requiredText(), date: try c.requiredReal(),
            title: try c.text(), body: try c.text(), category: try c.text(), threadID: try c.text(),
            groupID: try c.text(), summaryArgument: try c.text(), summaryArgumentCount: try c.int(),
            relevance: try c.real(), hasMedia: try c.requiredBool(), expiration: try c.real(), summaryAt: try c.real(),
            sender: try c.text())
    }
}
