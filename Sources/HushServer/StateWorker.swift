import Foundation
import Hush

/// The one thread that touches the service's state and interpreters (`ServiceCore`, not
/// thread-safe). Requests hand it jobs; it runs every job waiting at once in ONE batch of the
/// store, commits, and only then answers them: under load many requests share a commit, and no
/// request is answered with something that was not committed (a failed commit answers them all
/// 503).
final class StateWorker: @unchecked Sendable {
    /// A job runs on the worker thread and returns how to answer, given whether its batch committed.
    typealias Job = @Sendable (ServiceCore) -> @Sendable (_ committed: Bool) -> Void
    /// A job, and how to answer it when it never ran (its batch could not begin).
    private struct Queued {
        var run: Job
        var refuse: @Sendable () -> Void
    }

    private let core: ServiceCore
    private let condition = NSCondition()
    private var jobs: [Queued] = []
    private var stopping = false
    private var stopped = false
    /// Called on the worker thread after each committed batch (the event feed looks for new events).
    private let afterBatch: @Sendable (ServiceCore) -> Void

    init(core: ServiceCore, afterBatch: @escaping @Sendable (ServiceCore) -> Void) {
        self.core = core
        self.afterBatch = afterBatch
        startThread(named: "hush-state") { [self] in loop() }
    }

    /// Runs `body` with the core on the worker thread, answered once its batch is committed.
    func perform<T: Sendable>(_ body: @escaping @Sendable (ServiceCore) throws(ServiceCore.Refusal) -> T)
        async throws(ServiceCore.Refusal) -> T
    {
        let result: Result<T, ServiceCore.Refusal> = await withCheckedContinuation { continuation in
            let accepted = enqueue(
                Queued(
                    run: { core in
                        let result = Result { () throws(ServiceCore.Refusal) -> T in try body(core) }
                        return { committed in
                            continuation.resume(
                                returning: committed ? result : .failure(.unavailable("state could not be committed")))
                        }
                    },
                    refuse: { continuation.resume(returning: .failure(.unavailable("state could not be reached"))) }))
            if !accepted { continuation.resume(returning: .failure(.unavailable("the server is stopping"))) }
        }
        return try result.get()
    }

    private func enqueue(_ job: Queued) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return false }
        jobs.append(job)
        condition.signal()
        return true
    }

    /// Runs the jobs already handed in, then stops the thread; returns when it has stopped.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !stopped { condition.wait() }
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty {
                stopped = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            var answers: [@Sendable (Bool) -> Void] = []
            answers.reserveCapacity(batch.count)
            let committed = core.inBatch {
                for job in batch { answers.append(job.run(core)) }
            }
            for answer in answers { answer(committed) }
            // A batch that could not begin ran none of its jobs: each is answered all the same.
            for job in batch.dropFirst(answers.count) { job.refuse() }
            afterBatch(core)
        }
    }
}
