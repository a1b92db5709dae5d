import Hush
import HushCore
import HushJSON
import HushState

/// The lines `hush eval` prints, held back until the state they describe is committed: a printed
/// decision is a promise that the store remembers it (a `kill -9` loses nothing printed). Lines
/// are decided and committed in batches — up to `limit` lines, and whenever the input makes us
/// wait — so a SQLite store pays for one commit per batch, not one per notification. A batch is a
/// closure (`StateStore.batch`): the lines are read, decided and written inside it, straight into
/// the batch's buffer, and printed after it.
struct AcknowledgedOutput: ~Copyable {
    let store: any StateStore
    private var batch: Batch

    /// The lines of one batch, written as they are decided.
    struct Batch: ~Copyable {
        /// The output lines, each ending in a newline.
        fileprivate var text = JSONWriter(capacity: 1 << 20)
        /// The input line of each, for the errors that replace them when the commit fails.
        fileprivate var numbers: [Int] = []
        /// How many of them are error lines.
        fileprivate var failed = 0
        /// Lines in a batch at most.
        let limit: Int

        init(limit: Int) {
            self.limit = limit
            numbers.reserveCapacity(limit)
        }

        /// How many more lines the batch takes.
        var room: Int { limit - numbers.count }

        /// Writes the decision of input line `number`.
        mutating func add(_ decision: borrowing Decision, number: Int) {
            decision.write(to: &text)
            text.append(10)
            numbers.append(number)
        }

        /// Writes an error line for input line `number`.
        mutating func addError(_ message: String, number: Int) {
            ErrorLine.make(number, message).withUnsafeBytes { text.append($0) }
            text.append(10)
            numbers.append(number)
            failed += 1
        }

        /// Prints the lines; returns how many of them are errors.
        consuming func write() -> Int {
            Output.write(text)
            return failed
        }

        fileprivate mutating func removeAll() {
            text.removeAll()
            numbers.removeAll(keepingCapacity: true)
            failed = 0
        }
    }

    /// Lines in a batch at most.
    var limit: Int { batch.limit }

    init(store: any StateStore, limit: Int = 1000) {
        self.store = store
        batch = Batch(limit: limit)
    }

    /// Calls `decide` inside a batch of the store to write lines into it (at most `room` of them),
    /// commits what they changed and prints them. When the commit fails, each of its lines is
    /// replaced by an error naming its input line (nothing of the batch was remembered). Returns
    /// how many of the lines printed are errors.
    mutating func commit(_ decide: (inout Batch) -> Void) -> Int {
        defer { batch.removeAll() }
        var began = false
        do {
            try store.batch {
                began = true
                decide(&batch)
            }
            Output.write(batch.text)
        } catch  where !began {
            // No batch could be begun: each write commits on its own (and reports its own error).
            decide(&batch)
            Output.write(batch.text)
        } catch {
            for number in batch.numbers { Output.write(ErrorLine.make(number, "\(error)")) }
            return batch.numbers.count
        }
        return batch.failed
    }
}
