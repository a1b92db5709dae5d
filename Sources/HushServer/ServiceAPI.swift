import Foundation
import HTTPTypes
import Hummingbird
import Hush
import Logging
import NIOCore
import Synchronization

/// The endpoints of SPEC §8 (docs/service.md, docs/openapi.json).
struct ServiceAPI: Sendable {
    let worker: StateWorker
    let feed: EventFeed
    let metrics: ServerMetrics
    let clock: ServiceClock
    let configuration: ServerConfiguration
    /// The `GET /v1/events` streams open (at most `configuration.maxEventClients`).
    let eventStreams = StreamSlots()
    let liveView = LivePageView()

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.post("/v1/notifications") { request, context in try await decide(request, context) }
        router.get("/v1/users/{user}/status") { request, context in
            let user = try context.user()
            let now = clock.now()
            return try await json(.ok) { core throws(ServiceCore.Refusal) in try core.status(user: user, now: now) }
        }
        router.put("/v1/users/{user}/focus") { request, context in
            let user = try context.user()
            let body = try await collect(request, limit: 64 << 10)
            let now = clock.now()
            return try await json(.ok) { core throws(ServiceCore.Refusal) in
                try core.setFocus(user: user, body: body, now: now)
            }
        }
        router.post("/v1/users/{user}/interactions") { request, context in
            let user = try context.user()
            let body = try await collect(request, limit: configuration.maxBodyBytes)
            try checkLineCount(body)
            let (kept, errors) = try await worker.perform { core throws(ServiceCore.Refusal) in
                let result = try core.donate(user: user, body: body)
                return (
                    result.kept, result.errors.map { LineProblem(line: $0.line, message: $0.message, field: $0.field) }
                )
            }
            return donated(kept: kept, errors: errors)
        }
        router.get("/v1/users/{user}/suggestions") { request, context in
            let user = try context.user()
            let focus = request.uri.queryParameters.get("focus").map { String($0) }
            var limit = 10
            if let text = request.uri.queryParameters.get("limit") {
                guard let n = Int(text), n >= 0 else {
                    throw APIError(.badRequest, "limit: must be a whole number, 0 or more", field: "limit")
                }
                limit = n
            }
            let now = clock.now()
            let count = limit
            return try await json(.ok) { core throws(ServiceCore.Refusal) in
                try core.suggestions(user: user, focus: focus, limit: count, now: now)
            }
        }
        router.put("/v1/users/{user}/policy") { request, context in
            let user = try context.user()
            let body = try await collect(request, limit: configuration.maxPolicyBytes)
            guard let text = String(validating: body, as: UTF8.self) else {
                throw APIError(.badRequest, "the policy is not UTF-8 text", field: "policy")
            }
            let focuses = try await worker.perform { core throws(ServiceCore.Refusal) in
                try core.setPolicy(user: user, text: text)
            }
            return Self.response(.ok, json: ServiceJSON.policyAccepted(user: user, focuses: focuses))
        }
        router.get("/v1/users/{user}/policy") { request, context in
            let user = try context.user()
            let text = try await worker.perform { core throws(ServiceCore.Refusal) in try core.policy(user: user) }
            guard let text else {
                throw APIError(
                    .notFound, "user \"\(user)\" has no policy of their own; the server's policy applies", field: nil)
            }
            return Response(
                status: .ok, headers: [.contentType: "text/x-lua; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        router.delete("/v1/users/{user}/policy") { request, context in
            let user = try context.user()
            let removed = try await worker.perform { core throws(ServiceCore.Refusal) in
                try core.deletePolicy(user: user)
            }
            guard removed else {
                throw APIError(.notFound, "user \"\(user)\" has no policy of their own", field: nil)
            }
            return Response(status: .noContent)
        }
        router.get("/v1/events") { request, context in try events(request) }
        router.get("/") { request, context in try await livePage(request) }
        router.get("/healthz") { _, _ in
            Self.response(.ok, json: Array("{\"status\":\"ok\"}".utf8))
        }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
    }

    // MARK: - Notifications

    private func decide(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let body = try await collect(request, limit: configuration.maxBodyBytes)
        try checkLineCount(body)
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        let jsonLines = contentType.hasPrefix("application/x-ndjson") || contentType.hasPrefix("application/jsonl")
        let explain = ["1", "true", "yes"].contains(request.uri.queryParameters.get("explain")?.lowercased() ?? "")
        // Read here, on the request's thread: the state thread only decides.
        let prepared = try ServiceCore.prepare(body)
        let now = clock.now()
        let output = try await worker.perform(writesBehind: { _ in true }, lines: prepared.count) {
            core throws(ServiceCore.Refusal) in
            try core.decide(prepared, jsonLines: jsonLines, explain: explain, now: now)
        }
        metrics.record(output.decided)
        if output.single { return Self.response(.ok, json: output.body) }
        return Response(
            status: .ok, headers: [.contentType: "application/x-ndjson"],
            body: .init(byteBuffer: ByteBuffer(bytes: output.body)))
    }

    // MARK: - Events

    /// Server-Sent Events: every event recorded from now on (or, with `Last-Event-ID`, after
    /// that one), `?user=` only that user's; a comment every 15 s keeps idle connections open.
    private func events(_ request: Request) throws -> Response {
        // `?after=SEQ` is `Last-Event-ID` for clients that cannot set headers (the live page's
        // EventSource); the header wins, as it is what a reconnecting client sends.
        var resumeAfter = request.headers[.lastEventID].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        if resumeAfter == nil, let after = request.uri.queryParameters.get("after") {
            guard let seq = Int64(after), seq >= 0 else {
                throw APIError(.badRequest, "after: must be an event id (a whole number, 0 or more)", field: "after")
            }
            resumeAfter = seq
        }
        let lastID = resumeAfter
        // Each stream holds a connection and a task for as long as the client stays: beyond the
        // cap, clients are told to come back rather than piling up.
        guard let slot = eventStreams.take(limit: configuration.maxEventClients) else {
            var response = APIError(
                .serviceUnavailable,
                "too many event streams are open (\(configuration.maxEventClients), --max-event-clients); try again later",
                field: nil
            ).response
            response.headers[.retryAfter] = "5"
            return response
        }
        let user = request.uri.queryParameters.get("user").map { String($0) }
        let worker = self.worker
        let feed = self.feed
        let request = request
        let metrics = self.metrics
        let (wakeups, cancel) = feed.subscribe()
        let body = ResponseBody { writer in
            // Held by this closure: the slot is given back when the response is gone, whether or
            // not the stream ever began.
            withExtendedLifetime(slot) {}
            metrics.streamsChanged(by: 1)
            defer {
                cancel()
                metrics.streamsChanged(by: -1)
            }
            var after: Int64
            if let lastID {
                after = lastID
            } else {
                // Reads of the outbox (committed events only) may go with batches written behind.
                after = try await worker.perform(writesBehind: { _ in true }) { core throws(ServiceCore.Refusal) in
                    try core.lastEventSeq()
                }
            }
            // Opens the stream at once (clients see the connection is up) and says how to reconnect.
            try await writer.write(ByteBuffer(string: "retry: 1000\n: hush events\n\n"))
            // Ends the loop when the client goes away (not only at the next write).
            try await request.body.consumeWithCancellationOnInboundClose { _ in
                var sendNow = true
                var wakeups = wakeups.makeAsyncIterator()
                while true {
                    if sendNow {
                        let from = after
                        let events = try await worker.perform(writesBehind: { _ in true }) {
                            core throws(ServiceCore.Refusal) in
                            try core.events(after: from, user: user, limit: 500)
                        }
                        if let last = events.last {
                            var buffer = ByteBuffer()
                            for event in events {
                                buffer.writeString("id: \(event.seq)\nevent: \(event.kind)\ndata: \(event.json)\n\n")
                            }
                            try await writer.write(buffer)
                            after = last.seq
                            // A full page: there may be more.
                            if events.count == 500 { continue }
                        }
                    }
                    // Woken by new events, or by the feed's keep-alive ping; nil: the server stops.
                    guard let wakeup = await wakeups.next() else { break }
                    if wakeup == .ping { try await writer.write(ByteBuffer(string: ": keep-alive\n\n")) }
                    sendNow = wakeup == .events
                }
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: body)
    }

    // MARK: - The live page

    private func livePage(_ request: Request) async throws -> Response {
        let user = request.uri.queryParameters.get("user").map { String($0) }.flatMap { $0.isEmpty ? nil : $0 }
        let now = clock.now()
        let limit = 50
        let page = try await worker.perform { core throws(ServiceCore.Refusal) in
            try core.livePage(only: user, now: now, userLimit: limit)
        }
        let html = liveView.render(page, user: user, userLimit: limit)
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                // Nothing but this page's own style and script, and its own event stream.
                .contentSecurityPolicy:
                    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'",
            ],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    // MARK: - Helpers

    private func json(
        _ status: HTTPResponse.Status, _ body: @escaping @Sendable (ServiceCore) throws(ServiceCore.Refusal) -> [UInt8]
    ) async throws -> Response {
        Self.response(status, json: try await worker.perform(body))
    }

    static func response(_ status: HTTPResponse.Status, json: [UInt8]) -> Response {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(json.count + 1)
        buffer.writeBytes(json)
        buffer.writeInteger(UInt8(10))
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: buffer))
    }

