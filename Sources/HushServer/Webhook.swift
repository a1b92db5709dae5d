import AsyncHTTPClient
import Foundation
import Hush
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// `--webhook URL`: POSTs every event, in order, each until the receiver acknowledges it (any
/// 2xx), with exponential backoff between tries. How far it got is kept in state (the cursor
/// `webhook URL`), so events wait in state, not in memory (at most one page of 100 is held here),
/// while the receiver is down, and a restart goes on where it stopped: at least once, and the
/// `Idempotency-Key` (`hush-event-<outbox>-<id>`: the state's outbox and the event's id on the
/// stream) lets the receiver drop a second copy. Each URL has its own cursor; a URL new to the
/// state starts with the events recorded from then on. The prunes keep every event the cursor has
/// not passed while a server sends to the URL: this sender says so after each prune (`alive
/// webhook URL`, see `OutboxHolds`); a URL nobody sends to any more lets go after the retention.
struct WebhookService: Service {
    let url: String
    let worker: StateWorker
    let feed: EventFeed
    let metrics: ServerMetrics
    let logger: Logger
    /// The first wait after a failure; it doubles up to `maxBackoff`.
    var firstBackoff = 0.25
    var maxBackoff = 60.0
    /// How often (real time) the sender looks whether a prune happened, to say it is alive. Well
    /// within the day's worth of prunes a webhook may miss, even under a fast `--clock`.
    var renewEvery = 1.0

    func run() async throws {
        // On shutdown the try in progress is cancelled: it was not acknowledged, so it is sent
        // again after the restart.
        try? await cancelWhenGracefulShutdown { try await deliverForever() }
        // The event feed closes as the stop begins; a service must not end before it is told to.
        try? await gracefulShutdown()
    }

    private func deliverForever() async throws {
        let url = self.url
        let (name, outboxID) = try await stateRetrying { core throws(ServiceCore.Refusal) in
            (try core.webhookCursorName(for: url), core.outboxID)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Apart from delivering: a receiver down for hours keeps the sender in its backoff,
            // and its events must stay held all that time.
            group.addTask { try await renewForever(cursor: name) }
            group.addTask { try await deliverInOrder(cursor: name, outboxID: outboxID) }
            // Either ends only when the server stops (or a task is cancelled): end the other.
            try await group.next()
            group.cancelAll()
        }
    }

    private func deliverInOrder(cursor name: String, outboxID: String) async throws {
        let (wakeups, cancel) = feed.subscribe()
        defer { cancel() }
        var iterator = wakeups.makeAsyncIterator()
        var cursor: Int64 = try await stateRetrying { core throws(ServiceCore.Refusal) in try core.cursor(name) }
        while !Task.isCancelled {
            let after = cursor
            // One page at a time: a backlog of any size stays in state.
            let events = try await stateRetrying { core throws(ServiceCore.Refusal) in
                try core.events(after: after, user: nil, limit: 100)
            }
            if events.isEmpty {
                // Woken by new events or a ping (then nothing is found and it waits again).
                if await iterator.next() == nil { return }
                continue
            }
            if let first = events.first, first.seq > after + 1, after > 0 {
                // Seqs have no holes, so these were pruned: the URL was not sent to for longer than
                // the retention (see `OutboxHolds`).
                logger.warning(
                    "webhook events were forgotten before the receiver got them",
                    metadata: ["after": "\(after)", "next": "\(first.seq)"])
            }
            for event in events {
                try await deliver(event, key: "hush-event-\(outboxID)-\(event.seq)")
                cursor = event.seq
                let seq = event.seq
                try await stateRetrying { core throws(ServiceCore.Refusal) in try core.setCursor(name, seq) }
            }
        }
    }

    /// After each prune, records that a server still sends to this URL (`OutboxHolds`).
    private func renewForever(cursor name: String) async throws {
        let alive = "alive " + name  // `OutboxHolds.aliveName(forCursor:)`
        var renewed: Int64 = -1
        while true {
            let last = renewed
            renewed = try await stateRetrying { core throws(ServiceCore.Refusal) in
                let prunes = try core.cursor("prunes")  // `OutboxHolds.prunesName`
                if prunes != last { try core.setCursor(alive, prunes) }
                return prunes
            }
            try await Task.sleep(for: .seconds(renewEvery))
        }
    }

    /// Sends one event until it is acknowledged (or the server stops).
    private func deliver(_ event: StoredEvent, key: String) async throws {
        var backoff = firstBackoff
        var attempt = 1
        while true {
            try Task.checkCancellation()
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "Idempotency-Key", value: key)
            request.headers.add(name: "Hush-Event", value: event.kind)
            request.headers.add(name: "Hush-Event-Id", value: String(event.seq))
            request.headers.add(name: "Hush-Attempt", value: String(attempt))
            request.body = .bytes(ByteBuffer(string: event.json))
            var failure: String
            do {
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
                // The body is not needed; reading it frees the connection.
                _ = try? await response.body.collect(upTo: 64 * 1024)
                if (200..<300).contains(response.status.code) {
                    metrics.webhookDelivered()
                    return
                }
                failure = "status \(response.status.code)"
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                failure = "\(error)"
            }
            metrics.webhookRetried()
            logger.warning(
                "webhook did not acknowledge an event; trying again",
                metadata: [
                    "event": "\(event.seq)", "attempt": "\(attempt)", "error": "\(failure)",
                    "retry_in_s": "\(backoff)",
                ])
            // ±20 % so that many servers retrying one receiver do not retry in step.
            try await Task.sleep(for: .seconds(backoff * Double.random(in: 0.8...1.2)))
            backoff = min(backoff * 2, maxBackoff)
            attempt += 1
        }
    }

    /// A state read or write, tried again each second while state is unavailable.
    private func stateRetrying<T: Sendable>(_ body: @escaping @Sendable (ServiceCore) throws(ServiceCore.Refusal) -> T)
        async throws -> T
    {
        while true {
            do {
                return try await worker.perform(body)
            } catch {
                logger.error("webhook cannot reach state", metadata: ["error": "\(error)"])
                try await Task.sleep(for: .seconds(1))
            }
        }
    }
}
