import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// One PostgreSQL connection, used from one thread at a time, synchronously: the state store's
/// protocol is synchronous, and its owner (the server's state thread, or a command) is never an
/// event loop, so waiting on a future is safe here. Statements whose result nobody reads (the
/// writes) are sent without waiting: the connection runs statements in the order they were sent,
/// so a later read sees them, and their outcome is collected before the next read or the commit.
/// Reconnects when the connection was lost (only between transactions: a transaction does not
/// survive its connection).
final class BlockingConnection {
    let location: PostgresLocation
    let logger: Logger
    private var connection: PostgresConnection?
    private var sent: [EventLoopFuture<PostgresQueryResult>] = []
    private static let nextID = NSLock()
    nonisolated(unsafe) private static var lastID = 0

    init(_ location: PostgresLocation, logger: Logger) {
        self.location = location
        self.logger = logger
    }

    deinit {
        if let connection { _ = try? connection.close().wait() }
    }

    /// The connection, made anew when there is none or it was lost.
    private func open() throws -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        connection = nil
        sent.removeAll()
        Self.nextID.lock()
        Self.lastID += 1
        let id = Self.lastID
        Self.nextID.unlock()
        do {
            let made = try PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(), configuration: location.configuration, id: id,
                logger: logger
            ).wait()
            connection = made
            return made
        } catch {
            throw PostgresStateError(action: "connect to \(location.redacted)", error)
        }
    }

    /// Whether a connection is open now.
    var isOpen: Bool { connection.map { !$0.isClosed } ?? false }

    /// Drops the connection (the next statement opens a new one).
    func close() {
        sent.removeAll()
        if let connection { _ = try? connection.close().wait() }
        connection = nil
    }

    /// Runs `sql` and returns its rows, once every statement sent before it has succeeded.
    @discardableResult
    func query(_ sql: String, _ binds: PostgresBindings = PostgresBindings(), action: String) throws -> [PostgresRow] {
        let connection = try open()
        let result = connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        try settle(action: action)
        do {
            return try result.wait().rows
        } catch {
            throw PostgresStateError(action: action, error)
        }
    }

    /// Sends `sql` without waiting for it (see the type's comment).
    func send(_ sql: String, _ binds: PostgresBindings = PostgresBindings(), action: String) throws {
        let connection = try open()
        sent.append(connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger))
    }

    /// Waits for every statement sent; throws the first failure.
    func settle(action: String) throws {
        guard !sent.isEmpty else { return }
        let waiting = sent
        sent.removeAll(keepingCapacity: true)
        var failure: (any Error)?
        for future in waiting {
            do { _ = try future.wait() } catch { failure = failure ?? error }
        }
        if let failure { throw PostgresStateError(action: action, failure) }
    }
}

/// Where the database is: a `postgres://` URL, parsed.
struct PostgresLocation: Sendable {
    var configuration: PostgresConnection.Configuration
    /// The URL without its password, for messages.
    var redacted: String

    /// `postgres://[user[:password]@]host[:port][/database][?sslmode=disable|prefer|require]`
    /// (also `postgresql://`); a missing user is the OS user, as psql does; `?host=/dir` reaches a
    /// server on a Unix socket in `/dir`.
    init(url: String) throws(PostgresStateError) {
        guard let components = URLComponents(string: url),
            let scheme = components.scheme, scheme == "postgres" || scheme == "postgresql"
        else {
            throw PostgresStateError(message: "\"\(url)\" is not a postgres:// URL")
        }
        let user =
            components.user?.removingPercentEncoding ?? ProcessInfo.processInfo.environment["PGUSER"]
            ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
        let password = components.password?.removingPercentEncoding ?? ProcessInfo.processInfo.environment["PGPASSWORD"]
        var database = String(components.path.drop { $0 == "/" })
        if database.isEmpty { database = user }
        let query = components.queryItems ?? []
        func item(_ name: String) -> String? { query.first { $0.name == name }?.value }
        let socketDirectory = item("host").flatMap { $0.hasPrefix("/") ? $0 : nil }
        let host = components.host.flatMap { $0.isEmpty ? nil : $0 }
        if let socketDirectory, host == nil {
            let port = components.port ?? 5432
            configuration = .init(
                unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: user, password: password,
                database: database)
        } else {
            switch item("sslmode") ?? "disable" {
            case "disable", "allow", "prefer":
                // TLS needs certificates set up; on a private network or loopback, plain TCP.
                break
            default:
                throw PostgresStateError(
                    message: "\(url): sslmode=\(item("sslmode") ?? "") is not supported (use sslmode=disable)")
            }
            configuration = .init(
                host: host ?? "127.0.0.1", port: components.port ?? 5432, username: user, password: password,
                database: database, tls: .disable)
        }
        configuration.options.connectTimeout = .seconds(10)
        var shown = components
        if shown.password != nil { shown.password = "***" }
        redacted = shown.string ?? "postgres://"
    }
}

/// A PostgreSQL state operation that failed: what was being done, and PostgreSQL's own words.
struct PostgresStateError: Error, CustomStringConvertible {
    var message: String
    /// PostgreSQL's SQLSTATE, when the server answered with an error.
    var sqlState: String?

    init(message: String) {
        self.message = message
    }

    init(action: String, _ error: any Error) {
        if let error = error as? PostgresStateError {
            self = error
            return
        }
        if let error = error as? PSQLError {
            sqlState = error.serverInfo?[.sqlState]
            if let text = error.serverInfo?[.message] {
                message = "could not \(action): \(text)"
            } else {
                // Not from the server: the connection (refused, closed, timed out), and why.
                message = "could not \(action): \(error.code)" + (error.underlying.map { " (\($0))" } ?? "")
            }
        } else {
            message = "could not \(action): \(error)"
        }
    }

    var description: String { message }
}
