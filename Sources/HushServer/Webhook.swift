import AsyncHTTPClient
import Foundation
import Hush
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// `--webhook URL`: POSTs every event, in order, each until the receiver acknowledges it (any
/// 2xx), with exponential backoff between tries. How far it got is kept in state (the cursor
/// `webhook`), so events wait in state, not in memory, while the receiver is down, and a restart
/// goes on where it stopped: at least once, and the `Idempotency-Key`
/// (`hush-event-<outbox>-<id>`: the state's outbox and the event's id on the stream) lets the
/// receiver drop a second copy. Each URL has its own cursor; a URL new to the state starts with
/// the events recorded from then on.
struct WebhookService: Service {
    let url: String
    let worker: StateWorker
    let feed: EventFeed
    let metrics: ServerMetrics
    let logger: Logger
    /// The first wait after a failure; it doubles up to `maxBackoff`.
    var firstBackoff = 0.25
    var maxBackoff = 60.0

    func run() async throws {
        // On shutdown the try in progress is cancelled: it was not acknowledged, so it is sent
        // again after the restart.
        try? await cancelWhenGracefulShutdown { try await deliverForever() }
        // The event feed closes as the stop begins; a service must not end before it is told to.
        try? await gracefulShutdown()
    }

    private func deliverForever() async throws {
        let (wakeups, cancel) = feed.subscribe()
        defer { cancel() }
        var iterator = wakeups.makeAsyncIterator()
        let url = self.url
        let (name, outboxID) = try await stateRetrying { core throws(ServiceCore.Refusal) in
            (try core.webhookCursorName(for: url), core.outboxID)
        }
        var cursor: Int64 = try await stateRetrying { core throws(ServiceCore.Refusal) in try core.cursor(name) }
        while !Task.isCancelled {
            let after = cursor
            let events = try await stateRetrying { core throws(ServiceCore.Refusal) in
                try core.events(after: after, user: nil, limit: 100)
            }
            if events.isEmpty {
                // Woken by new events or a ping (then nothing is found and it waits again).
                if await iterator.next() == nil { return }
                continue
            }
            for event in events {
                try await deliver(event, key: "hush-event-\(outboxID)-\(event.seq)")
                cursor = event.seq
                let seq = event.seq
                try await stateRetrying { core throws(ServiceCore.Refusal) in try core.setCursor(name, seq) }
            }
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
