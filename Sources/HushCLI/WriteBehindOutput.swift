import ArgumentParser
import Hush
import HushCore
import HushState

/// `hush eval` on a SQLite file, one thread: each batch is decided from memory while the batch
/// before it is committed by the store's background writer (`SQLiteStateStore+WriteBehind.swift`),
/// and printed once that commit is done, as `AcknowledgedOutput` prints (a printed decision is a
/// committed one). When a commit cannot be made as recorded (another process committed meanwhile,
/// or a write failed), that batch and the one decided on top of it are decided again the ordinary
/// way (`AcknowledgedOutput`), which undoes a failed write alone and reports it on its line. (A
/// policy's own Lua globals then see those lines twice; docs/reference.md says so.)
struct WriteBehindOutput: ~Copyable {
    typealias Item = (number: Int, envelope: Result<Envelope, LineError>)
    typealias Decide = (_ item: Item, _ batch: inout AcknowledgedOutput.Batch) -> Void

    let store: SQLiteStateStore
    let writer: BackgroundWriter
    private var ordinary: AcknowledgedOutput
    /// The batch submitted to the writer and not printed yet.
    private var inFlight: InFlight?
    struct InFlight: ~Copyable {
        var items: [Item]
        var batch: AcknowledgedOutput.Batch
        /// The retention bookkeeping before it was decided.
        var mark: RetentionMark
    }
    let limit: Int

    /// Lines in a batch at most. Larger than the ordinary way's 1,000: a larger batch rewrites
    /// fewer pages per line (each commit writes again the last page of each user's rows).
    static let batchLines = 4_000
    /// Bytes of input in a batch at most (a line is never cut): 1.5 MiB, about 3,050 lines of the
    /// 200,000-line benchmark week, so that what a batch holds in memory stays bounded whatever
    /// the length of its lines. Batches of 2,000 lines of that week wrote 148,135 pages of log,
    /// batches of 3,050 lines 109,198 (schema v5), and ran about 5% faster for 4 MB more peak RSS.
    static let batchBytes = 3 << 19

    init(store: SQLiteStateStore, limit: Int = batchLines) throws {
        let writer: BackgroundWriter
        do {
            // The writer takes the file's state as it is now, then the store drops the users
            // others changed before that (as `resync`).
            writer = try store.makeBackgroundWriter()
            try store.dropUsersOthersChanged()
        } catch {
            Output.error("hush: \(error)")
            throw ExitCode(2)
        }
        self.store = store
        self.limit = limit
        self.writer = writer
        ordinary = AcknowledgedOutput(store: store)
    }

    /// Decides `items` (at most `limit`) with `decide` and submits their writes; prints the batch
    /// before them once it is committed. Returns how many of the lines printed are errors. Throws
    /// `Output.Closed` when standard output is closed: what was decided after the lines printed
    /// is then never committed.
    mutating func submit(_ items: [Item], _ decide: Decide) throws -> Int {
        var invalid = 0
        if store.cacheIsFull {
            invalid += try drain(decide)
            store.restartCache()
        }
        var batch = AcknowledgedOutput.Batch(limit: limit)
        let mark = store.retentionMark()
        let log = store.recordingWrites {
            for item in items { decide(item, &batch) }
        }
        if let previous = inFlight.take() {
            if case .committed = writer.wait() {
                invalid += previous.batch.write()
            } else {
                // This batch was decided on top of the one that did not commit: both again.
                try again(previous.items, from: previous.mark, decide, &invalid)
                try again(items, from: nil, decide, &invalid)
                try resync()
                return invalid
            }
            try Output.stopIfClosed()
        }
        guard let log else {
            try again(items, from: mark, decide, &invalid)
            try resync()
            return invalid
        }
        writer.submit(log)
        inFlight = InFlight(items: items, batch: batch, mark: mark)
        return invalid
    }

    /// Waits for the batch in flight and prints it (before the input may make us wait, and at the
    /// end). Returns how many of the lines printed are errors.
    mutating func drain(_ decide: Decide) throws -> Int {
        guard let previous = inFlight.take() else { return 0 }
        if case .committed = writer.wait() {
            store.forgetPendingRows()
            return previous.batch.write()
        }
        var invalid = 0
        try again(previous.items, from: previous.mark, decide, &invalid)
        try resync()
        return invalid
    }

    /// Decides `items` again the ordinary way, from the file, and prints them: in the ordinary
    /// way's batches (a commit that fails turns as many lines into errors as it would have), with
    /// the retention bookkeeping as it was before they were first decided (`mark`; nil: as it is,
    /// when the batch before them was just decided again).
    private mutating func again(_ items: [Item], from mark: RetentionMark?, _ decide: Decide, _ invalid: inout Int)
        throws
    {
        store.forgetSpeculation(restoring: mark)
        let size = ordinary.limit
        for start in stride(from: 0, to: items.count, by: size) {
            invalid += ordinary.commit { batch in
                for item in items[start..<min(start + size, items.count)] { decide(item, &batch) }
            }
            try Output.stopIfClosed()
        }
    }

    /// Once everything is drained: the writer's connection is closed before the store's, so that
    /// the store's checkpoints the log and deletes it (`BackgroundWriter.close`).
    func close() {
        writer.close()
    }

    /// After the store's own connection committed (or at the start): the writer takes the file's
    /// state as it is now, then the store drops the users others changed before that.
    private func resync() throws {
        do {
            try writer.rebaseline()
            try store.dropUsersOthersChanged()
        } catch {
            Output.error("hush: \(error)")
            throw ExitCode(2)
        }
    }
}
