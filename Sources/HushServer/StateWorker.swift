import Foundation
import Hush

/// The one thread that touches the service's state and interpreters (`ServiceCore`, not
/// thread-safe). Requests hand it jobs; it runs every job waiting at once in ONE batch of the
/// store, commits, and only then answers them: under load many requests share a commit, and no
/// request is answered with something that was not committed (a failed commit answers them all
/// 503).
///
/// On a SQLite file, a batch of jobs that only decide notifications is written behind
/// (`ServiceCore+WriteBehind.swift`): decided from memory while the batches before it commit on
/// the store's writer thread, and answered once its own commit is done. Any other job waits for
/// those batches and runs the ordinary way.
final class StateWorker: @unchecked Sendable {
    /// A job runs on the worker thread and returns how to answer, given whether its batch committed.
    typealias Job = @Sendable (ServiceCore) -> @Sendable (_ committed: Bool) -> Void
    typealias Answer = @Sendable (_ committed: Bool) -> Void
    /// Whether a job may be written behind, asked on the worker thread as its batch begins.
    typealias WritesBehind = @Sendable (ServiceCore) -> Bool
    /// The fewest notifications a batch is written behind for, unless batches are in flight
    /// already. Below it, a commit of its own costs more than it saves: under single-notification
    /// POSTs (batches of a few dozen), writing each batch behind took CPU from the HTTP threads,
    /// 18,000 requests/s against 24,000 in turn, p99 23 ms against 5.
    static let fewestLinesWrittenBehind = 256
    /// A job, and how to answer it when it never ran (its batch could not begin).
    private struct Queued {
        var run: Job
        var refuse: @Sendable () -> Void
        var writesBehind: WritesBehind?
        /// How many notifications it decides.
        var lines: Int
    }

    /// A batch decided and submitted to the writer, not answered yet.
    private struct InFlight {
        var jobs: [Queued]
        var answers: [Answer]
        var speculation: ServiceCore.Speculation
        /// How many notifications it decides.
        var lines: Int
    }

    private let core: ServiceCore
    private let condition = NSCondition()
    private var jobs: [Queued] = []
    private var stopping = false
    private var stopped = false
    /// Called on the worker thread after each committed batch (the event feed looks for new events).
    private let afterBatch: @Sendable (ServiceCore) -> Void
    /// The worker thread's alone: oldest first, at most two (as `hush eval` keeps them).
    private var inFlight: [InFlight] = []
    /// Batches the writer has ended (under `condition`), and those the worker has waited for
    /// (the worker's alone): the oldest in flight has ended when the first is the larger.
    private var commitsEnded = 0
    private var commitsWaited = 0
    /// The store's own connection committed since the writer last took the file's state: it takes
    /// it again before the next batch written behind (not after every ordinary batch, as most
    /// runs of single requests are never written behind).
    private var writerBehindTheFile = false

    init(core: ServiceCore, writeBehind: Bool = true, afterBatch: @escaping @Sendable (ServiceCore) -> Void) {
        self.core = core
        self.afterBatch = afterBatch
        startThread(named: "hush-state") { [self] in loop(writeBehind: writeBehind) }
    }

