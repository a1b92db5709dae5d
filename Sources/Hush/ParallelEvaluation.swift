import Foundation
package import HushCore
package import HushJSON
package import HushState

/// `hush eval --jobs N`: the lines of a stream decided on N threads, printed in input order, as
/// one thread would print them. Input comes in chunks of lines; each chunk goes through two
/// rounds on the workers. Round one decodes: worker k parses and decodes the k-th slice of the
/// chunk's lines (decoding is a fifth of a line's cost, so it is shared too). Round two decides:
/// worker k decides the notifications of the users a stable hash gives it, in input order, with its
/// own `Session` and store, in one `StateStore.batch` per chunk. A user's notifications are thus
/// always decided by the same worker, one after another, as one thread would; the workers' users
/// are disjoint, so their states never meet. The caller prints a chunk once every worker has
/// committed its part: a printed decision is still a committed one.
package final class ParallelEvaluation: @unchecked Sendable {
    /// One worker: its thread, session and store, and the bytes it decided in the current chunk.
    /// Touched by its thread during a round and by the caller's thread between rounds only (the
    /// semaphores order the two).
    private final class Worker: @unchecked Sendable {
        let session: Session
        var writer = JSONWriter(capacity: 1 << 16)
        /// How many of its lines in the current chunk are error lines (not decided, not committed).
        var failed = 0
        /// The chunk's lines it decides, by index, in input order.
        var mine: [Int] = []

        init(session: Session) { self.session = session }
    }

    /// What became of one line of the chunk.
    private enum Slot {
        /// Refused before deciding (not JSON, a bad field), or its decision failed: its error line.
        case errorLine([UInt8])
        /// Decoded: its envelope (in `envelopes`) for `worker` to decide. `generated` is the run's
        /// count of generated ids at this line when it has no id of its own (0 otherwise).
        case toDecide(worker: Int, generated: Int)
        /// Decided: its line is `range` of `worker`'s bytes.
        case decided(worker: Int, range: Range<Int>)
    }

    /// A line of the chunk: where its bytes are in `bytes`, or the document already parsed (one
    /// object over several lines).
    private struct Line {
        var start: Int
        var end: Int
        var number: Int
        var document: JSONValue?
    }

    private struct Chunk {
        var bytes: [UInt8] = []
        var lines: [Line] = []

        mutating func add(_ line: UnsafeRawBufferPointer, number: Int) {
            let start = bytes.count
            bytes.append(contentsOf: line)
            lines.append(Line(start: start, end: bytes.count, number: number))
        }

        mutating func removeAll() {
            bytes.removeAll(keepingCapacity: true)
            lines.removeAll(keepingCapacity: true)
        }
    }

    /// Emptied by `stop`, so the sessions and stores are let go (a SQLite store closes, which
    /// checkpoints its log into the file) before the caller returns.
    private var workers: [Worker]
    /// Each worker's signal to run a round (apart from `workers`: the threads hold no worker).
    private let gates: [DispatchSemaphore]
    private let context: EvaluationContext
    private let explain: Bool
    /// Lines in a chunk at most.
    package let limit: Int
    /// The chunk: its lines' bytes, one after another, and where each line is. One property, so
    /// that adding a line checks one access to it (the class's properties are checked as they run).
    private var chunk = Chunk()
    /// The chunk's output lines, in input order.
    private var output = JSONWriter(capacity: 1 << 20)
    private let slots: UnsafeMutableBufferPointer<Slot>
    /// The envelope of each slot `toDecide`, by index (memory left uninitialized otherwise): kept
    /// apart from the slots so that it is moved in and out, never copied.
    private let envelopes: UnsafeMutablePointer<Envelope>
    /// Whether a line's decoding took a generated id (counted even when the line was refused
    /// after, as `Session` counts: ids stay those one thread would give).
    private let tookID: UnsafeMutableBufferPointer<Bool>
    private var generatedIDs = 0
    private let runPrefix = String(UInt32.random(in: .min ... .max), radix: 16)
    /// What the workers run in the current round, with their index.
    private var round: (Int) -> Void = { _ in }
    private let done = DispatchSemaphore(value: 0)
    private var stopping = false

    /// One worker per store, with a session on it made from `engine`; each store must be the
    /// worker's own (its own connection, or its own memory).
    package init(
        engine: Engine, stores: [any StateStore], context: EvaluationContext, explain: Bool, limit: Int = 4096
    ) throws(HushError) {
        precondition(!stores.isEmpty)
        var workers: [Worker] = []
        for store in stores { workers.append(Worker(session: try engine.makeSession(storing: store))) }
        self.workers = workers
        gates = workers.map { _ in DispatchSemaphore(value: 0) }
        self.context = context
        self.explain = explain
        self.limit = max(1, limit)
        slots = .allocate(capacity: self.limit)
        slots.initialize(repeating: .errorLine([]))
        envelopes = .allocate(capacity: self.limit)
        tookID = .allocate(capacity: self.limit)
        tookID.initialize(repeating: false)
        chunk.lines.reserveCapacity(self.limit)
        for index in workers.indices {
            startThread(named: "hush-eval-\(index)") { [self] in loop(index) }
        }
    }

    deinit {
        // No slot is left `toDecide` between chunks: no envelope is left to deinitialize.
        slots.deinitialize().deallocate()
        envelopes.deallocate()
        tookID.deallocate()
    }

    /// Ends the workers' threads; call once, when the input is done with. A process about to exit
    /// keeps what the sessions hold in memory (`Session.keepInMemoryUntilExit`); their stores with
    /// a file are closed all the same.
    package func stop(keepingMemoryUntilExit: Bool = false) {
        stopping = true
        for gate in gates { gate.signal() }
        for _ in gates { done.wait() }
        if keepingMemoryUntilExit {
            for worker in workers { worker.session.keepInMemoryUntilExit() }
        }
        workers = []
    }

    /// The worker of `user` among `count`: FNV-1a of its UTF-8, the same in every run (Swift's
    /// `Hasher` is seeded per process).
    package static func worker(of user: String, among count: Int) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in user.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return Int(hash % UInt64(count))
    }

    /// Whether the chunk holds `limit` lines.
    package var isFull: Bool { chunk.lines.count >= limit }

    /// Adds input line `number` (its bytes, without the line ending) to the chunk.
    package func add(_ line: UnsafeRawBufferPointer, number: Int) {
        chunk.add(line, number: number)
    }

    /// Adds a whole document already parsed, as input line `number`, to the chunk.
    package func add(_ document: JSONValue, number: Int) {
        chunk.lines.append(Line(start: chunk.bytes.count, end: chunk.bytes.count, number: number, document: document))
    }

    /// Decides the chunk and empties it: hands `print` its output lines, in input order (each ending
    /// in a newline), and returns how many of them are error lines. When a worker's batch cannot be
    /// committed, each of its lines becomes an error naming its input line (nothing of them was
    /// remembered).
    package func decideChunk(print: (_ lines: UnsafeRawBufferPointer) -> Void) -> Int {
        guard !chunk.lines.isEmpty else { return 0 }
        let count = chunk.lines.count
        run { index in self.decode(slice: index) }
        var failed = 0
        // Each worker is handed its lines: in round two it reads no slot but its own, which the
        // others write meanwhile.
        for i in 0..<count {
            if tookID[i] { generatedIDs += 1 }
            switch slots[i] {
            case .toDecide(let worker, _):
                if tookID[i] { slots[i] = .toDecide(worker: worker, generated: generatedIDs) }
                workers[worker].mine.append(i)
            case .errorLine: failed += 1
            case .decided: preconditionFailure("a line was decided before its round")
            }
        }
        run { index in self.decide(worker: index) }
        collectOutput(count: count, into: &output)
        output.withUnsafeBytes(print)
        for worker in workers {
            failed += worker.failed
            worker.failed = 0
            worker.mine.removeAll(keepingCapacity: true)
            worker.writer.removeAll()
        }
        chunk.removeAll()
        return failed
    }

    /// The chunk's `count` output lines in input order, copied once from where they were written.
    private func collectOutput(count: Int, into output: inout JSONWriter) {
        output.removeAll()
        for i in 0..<count {
            switch slots[i] {
            case .errorLine(let line): line.withUnsafeBytes { output.append($0) }
            case .decided(let worker, let range):
                workers[worker].writer.withUnsafeBytes { output.append(UnsafeRawBufferPointer(rebasing: $0[range])) }
            case .toDecide: preconditionFailure("a line was left undecided")
            }
            output.append(10)
            slots[i] = .errorLine([])
        }
    }

    /// Runs `body` on every worker at once and returns when all are done.
    private func run(_ body: @escaping (Int) -> Void) {
        round = body
        for gate in gates { gate.signal() }
        for _ in gates { done.wait() }
    }

    private func loop(_ index: Int) {
        while true {
            gates[index].wait()
            if stopping {
                done.signal()
                return
            }
            round(index)
            done.signal()
        }
    }

    /// Round one: parses and decodes the worker's slice of the chunk, as `Session` decodes a line.
    private func decode(slice index: Int) {
        let lines = chunk.lines
        let count = lines.count
        let range = count * index / workers.count..<count * (index + 1) / workers.count
        chunk.bytes.withUnsafeBytes { raw in
            for i in range {
                let line = lines[i]
                var took = false
                func placeholder() -> String {
                    took = true
                    return ""
                }
                let json: JSONValue
                if let document = line.document {
                    json = document
                } else {
                    let bytes = UnsafeRawBufferPointer(rebasing: raw[line.start..<line.end])
                    // Straight from the bytes when the fast reader can vouch for the line, as
                    // `Session` reads one.
                    if let envelope = Envelope.read(line: bytes, fallbackID: placeholder) {
                        let worker = Self.worker(of: envelope.user, among: workers.count)
                        (envelopes + i).initialize(to: envelope)
                        slots[i] = .toDecide(worker: worker, generated: 0)
                        tookID[i] = took
                        continue
                    }
                    switch StreamInput.parse(bytes) {
                    case .success(let value): json = value
                    case .failure(let error):
                        tookID[i] = false
                        slots[i] = .errorLine(
                            ErrorLine.make(line.number, "\(LineError(line: line.number, error).reason)"))
                        continue
                    }
                }
                do {
                    // A document over several lines has no one line's length: measured in full.
                    let envelope = try Envelope.decode(
                        json, fallbackID: placeholder(),
                        sourceByteCount: line.document == nil ? line.end - line.start : nil)
                    let worker = Self.worker(of: envelope.user, among: workers.count)
                    (envelopes + i).initialize(to: envelope)
                    slots[i] = .toDecide(worker: worker, generated: 0)
                } catch {
                    slots[i] = .errorLine(ErrorLine.make(line.number, "\(error)"))
                }
                tookID[i] = took
            }
        }
    }

    /// Round two: decides the worker's notifications of the chunk in one batch of its store.
    private func decide(worker index: Int) {
        let worker = workers[index]
        let store = worker.session.store
        var began = false
        do {
            try store.batch {
                began = true
                decideAll(worker: index)
            }
        } catch  where !began {
            // No batch could be begun: each write commits on its own (and reports its own error).
            decideAll(worker: index)
        } catch {
            for i in worker.mine { slots[i] = .errorLine(ErrorLine.make(chunk.lines[i].number, "\(error)")) }
            worker.failed = worker.mine.count
        }
    }

    private func decideAll(worker index: Int) {
        let worker = workers[index]
        decideAll(worker: index, writingTo: &worker.writer)
    }

    /// The worker's lines, each decision written into `writer` (the worker's, taken once).
    private func decideAll(worker index: Int, writingTo writer: inout JSONWriter) {
        let worker = workers[index]
        for i in worker.mine {
            guard case .toDecide(_, let generated) = slots[i] else {
                preconditionFailure("a line of the worker was not to decide")
            }
            // Moved out, not copied.
            let envelope = (envelopes + i).move()
            let start = writer.count
            do {
                let decision = try worker.session.evaluate(
                    identified(envelope, generated: generated), context: context, explain: explain)
                decision.write(to: &writer)
                slots[i] = .decided(worker: index, range: start..<writer.count)
            } catch {
                slots[i] = .errorLine(ErrorLine.make(chunk.lines[i].number, "\(error)"))
                worker.failed += 1
            }
        }
    }

    /// `envelope` with the id generated for it (`generated` > 0) when it came without one.
    private func identified(_ envelope: consuming Envelope, generated: Int) -> Envelope {
        if generated > 0 {
            envelope.id = "hush-\(runPrefix)-\(generated)"
            envelope.collapseKey = envelope.id
        }
        return envelope
    }
}

extension ParallelEvaluation {
    /// Hands out `input` as `StreamInput.forEachDocument` reads it — JSON Lines, or one object over
    /// several lines — but unparsed: `line` gets each line's bytes (valid only during the call)
    /// and number, `document` the one object of an input that is one document over several lines.
    package static func forEachInput(
        in input: LineStream,
        line: (_ line: UnsafeRawBufferPointer, _ number: Int) throws -> Void,
        document: (_ document: JSONValue) throws -> Void,
        beforeReading: () throws -> Void = {}
    ) throws {
        guard let firstLine = try input.peekFirstLine() else { return }
        let first = LineStream.isBlank(firstLine) ? nil : firstLine.withUnsafeBytes(StreamInput.parse)
        guard StreamInput.mayBeginDocument(first, length: firstLine.count) else {
            try input.forEachLine(line, beforeReading: beforeReading)
            return
        }
        if let whole = try input.withRestReadToEnd(StreamInput.singleDocument) {
            try document(whole)
        } else {
            try input.forEachLine(line)
        }
    }
}
