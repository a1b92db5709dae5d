import ArgumentParser
import Foundation
import Hush

/// What the library does per second, per core and in memory, on a realistic stream
/// (Benchmarks/generate.py) and policy (Benchmarks/standard.lua). scripts/bench.sh runs it with the
/// end-to-end and anchor measurements around it, and reads the figures from `--report`.
@main
struct HushBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hush-benchmark",
        abstract:
            "Measure the library: decisions/s and latency on one core and on several, memory over many evaluations, policy load time.",
        discussion: """
            STREAM is JSON Lines (Benchmarks/generate.py). Every line is decoded before timing starts: \
            the figures are the library's Session.evaluate alone (decisions, state, rules), one session \
            per thread. Rates are given by wall-clock time and by the CPU time of the measuring \
            threads (steadier on a shared machine). Run `bash scripts/bench.sh` for the whole set.
            """)

    @Option(help: ArgumentHelp("The policy.", valueName: "file"))
    var policy = "Benchmarks/standard.lua"

    @Option(
        help: ArgumentHelp(
            "The device context (JSON). Default: Benchmarks/context.json if present, else Europe/Berlin, locked.",
            valueName: "file"))
    var context: String?

    @Option(help: "Passes over the stream for the one-core figure (each with fresh state; the best counts).")
    var passes = 3

    @Option(help: "Threads for the multi-core figure (one session and store each, users split between them).")
    var threads = 2

    @Option(help: "Evaluations for the memory run (the stream replayed week after week on one session).")
    var evaluations = 2_000_000

    @Option(help: ArgumentHelp("Also write the figures as key=value lines to this file.", valueName: "file"))
    var report: String?

    @Flag(help: "Only one pass on one core, nothing else: for profiling (valgrind --tool=callgrind).")
    var profile = false

    @Flag(
        help:
            "Only one pass, the stream read a chunk at a time (nothing decoded ahead): for the library's peak RSS on the stream (peak_rss_mb in --report)."
    )
    var streaming = false

    @Argument(help: "The notifications (JSON Lines).")
    var stream: String

    func run() throws {
        let policyText = try String(decoding: BenchInput.read(policy), as: UTF8.self)
        let context = try BenchInput.context(path: context)
        if streaming {
            let engine = try Engine(policy: policyText, name: policy)
            let run = try Streaming.run(engine: engine, path: stream, context: context)
            var figures = Figures()
            figures["streaming_notifications"] = Double(run.count)
            figures["streaming_cpu_per_s"] = run.cpuRate
            figures["streaming_wall_per_s"] = run.wallRate
            figures["peak_rss_mb"] = Memory.peakBytes() / 1e6
            print(
                String(
                    format: "%d decisions, read a chunk at a time: %.0f decisions/s (CPU), peak RSS %.1f MB",
                    run.count, run.cpuRate, Memory.peakBytes() / 1e6))
            if let report { try figures.keyValues.write(toFile: report, atomically: true, encoding: .utf8) }
            return
        }
        let bytes = try BenchInput.read(stream)
        if profile {
            let engine = try Engine(policy: policyText, name: policy)
            let envelopes = try BenchInput.envelopes(of: bytes, named: stream, session: engine.makeSession())
            let run = try Runs.evaluate(engine: engine, envelopes: envelopes, context: context, shiftWeeks: 0)
            print(String(format: "%d decisions: %.0f decisions/s (CPU)", run.count, run.cpuRate))
            return
        }
        var figures = Figures()

        // (5) policy load time: Engine (the policy read, validated and prepared) and a session (its
        // own interpreter).
        var engineTimes: [Double] = []
        var sessionTimes: [Double] = []
        var engine: Engine!
        for _ in 0..<25 {
            let t0 = Stopwatch.wall()
            engine = try Engine(policy: policyText, name: policy)
            let t1 = Stopwatch.wall()
            _ = try engine.makeSession()
            let t2 = Stopwatch.wall()
            engineTimes.append(t1 - t0)
            sessionTimes.append(t2 - t1)
        }
        figures["load_engine_ms"] = median(engineTimes) * 1000
        figures["load_session_ms"] = median(sessionTimes) * 1000

        // The stream, decoded up front.
        let rssBeforeStream = Memory.residentBytes()
        let envelopes = try BenchInput.envelopes(of: bytes, named: stream, session: engine.makeSession())
        figures["stream_notifications"] = Double(envelopes.count)
        figures["stream_users"] = Double(Set(envelopes.map(\.user)).count)
        figures["stream_decoded_mb"] = Double(Memory.residentBytes() - rssBeforeStream) / 1e6
        progress(
            "hush-benchmark: \(envelopes.count) notifications, \(Int(figures["stream_users"]!)) users; policy \(policy)"
        )

        // (1) one core: whole passes over the stream, fresh state each, the best pass counts (by
        // CPU time and by wall clock separately: on a shared machine the slow passes are the
        // ones something else ran beside).
        var bestCPU = 0.0, bestWall = 0.0
        for pass in 0..<passes {
            let run = try Runs.evaluate(engine: engine, envelopes: envelopes, context: context, shiftWeeks: 0)
            progress(
                String(
                    format: "  one core, pass %d: %.0f decisions/s (wall), %.0f (CPU)", pass + 1, run.wallRate,
                    run.cpuRate))
            bestCPU = max(bestCPU, run.cpuRate)
            bestWall = max(bestWall, run.wallRate)
        }
        figures["one_core_wall_per_s"] = bestWall
        figures["one_core_cpu_per_s"] = bestCPU
        figures["one_core_ns_per_decision_cpu"] = 1e9 / bestCPU

        // Latency: one more pass, timing each evaluation.
        let latencies = try Runs.latencies(engine: engine, envelopes: envelopes, context: context)
        figures["latency_p50_us"] = latencies.p50 * 1e6
        figures["latency_p99_us"] = latencies.p99 * 1e6
        figures["latency_p999_us"] = latencies.p999 * 1e6

        // Reading and writing on their own (what `hush eval` adds around each decision): the best
        // of the passes by CPU time.
        var decodeCPU = Double.infinity, writeCPU = Double.infinity
        for _ in 0..<passes {
            decodeCPU = min(decodeCPU, try Runs.decoding(engine: engine, stream: bytes).cpu)
            writeCPU = min(
                writeCPU, try Runs.writingDecisions(engine: engine, envelopes: envelopes, context: context).cpu)
        }
        figures["decode_ns_per_line_cpu"] = decodeCPU * 1e9 / Double(envelopes.count)
        figures["decision_json_ns_cpu"] = writeCPU * 1e9 / Double(envelopes.count)

        // (2) several cores: users split between threads, one session and store each.
        if threads > 1 {
            var parallelCPU = 0.0, parallelWall = 0.0
            for pass in 0..<passes {
                let parallel = try Runs.parallel(
                    engine: engine, envelopes: envelopes, stream: bytes,
                    context: context, threads: threads)
                progress(
                    String(
                        format:
                            "  %d cores, pass %d: %.0f decisions/s (wall), %.0f (sum of the threads' CPU-time rates)",
                        threads, pass + 1, parallel.wallRate, parallel.cpuRate))
                parallelCPU = max(parallelCPU, parallel.cpuRate)
                parallelWall = max(parallelWall, parallel.wallRate)
            }
            figures["threads"] = Double(threads)
            figures["multi_core_wall_per_s"] = parallelWall
            figures["multi_core_cpu_per_s"] = parallelCPU
            figures["multi_core_speedup_wall"] = parallelWall / bestWall
            figures["multi_core_speedup_cpu"] = parallelCPU / bestCPU
        }

        // Memory over many evaluations: the stream replayed week after week on one session.
        if evaluations > 0 {
            let memory = try Runs.memory(
                engine: engine, envelopes: envelopes, context: context, evaluations: evaluations)
            figures["memory_evaluations"] = Double(memory.evaluations)
            figures["memory_rss_after_first_week_mb"] = memory.first / 1e6
            figures["memory_rss_end_mb"] = memory.last / 1e6
            figures["memory_rss_growth_mb"] = (memory.last - memory.first) / 1e6
            figures["memory_rate_cpu_per_s"] = memory.cpuRate
        }

        // (4) peak RSS of this process (the stream, read and decoded, included).
        figures["peak_rss_mb"] = Memory.peakBytes() / 1e6

        print(figures.table(threads: threads, stream: stream))
        if let report {
            try figures.keyValues.write(toFile: report, atomically: true, encoding: .utf8)
        }
    }

    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
}

/// Progress, on standard error: standard output is the table.
func progress(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
