import Foundation
import Hush
import HushCore

/// The input of `hush eval` on a state file, read and decoded into batches on a thread of its own,
/// a chunk (a quarter of a batch) ahead of the deciding (write-behind,
/// `Evaluate.evaluateWritingBehind`). Decoding was about a sixth of what the deciding thread did
/// per line, and the writer thread leaves room for it; a chunk rather than a batch ahead, as a
/// batch's notifications take about 9 MB.
///
/// A batch is filled across reads of the input, up to `limit` lines or `byteLimit` bytes of input:
/// a batch cut at the end of each read could be a few lines, and deciding those leaves nothing to
/// do while the batch before is committed. Before a read that may wait (a pipe or a terminal with
/// nothing to read yet), the batch so far is ended and `next` says the input waits, so that what
/// was decided is committed and printed first.
///
/// `@unchecked Sendable`: the reading thread alone touches `lines` and decodes with `session`
/// (which only counts the ids it makes up for lines without one); everything else is behind
/// `condition`.
final class DecodedBatches: @unchecked Sendable {
    enum Piece {
        /// The next lines of a batch, and whether they end it.
        case chunk([WriteBehindOutput.Item], endsBatch: Bool)
        /// The input is waiting, with no batch ready: what was decided should be printed now.
        case inputWaits
        /// Reading failed after the batches handed out before.
        case readError(LineStream.ReadError)
        /// Something other than a read failed (not expected: the ordinary way would throw it).
        case failed(any Error)
        case end
    }

    private let lines: LineStream
    private let session: Session
    private let limit: Int
    private let byteLimit: Int
    private let condition = NSCondition()
    /// The batch decoded and not taken yet, or how the input ended (under `condition`).
    private var ready: [Piece] = []
    /// Whether the reading thread is in (or about to start) a read that may wait; how many such
    /// reads it started, and up to which one `next` said so.
    private var inputWaits = false
    private var waits = 0
    private var waitsTold = 0
    /// The deciding stopped early: the reading thread hands out nothing more.
    private var cancelled = false

    /// Starts reading `lines` on a thread of its own.
    init(lines: LineStream, session: Session, limit: Int, byteLimit: Int) {
        self.lines = lines
        self.session = session
        self.limit = limit
        self.byteLimit = byteLimit
        startThread(named: "hush-read") { [self] in read() }
    }

    /// The next chunk, or `.inputWaits` once, when the input waits with no chunk ready (never
    /// within a batch); then waits for the input. `.end`, `.readError` or `.failed` comes last,
    /// after a chunk that ends its batch.
    func next() -> Piece {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty {
            if inputWaits && waitsTold != waits {
                waitsTold = waits
                return .inputWaits
            }
            condition.wait()
        }
        let piece = ready.removeFirst()
        condition.signal()
        return piece
    }

    /// The deciding stops before the end (standard output closed, an error): the reading thread
    /// stops at its next batch. A read in progress is left to the exit that follows.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// Hands out `piece` once the one before it was taken; false when cancelled.
    private func handOut(_ piece: Piece) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !ready.isEmpty && !cancelled { condition.wait() }
        if cancelled { return false }
        ready.append(piece)
        condition.broadcast()
        return true
    }

    private func setInputWaits(_ waits: Bool) {
        condition.lock()
        inputWaits = waits
        if waits { self.waits += 1 }
        condition.broadcast()
        condition.unlock()
    }

    private func read() {
        let chunkLines = max(1, limit / 4)
        var items: [WriteBehindOutput.Item] = []
        items.reserveCapacity(chunkLines)
        var batchLines = 0
        var batchStart = 0
        var batchOpen = false
        /// Hands out the lines decoded so far; false when cancelled.
        func handOutChunk(endsBatch: Bool) -> Bool {
            var handed = true
            if !items.isEmpty || (endsBatch && batchOpen) {
                handed = handOut(.chunk(items, endsBatch: endsBatch))
                items = []
                items.reserveCapacity(chunkLines)
                batchOpen = !endsBatch
            }
            if endsBatch { (batchLines, batchStart) = (0, lines.bytesHandedOut) }
            return handed
        }
        do {
            let notifications = try DocumentStream(lines: lines)
            while !notifications.isFinished {
                if notifications.needsRead {
                    if notifications.readMayWait {
                        guard handOutChunk(endsBatch: true) else { return }
                        setInputWaits(true)
                    }
                    try notifications.readMore()
                    setInputWaits(false)
                    continue
                }
                batchLines += session.forEachEnvelopeInMemory(
                    of: notifications, limit: min(limit - batchLines, chunkLines - items.count),
                    byteLimit: byteLimit - (lines.bytesHandedOut - batchStart)
                ) { number, decoded in items.append((number, consume decoded)) }
                if batchLines == limit || lines.bytesHandedOut - batchStart >= byteLimit {
                    guard handOutChunk(endsBatch: true) else { return }
                } else if items.count == chunkLines {
                    guard handOutChunk(endsBatch: false) else { return }
                }
            }
            guard handOutChunk(endsBatch: true) else { return }
            _ = handOut(.end)
        } catch let error as LineStream.ReadError {
            setInputWaits(false)
            guard handOutChunk(endsBatch: true) else { return }
            _ = handOut(.readError(error))
        } catch {
            setInputWaits(false)
            guard handOutChunk(endsBatch: true) else { return }
            _ = handOut(.failed(error))
        }
    }
}
