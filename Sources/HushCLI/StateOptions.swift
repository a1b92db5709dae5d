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

    @Flag(help: "Create the folders of --state (or $HUSH_STATE) when they do not exist.")
    var create = false

    @Option(
        help: ArgumentHelp(
            "Days the delivered list and call log are kept (default: $HUSH_RETENTION_DAYS, else 7).", valueName: "days")
    )
    var retention: Double?

    func validate() throws {
        if statePath != nil && ephemeral { throw ValidationError("--state and --ephemeral cannot be used together") }
        if create && ephemeral { throw ValidationError("--create and --ephemeral cannot be used together") }
        if let retention, !(retention > 0) { throw ValidationError("--retention must be a number of days above 0") }
        // Named here, where it is read: a value that is not a number was taken for 7, and one of
        // 0 or less was refused with no word of where it came from.
        if retention == nil, let value = ProcessInfo.processInfo.environment["HUSH_RETENTION_DAYS"], !value.isEmpty,
            !(Double(value).map { $0 > 0 } ?? false)
        {
            throw ValidationError("$HUSH_RETENTION_DAYS must be a number of days above 0, got \"\(value)\"")
        }
    }

    /// `--retention`, else $HUSH_RETENTION_DAYS, else 7.
    var retentionDays: Double {
        retention ?? ProcessInfo.processInfo.environment["HUSH_RETENTION_DAYS"].flatMap(Double.init) ?? 7
    }

    /// The store for this run; a state file that cannot be opened is an error (exit 2), never replaced.
    func store() throws -> any StateStore {
        if ephemeral { return try memoryStore() }
        let location = Self.location(statePath)
        let path = location.value
        if let problem = Self.problem(with: location, create: create) {
            Output.error("hush: \(problem)")
            throw ExitCode(2)
        }
        do {
            if Self.isPostgresURL(path) { return try PostgresStateStore(url: path, retentionDays: retentionDays) }
            return try SQLiteStateStore(path: path, retentionDays: retentionDays)
        } catch {
            Output.error("hush: \(error)")
            throw ExitCode(2)
        }
    }

    /// A store in memory for this run, kept `--retention` days as a file would be (it once kept
    /// 7 whatever `--retention` said, so `--ephemeral` decided otherwise than a file).
    func memoryStore() throws -> InMemoryStateStore {
        do {
            return try InMemoryStateStore(retentionDays: retentionDays)
        } catch {
            Output.error("hush: \(error)")
            throw ExitCode(2)
        }
    }

    /// The store for a command that writes in batches and answers nobody between them (`eval`,
    /// `simulate`): a SQLite file lets its log grow to 10,000 pages between checkpoints
    /// (`SQLiteStateStore.checkpointEvery(pages:)`), where a service keeps SQLite's 1,000; a store
    /// in memory, gone when the command ends, keeps no outbox (only a service reads one).
    func batchStore() throws -> any StateStore {
        let store = try store()
        if let memory = store as? InMemoryStateStore { memory.keepsEvents = false }
        if let file = store as? SQLiteStateStore {
            do {
                try file.checkpointEvery(pages: 10_000)
            } catch {
                Output.error("hush: \(error)")
                throw ExitCode(2)
            }
        }
        return store
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

    /// Where state is, and who said so: `--state`, `$HUSH_STATE`, or nil for the default path.
    struct Location {
        var value: String
        /// "--state" or "$HUSH_STATE"; nil for the default, whose folder is made as needed (a new
        /// user's first run must work).
        var source: String?
    }

    static func location(_ explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> Location
    {
        if let explicit { return Location(value: explicit, source: "--state") }
        if let env = environment["HUSH_STATE"], !env.isEmpty { return Location(value: env, source: "$HUSH_STATE") }
        if let xdg = environment["XDG_STATE_HOME"], !xdg.isEmpty {
            return Location(value: xdg + "/hush/state.sqlite", source: nil)
        }
        return Location(
            value: (environment["HOME"] ?? NSTemporaryDirectory()) + "/.local/state/hush/state.sqlite", source: nil)
    }

    /// Why a location given by hand is refused, before anything is opened or created: a URL of a
    /// kind Hush does not speak (it would otherwise become a folder named `mysql:`), a directory,
    /// or a file in a folder that does not exist (a typo would otherwise make a new, empty state);
    /// `create` makes the missing folders instead. Nil when it may be opened.
    static func problem(with location: Location, create: Bool) -> String? {
        let value = location.value
        if isPostgresURL(value) { return nil }
        guard let source = location.source else { return nil }
        if let scheme = urlScheme(value) {
            return
                "\(source) \(value): Hush cannot keep state at a \(scheme):// URL; give the path of a SQLite file or a postgres:// (postgresql://) URL"
        }
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: value, isDirectory: &isDirectory), isDirectory.boolValue {
            return "\(source) \(value): is a directory; give the path of the state file, e.g. \(value)/state.sqlite"
        }
        // As given (relative stays relative), so the message names what the user typed.
        let parent = (value as NSString).deletingLastPathComponent
        let folder = parent.isEmpty ? "." : parent
        if fm.fileExists(atPath: folder, isDirectory: &isDirectory) {
            return isDirectory.boolValue ? nil : "\(source) \(value): \(folder) is not a folder"
        }
        guard create else {
            return "\(source) \(value): the folder \(folder) does not exist; create it, or add --create"
        }
        do {
            try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
            return nil
        } catch {
            return "\(source) \(value): cannot create the folder \(folder): \(error.localizedDescription)"
        }
    }

    /// The scheme of `scheme://…`, nil for anything else (a path).
    static func urlScheme(_ value: String) -> String? {
        guard let range = value.range(of: "://") else { return nil }
        let scheme = value[..<range.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        return String(scheme)
    }
}
