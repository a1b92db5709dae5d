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
            "Threads deciding notifications (default: the machine's cores with --ephemeral, else 1); each user's are decided by one, and the output stays in input order.",
            valueName: "n"))
    var jobs: Int?

    @Argument(help: "The notifications: a file, or - / nothing for stdin.", completion: .file())
    var input: String?

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be 1 or more, got \(jobs)") }
    }

    func run() throws {
        let engine = try policy.engine()
        let context = try ContextFile.load(contextPath, for: engine.policy)
        // One thread (`--jobs 1`, or one core) keeps the path below, which starts no thread. A
        // state file's threads take its write lock in turn and each keeps its own copy of the
        // users it met, so there threads cost memory and gain little: more only when asked for.
        let jobs = self.jobs ?? (state.ephemeral ? ProcessInfo.processInfo.activeProcessorCount : 1)
        if jobs > 1 {
            try ParallelEvaluate(engine: engine, context: context, state: state, explain: explain, jobs: jobs)
                .run(input)
            return
        }
        let store = try state.store()
        let session = try engine.makeSession(storing: store)
        // Read once: a property wrapper's getter is not free on every line.
        let explain = self.explain
        var invalid = 0
        var writer = JSONWriter(capacity: 1024)
        // Decides a notification inside its batch (see AcknowledgedOutput).
        var output = AcknowledgedOutput(store: store) { envelope, number, printed in
            writer.removeAll()
            do {
                let decision = try session.evaluate(envelope, context: context, explain: explain)
                decision.write(to: &writer)
                writer.withUnsafeBytes { printed.append(contentsOf: $0) }
                return true
            } catch {
                printed.append(contentsOf: errorLine(number, "\(error)"))
                return false
            }
        }
        // After each commit, a closed stdout (`| head -1`) stops the run: the batches committed
        // stay whole, and no more input is read or decided.
        let evaluateOne: (Int, Result<Envelope, LineError>) throws -> Void = { number, decoded in
            switch decoded {
            case .success(let envelope):
                output.add(envelope, number: number)
            case .failure(let error):
                invalid += 1
                output.add(errorLine(number, "\(error.reason)"), number: number)
            }
            if output.isFull {
                invalid += output.commit(errorLine: errorLine)
                try Output.stopIfClosed()
            }
        }
        // Before the input may make us wait, what was decided is committed and printed.
        let beforeWaiting = {
            invalid += output.commit(errorLine: errorLine)
            Output.flush()
            try Output.stopIfClosed()
        }
        try InputFile.withLines(input) { lines in
            do {
                try session.forEachEnvelope(in: lines, evaluateOne, beforeReading: beforeWaiting)
            } catch let error as LineStream.ReadError {
                try beforeWaiting()
                Output.error("hush: \(input ?? "stdin"): \(error)")
                throw ExitCode(2)
            }
        }
        invalid += output.commit(errorLine: errorLine)
        Output.flush()
        if invalid > 0 { throw ExitCode(1) }
    }

    private func errorLine(_ number: Int, _ message: String) -> [UInt8] {
        ErrorLine.make(number, message)
    }
}