    /// Runs `body` with the core on the worker thread, answered once its batch is committed.
    /// `writesBehind`: whether its batch may be decided from memory and committed behind (a job
    /// that only decides notifications; see the type's comment); nil, never.
    func perform<T: Sendable>(
        writesBehind: WritesBehind? = nil, lines: Int = 0,
        _ body: @escaping @Sendable (ServiceCore) throws(ServiceCore.Refusal) -> T
    ) async throws(ServiceCore.Refusal) -> T {
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
                    refuse: { continuation.resume(returning: .failure(.unavailable("state could not be reached"))) },
                    writesBehind: writesBehind, lines: lines))
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

    private func loop(writeBehind: Bool) {
        if writeBehind {
            _ = core.startWritingBehind { [self] in
                condition.lock()
                commitsEnded += 1
                condition.signal()
                condition.unlock()
            }
        }
        while true {
            condition.lock()
            // New jobs, or the oldest batch in flight committed, whichever comes first.
            while jobs.isEmpty && !stopping && (inFlight.isEmpty || commitsEnded == commitsWaited) {
                condition.wait()
            }
            // A batch committed is answered first: its clients are waiting (and send the next).
            if !inFlight.isEmpty && (commitsEnded > commitsWaited || jobs.isEmpty) {
                condition.unlock()
                settleOldest()
                continue
            }
            if jobs.isEmpty {
                condition.unlock()
                core.stopWritingBehind()
                condition.lock()
                stopped = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            if core.writesBehind && batch.allSatisfy({ $0.writesBehind?(core) ?? false }) && writesBehind(batch) {
                decideWritingBehind(batch)
            } else {
                settleAll()
                runOrdinary(batch)
            }
        }
    }

    /// Whether a batch that may be written behind is: when batches of notifications are in flight
    /// already, when it is large enough to be worth a commit of its own, or when it decides
    /// nothing (a tick with nothing due, which then neither waits for the batches in flight nor
    /// takes a transaction of the store's own connection).
    private func writesBehind(_ batch: [Queued]) -> Bool {
        let lines = Self.lines(of: batch)
        return lines == 0 || lines >= Self.fewestLinesWrittenBehind || inFlight.contains { $0.lines > 0 }
    }

    private static func lines(of batch: [Queued]) -> Int { batch.reduce(0) { $0 + $1.lines } }

    /// Decides `batch` from memory and submits its writes (two batches in flight: the oldest is
    /// answered first); when it cannot be, it is decided the ordinary way.
    private func decideWritingBehind(_ batch: [Queued]) {
        if core.cacheIsFull {
            settleAll()
            core.restartCache()
        }
        // After any settling above: a batch decided again there committed on the store's own
        // connection, and the writer must not take the file's state with a log pending.
        if writerBehindTheFile {
            writerBehindTheFile = false
            core.resyncWriter()
            guard core.writesBehind else { return runOrdinary(batch) }
        }
        var answers: [Answer] = []
        answers.reserveCapacity(batch.count)
        let recorded = core.recordBatch {
            for job in batch { answers.append(job.run(core)) }
        }
        guard recorded.isRecorded else {
            // What is in flight commits (or is decided again) first; then this batch, from the
            // bookkeeping it was decided from, or as the batches decided again left it.
            let redone = !settleAll()
            decideAgain([batch], [recorded.speculation], restoringRetention: !redone)
            return
        }
        if inFlight.count >= 2, !settleOldest() {
            // Decided on top of the batches just decided again: this one too.
            decideAgain([batch], [recorded.speculation], restoringRetention: false)
            return
        }
        core.submit(recorded)
        inFlight.append(
            InFlight(jobs: batch, answers: answers, speculation: recorded.speculation, lines: Self.lines(of: batch)))
    }

    /// Waits for every batch in flight, answering each as it commits; false when they were
    /// decided again instead (one did not commit).
    @discardableResult
    private func settleAll() -> Bool {
        while !inFlight.isEmpty {
            if !settleOldest() { return false }
        }
        return true
    }

    /// Waits for the oldest batch in flight and answers it once committed: true. When it did not
    /// commit, nothing after it ran either: every batch in flight is decided again the ordinary
    /// way, and it returns false.
    @discardableResult
    private func settleOldest() -> Bool {
        let oldest = inFlight.removeFirst()
        if waitForOldest() {
            for answer in oldest.answers { answer(true) }
            afterBatch(core)
            return true
        }
        let rest = inFlight
        inFlight.removeAll()
        for _ in rest { _ = waitForOldest() }  // not run
        decideAgain(
            [oldest.jobs] + rest.map(\.jobs), [oldest.speculation] + rest.map(\.speculation), restoringRetention: true)
        return false
    }

    private func waitForOldest() -> Bool {
        commitsWaited += 1
        return core.waitForOldest()
    }

    /// Decides batches again the ordinary way, from the file (nothing is in flight): what memory
    /// learnt from them first is forgotten.
    private func decideAgain(
        _ batches: [[Queued]], _ speculations: [ServiceCore.Speculation], restoringRetention: Bool
    ) {
        core.forget(speculations, restoringRetention: restoringRetention)
        for batch in batches { runOrdinary(batch) }
    }

    /// Runs `batch` in one batch of the store on its own connection, and answers it.
    private func runOrdinary(_ batch: [Queued]) {
        var answers: [Answer] = []
        answers.reserveCapacity(batch.count)
        let committed = core.inBatch {
            for job in batch { answers.append(job.run(core)) }
        }
        // The writer takes the file as this commit (or its failure) left it, when next needed.
        writerBehindTheFile = core.writesBehind
        for answer in answers { answer(committed) }
        // A batch that could not begin ran none of its jobs: each is answered all the same.
        for job in batch.dropFirst(answers.count) { job.refuse() }
        afterBatch(core)
    }
}