    private func donated(kept: Int, errors: [LineProblem]) -> Response {
        let body = ServiceJSON.donated(kept: kept, errors: errors.map { ($0.line, $0.message, $0.field) })
        // Lines kept are kept: a request with some refused lines is answered 200 with them listed
        // (resending the whole body would donate the kept ones twice); 400 when nothing was kept.
        return Self.response(kept == 0 && !errors.isEmpty ? .badRequest : .ok, json: body)
    }

    /// Refuses a body of more than `maxBatchLines` non-blank lines with 413, before any is decided.
    private func checkLineCount(_ body: [UInt8]) throws {
        let limit = configuration.maxBatchLines
        var lines = 0
        var blank = true
        for byte in body {
            if byte == 10 {
                if !blank { lines += 1 }
                blank = true
            } else if blank && byte != 32 && byte != 9 && byte != 13 {
                blank = false
            }
        }
        if !blank { lines += 1 }
        guard lines > limit else { return }
        throw APIError(
            .contentTooLarge,
            "the body has \(lines) lines; at most \(limit) are taken in one request (send them in several)",
            field: nil)
    }

    /// The request body, refused with 413 beyond `limit` bytes.
    private func collect(_ request: Request, limit: Int) async throws -> [UInt8] {
        var request = request
        do {
            let buffer = try await request.collectBody(upTo: limit)
            return Array(buffer.readableBytesView)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw APIError(.contentTooLarge, "the body is larger than \(limit) bytes", field: nil)
        }
    }
}

struct LineProblem: Sendable {
    var line: Int
    var message: String
    var field: String?
}

extension BasicRequestContext {
    /// The `{user}` of the path.
    fileprivate func user() throws -> String {
        guard let user = parameters.get("user"), !user.isEmpty else {
            throw APIError(.badRequest, "user: missing from the path", field: "user")
        }
        return user
    }
}

extension HTTPField.Name {
    static let lastEventID = Self("Last-Event-ID")!
}

/// Counts what is open against a cap; each slot taken is given back when its token is released.
final class StreamSlots: Sendable {
    private let count = Mutex(0)

    /// A token holding one slot until it is released, nil when `limit` are taken already.
    func take(limit: Int) -> Slot? {
        let taken = count.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
        return taken ? Slot(self) : nil
    }

    fileprivate func giveBack() { count.withLock { $0 -= 1 } }

    final class Slot: Sendable {
        private let slots: StreamSlots
        fileprivate init(_ slots: StreamSlots) { self.slots = slots }
        deinit { slots.giveBack() }
    }
}
