import Hush
import HushState

/// The lines `hush eval` prints, held back until the state they describe is committed: a printed
/// decision is a promise that the store remembers it (a `kill -9` loses nothing printed). Lines
/// are decided and committed in batches — up to `limit` lines, and whenever the input makes us
/// wait — so a SQLite store pays for one commit per batch, not one per notification. A batch is a
/// closure (`StateStore.batch`) and the input comes a line at a time, so a line is decoded when
/// added, and decided inside its batch, at the commit.
struct AcknowledgedOutput {
    /// Decides the notification of input line `number` (inside the batch) and appends its output
    /// line, a decision or an error line, to `printed`; returns false for an error line.
    typealias Decide = (_ envelope: Envelope, _ number: Int, _ printed: inout [UInt8]) -> Bool

    let store: any StateStore
    let limit: Int
    let decide: Decide
    private var pending: [PendingLine] = []
    /// The bytes of the batch being printed, kept to reuse their capacity.
    private var printed: [UInt8] = []

    private enum PendingLine {
        case toDecide(Envelope, number: Int)
        /// An error line already (the input line was not a notification).
        case decided([UInt8], number: Int)

        var number: Int {
            switch self {
            case .toDecide(_, let number), .decided(_, let number): number
            }
        }
    }

    init(store: any StateStore, limit: Int = 1000, decide: @escaping Decide) {
        self.store = store
        self.limit = limit
        self.decide = decide
        pending.reserveCapacity(limit)
        printed.reserveCapacity(1 << 16)
    }

    /// Holds the notification of input line `number` for its batch.
    mutating func add(_ envelope: Envelope, number: Int) {
        pending.append(.toDecide(envelope, number: number))
    }

    /// Holds `line`, an output line decided already, in its place among the batch's.
    mutating func add(_ line: [UInt8], number: Int) {
        pending.append(.decided(line, number: number))
    }

    /// Whether the batch is full.
    var isFull: Bool { pending.count >= limit }

    /// Decides the batch's notifications, commits what they changed and prints the batch's lines.
    /// When the commit fails, each of its lines is replaced by an error naming its input line
    /// (nothing of the batch was remembered). Returns how many of the lines printed are errors
    /// because their notification could not be decided or committed.
    mutating func commit(errorLine: (Int, String) -> [UInt8]) -> Int {
        guard !pending.isEmpty else { return 0 }
        // Taken out of `printed` for the batch: `decideAll` reads the rest of self meanwhile.
        var output: [UInt8] = []
        swap(&output, &printed)
        defer {
            output.removeAll(keepingCapacity: true)
            swap(&output, &printed)
        }
        var failed = 0
        var began = false
        do {
            try store.batch {
                began = true
                failed = decideAll(into: &output)
            }
            Output.writeRaw(output)
        } catch  where !began {
            // No batch could be begun: each write commits on its own (and reports its own error).
            failed = decideAll(into: &output)
            Output.writeRaw(output)
        } catch {
            for line in pending { Output.write(errorLine(line.number, "\(error)")) }
            failed = pending.count
        }
        pending.removeAll(keepingCapacity: true)
        return failed
    }

    /// Appends every pending line to `output`, deciding those to decide; returns how many of them
    /// were decided as errors.
    private func decideAll(into output: inout [UInt8]) -> Int {
        var failed = 0
        for line in pending {
            switch line {
            case .toDecide(let envelope, let number):
                if !decide(envelope, number, &output) { failed += 1 }
            case .decided(let bytes, _):
                output.append(contentsOf: bytes)
            }
            output.append(10)
        }
        return failed
    }
}
