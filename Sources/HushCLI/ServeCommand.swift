import ArgumentParser
import Foundation
import Hush
import HushServer
import Logging

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run Hush as a service: decisions over HTTP, summaries and focus changes delivered at their time.",
        discussion: """
            Endpoints, the event format and examples: docs/service.md. Stops cleanly on SIGTERM or \
            SIGINT: requests in flight are answered and what was decided is committed.
            """)

    @Option(help: ArgumentHelp("Where to listen: HOST:PORT (port 0: any free port).", valueName: "address"))
    var listen = "127.0.0.1:7878"

    @OptionGroup var policy: PolicyOptions

    @Option(
        name: .customLong("context"),
        help: ArgumentHelp(
            "A JSON file with the device state every decision starts from (timezone, focus, locked, ringer, audio).",
            valueName: "file"), completion: .file())
    var contextPath: String?

    @OptionGroup var state: StateOptions

    @Option(help: ArgumentHelp("Also POST every event to this URL (retried until acknowledged).", valueName: "url"))
    var webhook: String?

    @Option(
        help: ArgumentHelp("Start the server's clock at this instant (RFC 3339) instead of now.", valueName: "time"))
    var clock: RFC3339Time?

    @Option(help: ArgumentHelp("Run the server's clock this many times faster than real time.", valueName: "n"))
    var speed = 1.0

    @Option(
        help: ArgumentHelp(
            "How many interpreters of users' own policies are kept at once (users of --policy share one).",
            valueName: "n"))
    var maxSessions = 1024

    @Option(help: ArgumentHelp("The most lines one JSON Lines request may hold (more: 413).", valueName: "n"))
    var maxBatchLines = 10_000

    @Option(help: ArgumentHelp("How many GET /v1/events streams may be open at once (more: 503).", valueName: "n"))
    var maxEventClients = 256

    @Option(
        help: ArgumentHelp(
            "Seconds a request's headers may take to arrive whole before the connection is closed.",
            valueName: "seconds"))
    var headerTimeout: Int64 = 10

    @Option(
        help: ArgumentHelp(
            "Seconds a connection may stay silent between requests before it is closed.", valueName: "seconds"))
    var idleTimeout: Int64 = 60

    @Option(help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel = "info"

    func validate() throws {
        if !(speed > 0) || !speed.isFinite { throw ValidationError("--speed must be a number above 0") }
        if maxSessions < 1 { throw ValidationError("--max-sessions must be 1 or more") }
        if maxBatchLines < 1 { throw ValidationError("--max-batch-lines must be 1 or more") }
        if maxEventClients < 0 { throw ValidationError("--max-event-clients must be 0 or more") }
        if headerTimeout < 1 { throw ValidationError("--header-timeout must be 1 second or more") }
        if idleTimeout < 1 { throw ValidationError("--idle-timeout must be 1 second or more") }
        if Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        if parsedListen == nil { throw ValidationError("--listen must be HOST:PORT, e.g. 127.0.0.1:7878") }
        if let webhook, !(webhook.hasPrefix("http://") || webhook.hasPrefix("https://")) {
            throw ValidationError("--webhook must be an http:// or https:// URL")
        }
    }

    private var parsedListen: (host: String, port: Int)? {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        var host = String(listen[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host.isEmpty ? "127.0.0.1" : host, port)
    }

    func run() throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "hush")
        let engine = try PolicyOptions.engine(sources: policy.sources(), logger: logger)
        let context = try ContextFile.load(contextPath, for: engine.policy)
        let store = try state.store()
        let core: ServiceCore
        do {
            core = try ServiceCore(
                engine: engine, store: store, context: context, maxSessions: maxSessions,
                retentionDays: state.retentionDays)
        } catch {
            Output.error("hush: \(error)")
            throw ExitCode(2)
        }
        let (host, port) = parsedListen!
        var configuration = ServerConfiguration(engine: engine, logger: logger)
        configuration.host = host
        configuration.port = port
        configuration.policyFiles = policy.watchedFiles
        configuration.context = context
        configuration.webhook = webhook
        configuration.clockStart = clock?.seconds
        configuration.speed = speed
        configuration.maxSessions = maxSessions
        configuration.maxBatchLines = maxBatchLines
        configuration.maxEventClients = maxEventClients
        configuration.headerTimeout = headerTimeout
        configuration.idleTimeout = idleTimeout
        // As `hush eval`: HUSH_WRITE_BEHIND=0 decides and commits each batch in turn.
        configuration.writeBehind = ProcessInfo.processInfo.environment["HUSH_WRITE_BEHIND"] != "0"
        configuration.onListening = { host, port in
            // One line a script (or a test) can wait for: the address actually bound.
            Output.error("hush: listening on http://\(host.contains(":") ? "[\(host)]" : host):\(port)")
        }
        let outcome = Outcome()
        let handover = Handover(core)
        let done = DispatchSemaphore(value: 0)
        Task { [configuration] in
            do {
                try await HushServer.run(configuration, core: handover.take())
            } catch {
                outcome.set(error)
            }
            done.signal()
        }
        done.wait()
        if let error = outcome.error {
            Output.error("hush: \(error)")
            throw ExitCode(1)
        }
    }
}

/// The core, handed to the server's task: this thread never touches it again.
private final class Handover: @unchecked Sendable {
    private var core: ServiceCore?
    init(_ core: ServiceCore) { self.core = core }
    func take() -> ServiceCore {
        defer { core = nil }
        return core!
    }
}

/// How the server task ended, read after it signalled.
private final class Outcome: @unchecked Sendable {
    private(set) var error: (any Error)?
    func set(_ error: any Error) { self.error = error }
}
