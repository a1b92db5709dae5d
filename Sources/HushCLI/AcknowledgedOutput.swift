import HushState
import Hush

/// The lines `hush eval` prints, held back until the state they describe is committed: a printed
/// decision is a promise that the store remembers it (a `kill -9` loses nothing printed). Lines
/// are committed in batches — up to `limit` lines, and whenever the input makes us wait — so a
/// SQLite store pays for one commit per batch, not one per notification.
struct AcknowledgedOutput {
    let store: any StateStore
    let limit: Int
    private var pending: [UInt8] = []
    private var pendingNumbers: [Int] = []
    private var batchOpen = false

    init(store: any StateStore, limit: Int = 1000) {
        self.store = store
        self.limit = limit
        pending.reserveCapacity(1 << 16)
    }

    /// Call before evaluating a line: its writes join the open batch.
    mutating func prepare() {
        guard !batchOpen else { return }
        // When no batch can be opened, each write commits on its own (and reports its own error).
        batchOpen = (try? store.beginBatch()) != nil
    }

    /// Holds `line` (one output line, input line `number`) until its batch commits.
    mutating func add(_ line: [UInt8], number: Int) {
        pending.append(contentsOf: line)
        pending.append(10)
        pendingNumbers.append(number)
    }

    /// Whether the batch is full.
    var isFull: Bool { pendingNumbers.count >= limit }

    /// Commits the batch and prints its lines. When the commit fails, each of its lines is
    /// replaced by an error naming its input line (nothing of the batch was remembered); returns
    /// how many lines that was.
    mutating func commit(errorLine: (Int, String) -> [UInt8]) -> Int {
        var failed = 0
        do {
            if batchOpen {
                batchOpen = false
                try store.commitBatch()
            }
            Output.writeRaw(pending)
        } catch {
            for number in pendingNumbers { Output.write(errorLine(number, "\(error)")) }
            failed = pendingNumbers.count
        }
        pending.removeAll(keepingCapacity: true)
        pendingNumbers.removeAll(keepingCapacity: true)
        return failed
    }
}
