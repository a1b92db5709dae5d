import Hush
import Logging
import Synchronization

/// After each committed batch: the events recorded since the last look are counted (metrics) and
/// announced to the event streams and the webhook. Runs on the state thread only.
final class PublishedEvents: Sendable {
    private let seq = Mutex<Int64>(0)

    func start(at seq: Int64) { self.seq.withLock { $0 = seq } }

    func publishNew(from core: ServiceCore, to feed: EventFeed, metrics: ServerMetrics, logger: Logger) {
        var after = seq.withLock { $0 }
        do {
            while true {
                let events = try core.events(after: after, user: nil, limit: 1000)
                guard let last = events.last else { break }
                for event in events { metrics.recordEvent(kind: event.kind) }
                after = last.seq
            }
        } catch {
            logger.error("new events could not be read", metadata: ["error": "\(error)"])
        }
        seq.withLock { $0 = after }
        feed.published(upTo: after)
    }
}
