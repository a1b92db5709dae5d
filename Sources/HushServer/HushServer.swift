import Foundation
import Hummingbird
import HummingbirdCore
package import Hush
package import Logging
import ServiceLifecycle
import UnixSignals

/// What `hush serve` runs with (docs/service.md).
package struct ServerConfiguration: Sendable {
    package var host = "127.0.0.1"
    /// 0: any free port (the one bound is given to `onListening`).
    package var port = 7878
    /// The server's policy, for users without their own.
    package var engine: Engine
    /// The policy files `engine` was loaded from, watched for changes (none: nothing to watch).
    package var policyFiles: [String] = []
    /// The device state every decision starts from (`--context`).
    package var context = EvaluationContext()
    /// `--webhook`: where every event is also POSTed.
    package var webhook: String?
    /// `--clock`: the instant the server's clock starts at (nil: the wall clock).
    package var clockStart: Double?
    /// `--speed`: how many times faster than real time the server's clock runs.
    package var speed = 1.0
    /// How many users' interpreters are kept at once (the least recently used is dropped).
    package var maxSessions = 1024
    /// The largest request body taken, in bytes (a policy: `maxPolicyBytes`); more is refused with 413.
    package var maxBodyBytes = 8 << 20
    package var maxPolicyBytes = 256 << 10
    /// The most lines one JSON Lines body (notifications, interactions) may hold; more is refused
    /// with 413 (a batch is one transaction, and holds the state thread for all its lines).
    package var maxBatchLines = 10_000
    /// A connection that sends nothing for this long (seconds) is closed.
    package var idleTimeout: Int64 = 60
    /// A request head must be whole this long (seconds) after its first byte, or after the
    /// connection opened, else the connection is closed (a client trickling its headers).
    package var headerTimeout: Int64 = 10
    /// How many `GET /v1/events` streams may be open at once; more are answered 503.
    package var maxEventClients = 256
    /// On a SQLite file, whether notifications are decided while the batches before them commit
    /// (`StateWorker`); false: each batch is decided and committed in turn (`HUSH_WRITE_BEHIND=0`).
    package var writeBehind = true
    /// How often (real seconds) due events are looked for.
    package var tick = 0.05
    package var logger: Logger
    /// Told the address once the server listens.
    package var onListening: @Sendable (_ host: String, _ port: Int) -> Void = { _, _ in }

    package init(engine: Engine, logger: Logger) {
        self.engine = engine
        self.logger = logger
    }
}

