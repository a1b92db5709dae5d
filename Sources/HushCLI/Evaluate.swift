import ArgumentParser
import Foundation
import Hush
import HushCore
import HushJSON

struct Evaluate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Decide notifications: one decision per input line, as JSON Lines, in input order.",
        discussion: """
            INPUT is one JSON object or JSON Lines (a file, or stdin when absent or -). An invalid line \
            yields {"line": N, "error": "..."} in its place and the other lines go on.
            Exit status: 0 every line decided; 1 some lines were invalid; 2 the policy could not be \
            loaded or the usage is wrong (nothing is evaluated).
            """)

    @OptionGroup var policy: PolicyOptions

    @Option(
        name: .customLong("context"),
        help: ArgumentHelp(
            "A JSON file with the device's state (now, timezone, focus, locked, ringer, audio); its focus must be one the policy declares.",
            valueName: "file"), completion: .file())
    var contextPath: String?

    @OptionGroup var state: StateOptions

    @Flag(help: "Add a trace of every pipeline step and rule (with file:line) to each decision.")
    var explain = false

    @Option(
        help: ArgumentHelp(
            "Threads deciding notifications (default: the cores hush may run on with --ephemeral, else 1; a SQLite file written behind is decided on one, with reading and committing on others); each user's are decided by one, and the output stays in input order.",
            valueName: "n"))
    var jobs: Int?

    @Argument(help: "The notifications: a file, or - / nothing for stdin.", completion: .file())
    var input: String?

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be 1 or more, got \(jobs)") }
    }

    /// Whether the state is a SQLite file written behind the decisions: not `--ephemeral`, not
    /// PostgreSQL, and not turned off with HUSH_WRITE_BEHIND=0 (the ordinary way; docs/reference.md,
    /// "Write-behind").
    private var writesBehind: Bool {
        !state.ephemeral && !StateOptions.isPostgresURL(StateOptions.location(state.statePath).value)
            && ProcessInfo.processInfo.environment["HUSH_WRITE_BEHIND"] != "0"
    }

    func run() throws {
        let engine = try policy.engine()
        let context = try ContextFile.load(contextPath, for: engine.policy)
        // One thread (`--jobs 1`, or one core) keeps the path below, which starts no thread. A
        // state file's threads take its write lock in turn and each keeps its own copy of the
        // users it met, so there threads cost memory and gain little: more only when asked for.
        // A SQLite file written behind decides on one thread whatever `--jobs` says: its reading
        // and writing threads take the other cores, and N deciding threads, committing in turn,
        // took 2.3 times as long on the benchmark week (docs/reference.md, "Several threads").
        let writesBehind = self.writesBehind
        let jobs = writesBehind ? 1 : self.jobs ?? (state.ephemeral ? AvailableCores.count() : 1)
        if jobs > 1 {
            try ParallelEvaluate(engine: engine, context: context, state: state, explain: explain, jobs: jobs)
                .run(input)
            return
        }
        let store = try state.batchStore()
        let session = try engine.makeSession(storing: store)
        // Read once: a property wrapper's getter is not free on every line.
        let explain = self.explain
        if writesBehind, let file = store as? SQLiteStateStore {
            try evaluateWritingBehind(session: session, store: file, context: context, explain: explain)
            return
        }
        var invalid = 0
        var output = AcknowledgedOutput(store: store)
        try InputFile.withLines(input) { lines in
            do {
                let notifications = try DocumentStream(lines: lines)
                while !notifications.isFinished {
                    if notifications.needsRead {
                        // Before the input may make us wait, what was decided is printed.
                        Output.flush()
                        try Output.stopIfClosed()
                        try notifications.readMore()
                        continue
                    }
                    // The lines in memory, a batch at a time: each decision written into the batch.
                    invalid += output.commit { batch in
                        session.forEachEnvelopeInMemory(of: notifications, limit: batch.room) { number, decoded in
                            Self.decide(number, decoded, session, context, explain, into: &batch)
                        }
                    }
                    // After each commit, a closed stdout (`| head -1`) stops the run: the batches
                    // committed stay whole, and no more input is read or decided.
                    try Output.stopIfClosed()
                }
            } catch let error as LineStream.ReadError {
                try stop(reading: error)
            }
        }
        try finish(session, invalid: invalid)
    }

    /// The input could not be read on: what was printed stays, exit 2.
    private func stop(reading error: LineStream.ReadError) throws -> Never {
        Output.flush()
        try Output.stopIfClosed()
        Output.error("hush: \(input ?? "stdin"): \(error)")
        throw ExitCode(2)
    }

    /// Every line decided and printed: exit 1 when any is an error line.
    private func finish(_ session: Session, invalid: Int) throws {
        Output.flush()
        // The process ends here: what the session holds in memory is left to the exit to reclaim.
        session.keepInMemoryUntilExit()
        if invalid > 0 { throw ExitCode(1) }
    }

    /// Writes the decision of input line `number`, or why it has none, into `batch`.
    private static func decide(
        _ number: Int, _ decoded: consuming Result<Envelope, LineError>, _ session: Session,
        _ context: EvaluationContext, _ explain: Bool, into batch: inout AcknowledgedOutput.Batch
    ) {
        switch consume decoded {
        case .success(let envelope):
            do {
                batch.add(try session.evaluate(consume envelope, context: context, explain: explain), number: number)
            } catch {
                batch.addError("\(error)", number: number)
            }
        case .failure(let error):
            batch.addError("\(error.reason)", number: number)
        }
    }

    /// The same loop over a SQLite file, on three threads: the input is read and decoded a chunk
    /// ahead (`DecodedBatches`), each batch is decided here, and its writes are committed behind
    /// the decisions (`WriteBehindOutput`) while the next is decided.
    private func evaluateWritingBehind(
        session: Session, store: SQLiteStateStore, context: EvaluationContext, explain: Bool
    ) throws {
        var invalid = 0
        var output = try WriteBehindOutput(store: store)
        let decide: WriteBehindOutput.Decide = { item, batch in
            Self.decide(item.number, item.envelope, session, context, explain, into: &batch)
        }
        try InputFile.withLines(input) { lines in
            let batches = DecodedBatches(
                lines: lines, session: session, limit: output.limit, byteLimit: WriteBehindOutput.batchBytes)
            var finished = false
            defer { if !finished { batches.cancel() } }
            reading: while true {
                try output.stopIfClosed()
                switch batches.next() {
                case .chunk(let items, let endsBatch):
                    var ended = endsBatch
                    invalid += try output.submit(
                        items,
                        more: {
                            if ended { return nil }
                            guard case .chunk(let more, let endsBatch) = batches.next() else {
                                preconditionFailure("a batch ends with a chunk")
                            }
                            ended = endsBatch
                            return more
                        }, decide)
                case .inputWaits:
                    // Before the input makes us wait, what was decided is committed and printed
                    // (a file, or a pipe with input ready, does not wait).
                    invalid += try output.drain(decide)
                    Output.flush()
                case .end:
                    break reading
                case .readError(let error):
                    // What was decided before is committed and printed first, as the ordinary way
                    // printed it before reading.
                    finished = true
                    invalid += try output.drain(decide)
                    output.close()
                    try stop(reading: error)
                case .failed(let error):
                    finished = true
                    invalid += try output.drain(decide)
                    output.close()
                    throw error
                }
            }
            finished = true
            invalid += try output.drain(decide)
        }
        output.close()
        try finish(session, invalid: invalid)
    }
}
