import ArgumentParser
import Hush
import HushCore
import HushState

/// `hush eval --jobs 1` on a SQLite file: each batch is decided from memory while the batches
/// before it are committed by the store's background writer (`SQLiteStateStore+WriteBehind.swift`),
/// and printed once its commit is done, as `AcknowledgedOutput` prints (a printed decision is a
/// committed one). Two batches may wait for the writer while a third is decided, so that a commit
/// slower than the rest (one that checkpoints the log) does not stop the deciding. When a commit
/// cannot be made as recorded (another process committed meanwhile, or a write failed), that
/// batch and those decided on top of it are decided again the ordinary way
/// (`AcknowledgedOutput`), which undoes a failed write alone and reports it on its line. (A
/// policy's own Lua globals then see those lines twice; docs/reference.md says so.)
struct WriteBehindOutput: ~Copyable {
    typealias Item = (number: Int, envelope: Result<Envelope, LineError>)
    typealias Decide = (_ item: Item, _ batch: inout AcknowledgedOutput.Batch) -> Void

    let store: SQLiteStateStore
    let writer: BackgroundWriter
    private var ordinary: AcknowledgedOutput
    /// The batches submitted to the writer and not printed yet: the older, then the newer.
    private var older: InFlight?
    private var newer: InFlight?
    struct InFlight: ~Copyable {
        var items: [[Item]]
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

    /// Decides a batch (at most `limit` lines: `first`, then each chunk `more` returns until nil)
    /// with `decide` and submits its writes; prints the oldest batch before it once it is
    /// committed, when two are in flight. Returns how many of the lines printed are errors. Throws
    /// `Output.Closed` when standard output is closed: what was decided after the lines printed is
    /// then not printed.
    mutating func submit(_ first: [Item], more: () -> [Item]?, _ decide: Decide) throws -> Int {
        var invalid = 0
        if store.cacheIsFull {
            invalid += try drain(decide)
            store.restartCache()
        }
        var batch = AcknowledgedOutput.Batch(limit: limit)
        let mark = store.retentionMark()
        // Kept (for deciding again) as the chunks came, and each item handed to `decide` where it
        // is: copying each into one list, and out of it for the loop, cost two retains a line.
        var items = [first]
        let log = store.recordingWrites {
            Self.decideEach(first, decide, &batch)
            while let chunk = more() {
                Self.decideEach(chunk, decide, &batch)
                items.append(chunk)
            }
        }
        guard let log else {
            // What is in flight commits (or is decided again) first; then this batch again, from
            // the bookkeeping it was decided from, or as the batches decided again left it.
            let redone = try settleAll(decide, &invalid)
            try again(items, from: redone ? nil : mark, decide, &invalid)
            try resync()
            return invalid
        }
        if newer != nil, try !settleOldest(decide, &invalid) {
            // Decided on top of the batches just decided again: this one too.
            try again(items, from: nil, decide, &invalid)
            try resync()
            return invalid
        }
        writer.submit(log)
        let current = InFlight(items: items, batch: batch, mark: mark)
        if older == nil { older = consume current } else { newer = consume current }
        return invalid
    }

    /// Waits for the batches in flight and prints them (before the input may make us wait, and
    /// at the end). Returns how many of the lines printed are errors.
    mutating func drain(_ decide: Decide) throws -> Int {
        var invalid = 0
        _ = try settleAll(decide, &invalid)
        return invalid
    }

    /// Waits for every batch in flight, printing each as it commits; returns whether they were
    /// decided again instead (one did not commit).
    private mutating func settleAll(_ decide: Decide, _ invalid: inout Int) throws -> Bool {
        while older != nil {
            if try !settleOldest(decide, &invalid) { return true }
        }
        return false
    }

    /// Waits for the oldest batch in flight and prints it once committed, and returns true. When
    /// it did not commit, nothing after it was run either: every batch in flight is decided again
    /// the ordinary way, from the bookkeeping the oldest was decided from, and it returns false.
    private mutating func settleOldest(_ decide: Decide, _ invalid: inout Int) throws -> Bool {
        let oldest = older.take()!
        older = newer.take()
        if case .committed = writer.wait() {
            store.batchCommitted()
            invalid += oldest.batch.write()
            try stopIfClosed()
            return true
        }
        let next = older.take()
        if next != nil { _ = writer.wait() }  // not run
        try again(oldest.items, from: oldest.mark, decide, &invalid)
        if let next { try again(next.items, from: nil, decide, &invalid) }
        try resync()
        return false
    }

    /// Throws `Output.Closed` once standard output is closed, with the writer idle first: the
    /// exit that follows never cuts a commit short (nor leaves the log file behind for it).
    func stopIfClosed() throws {
        guard Output.closed else { return }
        while writer.pendingCount > 0 { _ = writer.wait() }
        throw Output.Closed()
    }

    /// Decides `items` again the ordinary way, from the file, and prints them: in the ordinary
    /// way's batches (a commit that fails turns as many lines into errors as it would have), with
    /// the retention bookkeeping as it was before they were first decided (`mark`; nil: as it is,
    /// when the batch before them was just decided again).
    private mutating func again(
        _ chunks: [[Item]], from mark: RetentionMark?, _ decide: Decide, _ invalid: inout Int
    ) throws {
        let items = chunks.flatMap { $0 }
        store.forgetSpeculation(restoring: mark)
        let size = ordinary.limit
        for start in stride(from: 0, to: items.count, by: size) {
            invalid += ordinary.commit { batch in
                for item in items[start..<min(start + size, items.count)] { decide(item, &batch) }
            }
            try Output.stopIfClosed()
        }
    }

    private static func decideEach(_ items: [Item], _ decide: Decide, _ batch: inout AcknowledgedOutput.Batch) {
        items.withUnsafeBufferPointer { items in
            for i in items.indices { decide(items[i], &batch) }
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
