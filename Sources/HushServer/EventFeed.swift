import Foundation
import Synchronization

/// Tells the event streams and the webhook that events were recorded (they then read them from
/// state, in order), and ends the streams when the server stops.
final class EventFeed: Sendable {
    /// Why a subscriber was woken.
    enum Wakeup: Sendable, Equatable {
        /// Events were recorded.
        case events
        /// Nothing new; idle streams send a comment so proxies and clients keep them open.
        case ping
    }

    private struct Listeners {
        var next = 0
        var waiting: [Int: AsyncStream<Wakeup>.Continuation] = [:]
        var closed = false
        var lastSeq: Int64 = 0
    }
    private let listeners = Mutex(Listeners())

    /// The newest event recorded so far.
    var lastSeq: Int64 { listeners.withLock { $0.lastSeq } }
    var isClosed: Bool { listeners.withLock { $0.closed } }

    /// Wakes every subscriber when `seq` is newer than what they were told.
    func published(upTo seq: Int64) {
        let toWake: [AsyncStream<Wakeup>.Continuation] = listeners.withLock { state in
            guard seq > state.lastSeq else { return [] }
            state.lastSeq = seq
            return Array(state.waiting.values)
        }
        for continuation in toWake { continuation.yield(.events) }
    }

    /// A stream that yields when new events are recorded and finishes when the server stops.
    func subscribe() -> (stream: AsyncStream<Wakeup>, cancel: @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream.makeStream(of: Wakeup.self, bufferingPolicy: .bufferingNewest(1))
        let id: Int? = listeners.withLock { state in
            guard !state.closed else { return nil }
            state.next += 1
            state.waiting[state.next] = continuation
            return state.next
        }
        guard let id else {
            continuation.finish()
            return (stream, {})
        }
        let cancel: @Sendable () -> Void = { [self] in
            let removed = listeners.withLock { $0.waiting.removeValue(forKey: id) }
            removed?.finish()
        }
        return (stream, cancel)
    }

    /// Wakes every subscriber with `.ping`.
    func ping() {
        let all = listeners.withLock { Array($0.waiting.values) }
        for continuation in all { continuation.yield(.ping) }
    }

    /// Ends every stream: the server is stopping.
    func close() {
        let all: [AsyncStream<Wakeup>.Continuation] = listeners.withLock { state in
            state.closed = true
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for continuation in all { continuation.finish() }
    }
}
