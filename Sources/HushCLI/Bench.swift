import ArgumentParser
import Foundation
import Hush
import HushCore
import HushJSON
import HushPolicy

/// `hush bench`: how fast the user's own policy decides, like `opa bench`. The project's benchmark
/// (several cores, memory over millions of evaluations, the anchors) is the package in Benchmarks/,
/// run by scripts/bench.sh.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Time a policy on a stream: policy load time, decisions/s and latency.",
        discussion: """
            STREAM is read as hush eval reads INPUT and decoded before timing starts: the figures are \
            the library's Session.evaluate alone (rules, decision, state in memory, fresh for each \
            pass), on one core. A release build (swift build -c release) is several times faster \
            than a debug one.
            """)

    @OptionGroup var policy: PolicyOptions

    @Option(
        name: .customLong("context"),
        help: ArgumentHelp(
            "A JSON file with the device's state; its focus must be one the policy declares.", valueName: "file"),
        completion: .file())
    var contextPath: String?

    @Option(help: "Passes over the stream, each with fresh state; the fastest counts.")
    var passes = 3

    @Argument(help: "The notifications: a file, or - for stdin.", completion: .file())
    var stream: String

    func validate() throws {
        if passes < 1 { throw ValidationError("--passes must be 1 or more") }
    }

    func run() throws {
        let sources = try policy.sources()
        let engine = try PolicyOptions.engine(sources: sources)
        let context = try ContextFile.load(contextPath, for: engine.policy)
        let envelopes = try decodeStream(with: engine.makeSession())

        // Loading: the policy read, validated and prepared (the files are read once, before).
        var loadTimes: [Double] = []
        for _ in 0..<25 {
            let start = Stopwatch.wall()
            _ = try PolicyOptions.engine(sources: sources)
            loadTimes.append(Stopwatch.wall() - start)
        }

        // Deciding: the fastest pass by CPU time (on a shared machine the slow passes are the ones
        // something else ran beside); latency from that pass's evaluations, each timed.
        var best: (cpu: Double, latencies: [UInt64])?
        for _ in 0..<passes {
            let session = try engine.makeSession()
            var latencies = [UInt64](repeating: 0, count: envelopes.count)
            let cpuStart = Stopwatch.threadCPU()
            for (i, envelope) in envelopes.enumerated() {
                let start = Stopwatch.monotonicNanoseconds()
                _ = try session.evaluate(envelope, context: context)
                latencies[i] = Stopwatch.monotonicNanoseconds() - start
            }
            let cpu = Stopwatch.threadCPU() - cpuStart
            if best == nil || cpu < best!.cpu { best = (cpu, latencies) }
        }
        let latencies = best!.latencies.sorted()
        func microseconds(atQuantile q: Double) -> Double {
            Double(latencies[min(latencies.count - 1, Int(Double(latencies.count) * q))]) / 1e3
        }

        let users = Set(envelopes.map(\.user)).count
        Output.line(
            "hush bench: \(envelopes.count) notification\(envelopes.count == 1 ? "" : "s") of \(users) user\(users == 1 ? "" : "s") (\(stream)), best of \(passes) pass\(passes == 1 ? "" : "es")"
        )
        Output.line(String(format: "policy load            %.2f ms", loadTimes.sorted()[loadTimes.count / 2] * 1e3))
        Output.line(String(format: "decisions/s (CPU time) %.0f", Double(envelopes.count) / best!.cpu))
        Output.line(
            String(
                format: "latency p50 / p99      %.1f / %.1f µs", microseconds(atQuantile: 0.5),
                microseconds(atQuantile: 0.99)))
    }

    /// Every notification of STREAM; a line that is not one stops the bench (exit 2).
    private func decodeStream(with session: Session) throws -> [Envelope] {
        var envelopes: [Envelope] = []
        try InputFile.withLines(stream) { lines in
            try session.forEachEnvelope(in: lines) { _, decoded in
                switch decoded {
                case .success(let envelope):
                    envelopes.append(envelope)
                case .failure(let error):
                    Output.error("hush bench: \(stream):\(error.line): \(error.reason)")
                    throw ExitCode(2)
                }
            }
        }
        guard !envelopes.isEmpty else {
            Output.error("hush bench: \(stream) has no notifications")
            throw ExitCode(2)
        }
        return envelopes
    }
}

/// Clocks for timing.
enum Stopwatch {
    /// Seconds on the monotonic clock.
    static func wall() -> Double {
        Double(monotonicNanoseconds()) / 1e9
    }

    static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Seconds of CPU time this thread used.
    static func threadCPU() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
