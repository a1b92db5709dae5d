import ArgumentParser
import Foundation
import Hush
import HushCore
import HushState

/// `hush eval --jobs N` with N above 1: the stream decided by `ParallelEvaluation`, a chunk of
/// lines at a time, printed as `--jobs 1` prints it. A chunk is printed once every worker has
/// committed its part (each worker has its own connection to the state, or its own memory with
/// `--ephemeral`), and whenever the input may make us wait, as `--jobs 1` does.
struct ParallelEvaluate {
    let engine: Engine
    let context: EvaluationContext
    let state: StateOptions
    let explain: Bool
    let jobs: Int

    func run(_ input: String?) throws {
        var stores: [any StateStore] = []
        for _ in 0..<jobs { stores.append(try state.batchStore()) }
        let evaluation = try ParallelEvaluation(engine: engine, stores: stores, context: context, explain: explain)
        // The process ends after this: what the sessions hold in memory is left to the exit.
        defer { evaluation.stop(keepingMemoryUntilExit: true) }
        var invalid = 0
        let decideChunk = {
            invalid += evaluation.decideChunk { Output.writeRaw($0) }
        }
        // Before the input may make us wait, what was decided is committed and printed.
        let beforeWaiting = {
            decideChunk()
            Output.flush()
            try Output.stopIfClosed()
        }
        try InputFile.withLines(input) { lines in
            do {
                try ParallelEvaluation.forEachInput(
                    in: lines,
                    line: { line, number in
                        evaluation.add(line, number: number)
                        // After each chunk, a closed stdout (`| head -1`) stops the run.
                        if evaluation.isFull {
                            decideChunk()
                            try Output.stopIfClosed()
                        }
                    },
                    document: { evaluation.add($0, number: 1) }, beforeReading: beforeWaiting)
            } catch let error as LineStream.ReadError {
                try beforeWaiting()
                Output.error("hush: \(input ?? "stdin"): \(error)")
                throw ExitCode(2)
            }
        }
        decideChunk()
        Output.flush()
        if invalid > 0 { throw ExitCode(1) }
    }
}
