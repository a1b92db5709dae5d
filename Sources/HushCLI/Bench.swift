import ArgumentParser
import Foundation
import Hush

/// `hush bench`: what the library does per second, per core and in memory, on a realistic stream
/// (benchmarks/generate.py) and policy (benchmarks/standard.lua). scripts/bench.sh runs it with the
/// end-to-end and anchor measurements around it.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the library: decisions/s and latency on one core and on several, memory over many evaluations, policy load time.",
        discussion: """
            STREAM is JSON Lines (benchmarks/generate.py). Every line is decoded before timing starts: \
            the figures are the library's Session.evaluate alone (decisions, state, rules), one session \
            per thread. Rates are given by wall-clock time and by the CPU time of the measuring \
            threads (steadier on a shared machine). Run `bash scripts/bench.sh` for the whole set.
            """)

    @Option(help: ArgumentHelp("The policy.", valueName: "file"))
    var policy = "benchmarks/standard.lua"

    @Option(help: ArgumentHelp("The device context (JSON). Default: benchmarks/context.json if present, else Europe/Berlin, locked.", valueName: "file"))
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

    @Argument(help: "The notifications (JSON Lines).")
    var stream: String

    func run() throws {
        if profile {
            let sources = try PolicyFiles.sources(paths: [policy])
            let engine = try Engine(sources: sources)
            let envelopes = try decodeStream(with: engine.makeSession())
            let run = try Self.evaluate(engine: engine, envelopes: envelopes, context: try benchContext(for: engine.policy), shiftWeeks: 0)
            print(String(format: "%d decisions: %.0f decisions/s (CPU)", run.count, run.cpuRate))
            return
        }
        var figures = Figures()
        let sources: [PolicySource]
        do { sources = try PolicyFiles.sources(paths: [policy]) } catch {
            Output.error("hush bench: \(error)")
            throw ExitCode(2)
        }

        // (5) policy load time: Engine (the policy read, validated and prepared) and a session (its
        // own interpreter).
        var engineTimes: [Double] = []
        var sessionTimes: [Double] = []
        var engine: Engine!
        for _ in 0..<25 {
            let t0 = Timer.wall()
            engine = try Engine(sources: sources)
            let t1 = Timer.wall()
            _ = try engine.makeSession()
            let t2 = Timer.wall()
            engineTimes.append(t1 - t0)
            sessionTimes.append(t2 - t1)
        }
        figures["load_engine_ms"] = median(engineTimes) * 1000
        figures["load_session_ms"] = median(sessionTimes) * 1000
        let context = try benchContext(for: engine.policy)

        // The stream, decoded up front.
        let rssBeforeStream = Memory.residentBytes()
        let envelopes = try decodeStream(with: engine.makeSession())
        figures["stream_notifications"] = Double(envelopes.count)
        figures["stream_users"] = Double(Set(envelopes.map(\.user)).count)
        figures["stream_decoded_mb"] = Double(Memory.residentBytes() - rssBeforeStream) / 1e6
        Output.error("hush bench: \(envelopes.count) notifications, \(Int(figures["stream_users"]!)) users; policy \(policy)")

        // (1) one core: whole passes over the stream, fresh state each, the best pass counts (by
        // CPU time and by wall clock separately: on a shared machine the slow passes are the
        // ones something else ran beside).
        var bestCPU = 0.0, bestWall = 0.0
        for pass in 0..<passes {
            let run = try Self.evaluate(engine: engine, envelopes: envelopes, context: context, shiftWeeks: 0)
            Output.error(String(format: "  one core, pass %d: %.0f decisions/s (wall), %.0f (CPU)", pass + 1, run.wallRate, run.cpuRate))
            bestCPU = max(bestCPU, run.cpuRate)
            bestWall = max(bestWall, run.wallRate)
        }
        figures["one_core_wall_per_s"] = bestWall
        figures["one_core_cpu_per_s"] = bestCPU
        figures["one_core_ns_per_decision_cpu"] = 1e9 / bestCPU

        // Latency: one more pass, timing each evaluation.
        let latencies = try Self.latencies(engine: engine, envelopes: envelopes, context: context)
        figures["latency_p50_us"] = latencies.p50 * 1e6
        figures["latency_p99_us"] = latencies.p99 * 1e6
        figures["latency_p999_us"] = latencies.p999 * 1e6

        // (2) several cores: users split between threads, one session and store each.
        if threads > 1 {
            var parallelCPU = 0.0, parallelWall = 0.0
            for pass in 0..<passes {
                let parallel = try Self.parallel(engine: engine, envelopes: envelopes, stream: try InputFile.read(stream),
                                                 context: context, threads: threads)
                Output.error(String(format: "  %d cores, pass %d: %.0f decisions/s (wall), %.0f (sum of the threads' CPU-time rates)",
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
            let memory = try Self.memoryRun(engine: engine, envelopes: envelopes, context: context, evaluations: evaluations)
            figures["memory_evaluations"] = Double(memory.evaluations)
            figures["memory_rss_after_first_week_mb"] = memory.first / 1e6
            figures["memory_rss_end_mb"] = memory.last / 1e6
            figures["memory_rss_growth_mb"] = (memory.last - memory.first) / 1e6
            figures["memory_rate_cpu_per_s"] = memory.cpuRate
        }

        // (4) peak RSS of this process (the decoded stream included).
        figures["peak_rss_mb"] = Memory.peakBytes() / 1e6

        print(figures.table(threads: threads, stream: stream))
        if let report {
            try figures.keyValues.write(toFile: report, atomically: true, encoding: .utf8)
        }
    }

    // MARK: input

    private func benchContext(for policy: Policy) throws -> EvaluationContext {
        if let context { return try ContextFile.load(context, for: policy) }
        if FileManager.default.fileExists(atPath: "benchmarks/context.json") { return try ContextFile.load("benchmarks/context.json", for: policy) }
        return EvaluationContext(timezone: "Europe/Berlin", locked: true)
    }

    private func decodeStream(with session: Session) throws -> [Envelope] {
        let bytes = try InputFile.read(stream)
        var envelopes: [Envelope] = []
        var failure: String?
        try LineStream(bytes: bytes).forEachLine { line, number in
            guard failure == nil else { return }
            do throws(LineError) {
                envelopes.append(try session.envelope(fromLine: line, number: number))
            } catch {
                failure = "\(stream):\(number): \(error.reason)"
            }
        }
        if let failure {
            Output.error("hush bench: \(failure)")
            throw ExitCode(2)
        }
        guard !envelopes.isEmpty else {
            Output.error("hush bench: \(stream) has no notifications")
            throw ExitCode(2)
        }
        return envelopes
    }

    // MARK: runs

    struct Run {
        var count: Int
        var wall: Double
        var cpu: Double
        var wallRate: Double { Double(count) / wall }
        var cpuRate: Double { Double(count) / cpu }
    }

    static let week = 7.0 * 86400

    /// The envelope `weeks` weeks later (date and expiration moved with it).
    @inline(__always)
    static func shifted(_ e: Envelope, weeks: Int) -> Envelope {
        guard weeks != 0 else { return e }
        var e = e
        let shift = Double(weeks) * week
        e.date = e.date.map { $0 + shift }
        if let x = e.expiration, x != 0 { e.expiration = x + shift }
        return e
    }

    static func evaluate(engine: Engine, envelopes: [Envelope], context: EvaluationContext, shiftWeeks: Int) throws -> Run {
        let session = try engine.makeSession()
        let w0 = Timer.wall(), c0 = Timer.threadCPU()
        for e in envelopes {
            _ = try session.evaluate(shifted(e, weeks: shiftWeeks), context: context)
        }
        let w1 = Timer.wall(), c1 = Timer.threadCPU()
        return Run(count: envelopes.count, wall: w1 - w0, cpu: c1 - c0)
    }

    static func latencies(engine: Engine, envelopes: [Envelope], context: EvaluationContext) throws -> (p50: Double, p99: Double, p999: Double) {
        let session = try engine.makeSession()
        var samples = [UInt32](repeating: 0, count: envelopes.count)
        for (i, e) in envelopes.enumerated() {
            let t0 = Timer.monotonicNanoseconds()
            _ = try session.evaluate(e, context: context)
            let t1 = Timer.monotonicNanoseconds()
            samples[i] = UInt32(clamping: t1 - t0)
        }
        samples.sort()
        func at(_ q: Double) -> Double { Double(samples[min(samples.count - 1, Int(Double(samples.count) * q))]) / 1e9 }
        return (at(0.5), at(0.99), at(0.999))
    }

    /// Users split between threads (independent users: no shared state), all started together.
    /// Independent users on each thread: each thread decodes its own users' lines (before the
    /// clock starts), so, as in a program that serves users from several threads, no string of a
    /// notification is shared between threads. `envelopes` are the stream's lines, decoded.
    static func parallel(engine: Engine, envelopes: [Envelope], stream: [UInt8], context: EvaluationContext,
                         threads: Int) throws -> Run {
        var users: [String: Int] = [:]
        // Each thread's lines, as JSON Lines of their own.
        var parts = [[UInt8]](repeating: [], count: threads)
        var index = 0
        try LineStream(bytes: stream).forEachLine { line, _ in
            let user = envelopes[index].user
            index += 1
            let thread: Int
            if let known = users[user] { thread = known } else { thread = users.count % threads; users[user] = thread }
            parts[thread].append(contentsOf: line)
            parts[thread].append(10)
        }
        let results = Results(count: threads)
        let ready = DispatchSemaphore(value: 0)
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        for t in 0..<threads {
            let lines = parts[t]
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                var part: [Envelope] = []
                if let session = try? engine.makeSession() {
                    try? LineStream(bytes: lines).forEachLine { line, number in
                        if let envelope = try? session.envelope(fromLine: line, number: number) { part.append(envelope) }
                    }
                }
                ready.signal()
                start.wait()
                do {
                    let run = try evaluate(engine: engine, envelopes: part, context: context, shiftWeeks: 0)
                    results.set(t, run)
                } catch {
                    results.fail("\(error)")
                }
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        for _ in 0..<threads { ready.wait() }
        let w0 = Timer.wall()
        for _ in 0..<threads { start.signal() }
        group.wait()
        let wall = Timer.wall() - w0
        if let failure = results.failure { throw ValidationError(failure) }
        let runs = results.runs.compactMap { $0 }
        // CPU: each thread's own rate, summed (what the cores deliver when nothing else runs).
        let cpuRate = runs.reduce(0.0) { $0 + $1.cpuRate }
        let count = runs.reduce(0) { $0 + $1.count }
        return Run(count: count, wall: wall, cpu: Double(count) / cpuRate)
    }

    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var runs: [Run?]
        private(set) var failure: String?
        init(count: Int) { runs = Array(repeating: nil, count: count) }
        func set(_ i: Int, _ run: Run) { lock.lock(); runs[i] = run; lock.unlock() }
        func fail(_ message: String) { lock.lock(); failure = message; lock.unlock() }
    }

    static func memoryRun(engine: Engine, envelopes: [Envelope], context: EvaluationContext,
                          evaluations: Int) throws -> (evaluations: Int, first: Double, last: Double, cpuRate: Double) {
        let session = try engine.makeSession()
        var done = 0
        var week = 0
        var first = 0.0
        let c0 = Timer.threadCPU()
        while done < evaluations {
            for e in envelopes {
                _ = try session.evaluate(shifted(e, weeks: week), context: context)
                done += 1
                if done == evaluations { break }
            }
            week += 1
            let rss = Double(Memory.residentBytes())
            if week == 1 { first = rss }
            Output.error(String(format: "  memory: %d evaluations, RSS %.1f MB", done, rss / 1e6))
        }
        let cpu = Timer.threadCPU() - c0
        return (done, first, Double(Memory.residentBytes()), Double(done) / cpu)
    }

    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
}

// MARK: figures

struct Figures {
    private(set) var values: [(String, Double)] = []

    subscript(key: String) -> Double? {
        get { values.first { $0.0 == key }?.1 }
        set {
            values.removeAll { $0.0 == key }
            if let newValue { values.append((key, newValue)) }
        }
    }

    var keyValues: String { values.map { "\($0.0)=\(String(format: "%.6g", $0.1))" }.joined(separator: "\n") + "\n" }

    func table(threads: Int, stream: String) -> String {
        func f(_ key: String, _ format: String = "%.0f") -> String { self[key].map { String(format: format, $0) } ?? "-" }
        var rows: [(String, String, String)] = [
            ("policy load (Engine: read, validate, prepare)", f("load_engine_ms", "%.2f ms"), "< 5 ms"),
            ("session (its own interpreter)", f("load_session_ms", "%.2f ms"), ""),
            ("one core: decisions/s (CPU time)", f("one_core_cpu_per_s"), ">= 1,000,000"),
            ("one core: decisions/s (wall clock)", f("one_core_wall_per_s"), ""),
            ("one core: latency p50 / p99 / p99.9", "\(f("latency_p50_us", "%.2f")) / \(f("latency_p99_us", "%.2f")) / \(f("latency_p999_us", "%.1f")) µs", ""),
        ]
        if threads > 1 {
            rows += [
                ("\(threads) cores: decisions/s (wall clock)", f("multi_core_wall_per_s"), ""),
                ("\(threads) cores: speed-up (wall clock)", f("multi_core_speedup_wall", "%.2fx"), ">= 1.8x"),
                ("\(threads) cores: speed-up (CPU time per thread)", f("multi_core_speedup_cpu", "%.2fx"), ""),
            ]
        }
        rows += [
            ("memory: RSS after one week / after \(f("memory_evaluations"))", "\(f("memory_rss_after_first_week_mb", "%.1f")) / \(f("memory_rss_end_mb", "%.1f")) MB", "flat"),
            ("peak RSS (the decoded stream included: \(f("stream_decoded_mb", "%.0f")) MB)", f("peak_rss_mb", "%.1f MB"), ""),
        ]
        let width = rows.map(\.0.count).max()! + 2
        var out = "hush bench: \(f("stream_notifications")) notifications of \(f("stream_users")) users (\(stream))\n"
        for (name, value, target) in rows {
            out += name.padding(toLength: width, withPad: " ", startingAt: 0) + value.padding(toLength: 28, withPad: " ", startingAt: 0) + target + "\n"
        }
        return out
    }
}

enum Timer {
    static func wall() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    static func threadCPU() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

enum Memory {
    /// Resident set size now (/proc/self/statm).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Peak resident set size (getrusage), in bytes.
    static func peakBytes() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_maxrss) * 1024
    }
}
