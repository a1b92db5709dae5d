import Foundation
import HushServer
import NIOCore
import NIOPosix
import XCTest

/// A connection's task runs on its event loop (`EventLoopTaskExecutor`), also after an await
/// resumed by another thread: the state thread answers a request by resuming its continuation.
final class EventLoopExecutorTests: XCTestCase {
    func testATaskPreferringAnEventLoopRunsOnItAfterBeingResumedFromAnotherThread() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loop = group.next()
        let executor = EventLoopTaskExecutor(loop)
        let (before, after) = await withTaskExecutorPreference(executor) {
            let before = loop.inEventLoop
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                Thread.detachNewThread { continuation.resume() }
            }
            return (before, loop.inEventLoop)
        }
        XCTAssertTrue(before)
        XCTAssertTrue(after)
        // Without the preference the same task runs elsewhere.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread { continuation.resume() }
        }
        XCTAssertFalse(loop.inEventLoop)
        try await group.shutdownGracefully()
    }
}
