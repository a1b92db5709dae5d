import Foundation
import Logging
import NIOPosix
import PostgresNIO
import Synchronization

/// Listens on `hush_events` (LISTEN/NOTIFY) on a connection of its own, and calls `onNew` for
/// each notification: another instance committed events. A lost connection is made again (every
/// second until it is), and `onNew` is called once it is, for what was missed meanwhile.
final class EventListener: Sendable {
    private let location: PostgresLocation?
    private let logger: Logger
    private let onNew: @Sendable () -> Void
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(url: String, logger: Logger, onNew: @escaping @Sendable () -> Void) {
        location = try? PostgresLocation(url: url)
        self.logger = logger
        self.onNew = onNew
    }

    func start() {
        guard let location else { return }
        let logger = logger
        let onNew = onNew
        let started = Task {
            var connectionID = 1_000_000
            while !Task.isCancelled {
                connectionID += 1
                do {
                    let connection = try await PostgresConnection.connect(
                        on: MultiThreadedEventLoopGroup.singleton.next(), configuration: location.configuration,
                        id: connectionID, logger: logger)
                    do {
                        let notifications = try await connection.listen("hush_events")
                        onNew()
                        for try await _ in notifications { onNew() }
                    } catch {
                        logger.warning("the event listener lost its connection", metadata: ["error": "\(error)"])
                    }
                    try? await connection.close()
                } catch {
                    logger.warning("the event listener cannot connect", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        task.withLock { $0 = started }
    }

    func stop() {
        task.withLock {
            $0?.cancel()
            $0 = nil
        }
    }
}
