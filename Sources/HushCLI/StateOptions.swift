import ArgumentParser
import Foundation
import Hush
import HushState

/// `--state PATH | --ephemeral`, shared by the commands that read or write state.
struct StateOptions: ParsableArguments {
    @Option(
        name: .customLong("state"),
        help: ArgumentHelp(
            "The state file, or a postgres:// URL shared by several instances (default: $HUSH_STATE, else $XDG_STATE_HOME/hush/state.sqlite, else ~/.local/state/hush/state.sqlite).",
            valueName: "path|url"), completion: .file())
    var statePath: String?

    @Flag(help: "Keep state in memory for this run only.")
    var ephemeral = false

    @Option(
        help: ArgumentHelp(
            "Days the delivered list and call log are kept (default: $HUSH_RETENTION_DAYS, else 7).", valueName: "days")
    )
    var retention: Double?

    func validate() throws {
        if statePath != nil && ephemeral { throw ValidationError("--state and --ephemeral cannot be used together") }
        if let retention, !(retention > 0) { throw ValidationError("--retention must be a number of days above 0") }
    }

    /// `--retention`, else $HUSH_RETENTION_DAYS, else 7.
    var retentionDays: Double {
        retention ?? ProcessInfo.processInfo.environment["HUSH_RETENTION_DAYS"].flatMap(Double.init) ?? 7
    }

    /// The store for this run; a state file that cannot be opened is an error (exit 2), never replaced.
    func store() throws -> any StateStore {
        if ephemeral { return InMemoryStateStore() }
        let path = Self.resolvedPath(statePath)
        do {
            if Self.isPostgresURL(path) { return try PostgresStateStore(url: path, retentionDays: retentionDays) }
            return try SQLiteStateStore(path: path, retentionDays: retentionDays)
        } catch {
            Output.error("hush: \(error)")
            throw ExitCode(2)
        }
    }

    /// For commands that only read: a read that fails (a damaged file) is an error (exit 2), not
    /// an empty answer.
    static func reading<T>(_ read: () throws -> T) throws -> T {
        do {
            return try read()
        } catch {
            Output.error("hush: \(error)")
            throw ExitCode(2)
        }
    }

    /// `--state postgres://…` (or `postgresql://…`): state in PostgreSQL (docs/scaling.md).
    static func isPostgresURL(_ location: String) -> Bool {
        location.hasPrefix("postgres://") || location.hasPrefix("postgresql://")
    }

    static func resolvedPath(_ explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        if let explicit { return explicit }
        if let env = environment["HUSH_STATE"], !env.isEmpty { return env }
        if let xdg = environment["XDG_STATE_HOME"], !xdg.isEmpty { return xdg + "/hush/state.sqlite" }
        return (environment["HOME"] ?? NSTemporaryDirectory()) + "/.local/state/hush/state.sqlite"
    }
}