/// `hush serve`.
package enum HushServer {
    /// Runs the server until SIGTERM or SIGINT: in-flight requests are answered, what was decided
    /// is committed, then it returns. `core` is handed over: only the server's state thread uses
    /// it from now on.
    package static func run(_ configuration: ServerConfiguration, core: ServiceCore) async throws {
        let logger = configuration.logger
        let metrics = ServerMetrics()
        let feed = EventFeed()
        let published = PublishedEvents()
        let worker = StateWorker(core: core, writeBehind: configuration.writeBehind) { core in
            published.publishNew(from: core, to: feed, metrics: metrics, logger: logger)
        }
        let clock = ServiceClock(start: configuration.clockStart, speed: configuration.speed)
        let lastSeq = try await worker.perform { core throws(ServiceCore.Refusal) in try core.lastEventSeq() }
        // Several instances on one database: the events another one records reach this one's
        // streams and webhook too (an empty job: each batch ends by publishing what is new).
        let stopWatching = try await worker.perform { core in
            core.watchEvents { Task { try? await worker.perform { _ in } } }
        }
        defer { stopWatching?() }
        published.start(at: lastSeq)
        feed.published(upTo: lastSeq)

        let api = ServiceAPI(
            worker: worker, feed: feed, metrics: metrics, clock: clock, configuration: configuration)
        let router = Router(context: BasicRequestContext.self)
        // Middleware before the routes: each route takes the chain as it is when added.
        router.add(middleware: RequestIDMiddleware())
        // Each request at debug level (`--log-level debug`), with its id.
        router.add(middleware: LogRequestsMiddleware(.debug))
        router.add(middleware: ErrorMiddleware())
        api.addRoutes(to: router)
        let host = configuration.host
        let app = Application(
            router: router,
            server: HTTPServerBuilder { responder in
                DeadlineHTTP1Channel(
                    http1: HTTP1Channel(
                        responder: responder, configuration: .init(idleTimeout: .seconds(configuration.idleTimeout))),
                    headerTimeout: .seconds(configuration.headerTimeout))
            },
            configuration: .init(address: .hostname(host, port: configuration.port), serverName: "hush"),
            onServerRunning: { channel in
                configuration.onListening(host, channel.localAddress?.port ?? configuration.port)
            },
            logger: logger)

        var services: [any Service] = [app]
        if let url = configuration.webhook {
            services.append(WebhookService(url: url, worker: worker, feed: feed, metrics: metrics, logger: logger))
        }
        if !configuration.policyFiles.isEmpty {
            services.append(
                PolicyWatcher(
                    files: configuration.policyFiles, engine: configuration.engine, worker: worker, logger: logger))
        }
        // Last, so it is told to stop first (a group stops its services in reverse order): it
        // ends the event streams, which would otherwise keep the HTTP server waiting.
        services.append(
            Scheduler(worker: worker, clock: clock, tick: configuration.tick, feed: feed, logger: logger))
        var groupConfiguration = ServiceGroupConfiguration(
            services: services.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // A request that does not finish in time is cancelled rather than holding the stop forever.
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(10)
        let group = ServiceGroup(configuration: groupConfiguration)
        do {
            try await group.run()
        } catch {
            feed.close()
            worker.stop()
            throw error
        }
        // Every request was answered; the jobs handed in before are committed before we return.
        worker.stop()
        logger.info("stopped")
    }
}

/// Delivers each user's summaries and focus changes at their time: every tick, the users with
/// something due by the server's clock are worked out (`ServiceCore.advance(to:)`).
struct Scheduler: Service {
    let worker: StateWorker
    let clock: ServiceClock
    let tick: Double
    let feed: EventFeed
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            var lastPing = ContinuousClock.now
            while !Task.isCancelled {
                if ContinuousClock.now - lastPing >= .seconds(15) {
                    feed.ping()
                    lastPing = ContinuousClock.now
                }
                let now = clock.now()
                do {
                    // With nothing due, a tick does not hold up batches written behind. Something a
                    // decision of the same batch made due waits for the next tick (which then
                    // runs the ordinary way).
                    _ = try await worker.perform(writesBehind: { core in !core.hasDueWork(at: now) }) {
                        core throws(ServiceCore.Refusal) in
                        core.isRecordingBatch ? 0 : try core.advance(to: now)
                    }
                } catch {
                    logger.error("due events could not be delivered; trying again", metadata: ["error": "\(error)"])
                }
                try await Task.sleep(for: .seconds(tick))
            }
        }
        feed.close()
    }
}

/// `--policy` files changed on disk: the new policy is checked and taken; a policy that does not
/// load is refused and logged, and the old one stays.
struct PolicyWatcher: Service {
    let files: [String]
    let engine: Engine
    let worker: StateWorker
    let logger: Logger

    func run() async throws {
        let first = stamp()
        try? await cancelWhenGracefulShutdown { () async throws -> Void in
            var seen = first
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(1))
                let now = stamp()
                guard now != seen else { continue }
                seen = now
                do {
                    let engine = try engine.reloaded(from: files)
                    try await worker.perform { core throws(ServiceCore.Refusal) in core.replaceServerEngine(engine) }
                    logger.info("policy reloaded", metadata: ["files": "\(files)"])
                } catch let error as HushError {
                    logger.error(
                        "the changed policy was refused; the old one stays",
                        metadata: [
                            "files": "\(files)",
                            "problems": "\(error.problems.isEmpty ? [error.message] : error.problems)",
                        ])
                } catch {
                    logger.error("the policy could not be reloaded", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Each file's (or directory entry's) modification time and size.
    private func stamp() -> [String] {
        var out: [String] = []
        let fm = FileManager.default
        for path in files {
            var paths = [path]
            if let entries = try? fm.contentsOfDirectory(atPath: path) {
                paths = entries.sorted().filter { $0.hasSuffix(".lua") }.map { path + "/" + $0 }
            }
            for p in paths {
                let attributes = try? fm.attributesOfItem(atPath: p)
                let date = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
                let size = (attributes?[.size] as? NSNumber)?.intValue ?? -1
                out.append("\(p) \(date) \(size)")
            }
        }
        return out
    }
}
