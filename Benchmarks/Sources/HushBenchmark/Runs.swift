import ArgumentParser
import Foundation
import Hush

/// The timed runs: each on sessions of its own, with fresh state.
enum Runs {
    struct Run {
        var count: Int
        var wall: Double
        var cpu: Double
        /// `Stopwatch.wall()` when the run's clock stopped.
        var end = 0.0
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

    static func evaluate(engine: Engine, envelopes: [Envelope], context: EvaluationContext, shiftWeeks: Int) throws
        -> Run
    {
        let session = try engine.makeSession()
        let w0 = Stopwatch.wall(), c0 = Stopwatch.threadCPU()
        for e in envelopes {
            _ = try session.evaluate(shifted(e, weeks: shiftWeeks), context: context)
        }
        let w1 = Stopwatch.wall(), c1 = Stopwatch.threadCPU()
        return Run(count: envelopes.count, wall: w1 - w0, cpu: c1 - c0, end: w1)
    }

    /// Reading alone: every line of `stream` parsed and decoded (`Session.envelope(fromJSON:line:)`).
    static func decoding(engine: Engine, stream: [UInt8]) throws -> Run {
        let session = try engine.makeSession()
        var count = 0
        let w0 = Stopwatch.wall(), c0 = Stopwatch.threadCPU()
        try BenchInput.forEachLine(of: stream) { line, number in
            _ = try session.envelope(fromJSON: line, line: number)
            count += 1
        }
        let w1 = Stopwatch.wall(), c1 = Stopwatch.threadCPU()
        return Run(count: count, wall: w1 - w0, cpu: c1 - c0)
    }

    /// Writing alone: the decisions of one pass, each written as JSON (`Decision.jsonString`).
    static func writingDecisions(engine: Engine, envelopes: [Envelope], context: EvaluationContext) throws -> Run {
        let session = try engine.makeSession()
        let decisions = try envelopes.map { try session.evaluate($0, context: context) }
        var bytes = 0
        let w0 = Stopwatch.wall(), c0 = Stopwatch.threadCPU()
        for decision in decisions { bytes &+= decision.jsonString.utf8.count }
        let w1 = Stopwatch.wall(), c1 = Stopwatch.threadCPU()
        precondition(bytes > 0)
        return Run(count: decisions.count, wall: w1 - w0, cpu: c1 - c0)
    }

    static func latencies(engine: Engine, envelopes: [Envelope], context: EvaluationContext) throws -> (
        p50: Double, p99: Double, p999: Double
    ) {
        let session = try engine.makeSession()
        var samples = [UInt32](repeating: 0, count: envelopes.count)
        for (i, e) in envelopes.enumerated() {
            let t0 = Stopwatch.monotonicNanoseconds()
            _ = try session.evaluate(e, context: context)
            let t1 = Stopwatch.monotonicNanoseconds()
            samples[i] = UInt32(clamping: t1 - t0)
        }
        samples.sort()
        func at(_ q: Double) -> Double { Double(samples[min(samples.count - 1, Int(Double(samples.count) * q))]) / 1e9 }
        return (at(0.5), at(0.99), at(0.999))
    }

    /// Users split between threads (independent users: no shared state), all started together.
    /// Each thread decodes its own users' lines (before the clock starts), so, as in a program that
    /// serves users from several threads, no string of a notification is shared between threads.
    /// `envelopes` are the stream's lines, decoded, for their users.
    static func parallel(
        engine: Engine, envelopes: [Envelope], stream: [UInt8], context: EvaluationContext,
        threads: Int
    ) throws -> Run {
        // Users to threads by the bytes of their lines, the largest first, each to the thread with
        // the fewest so far: the threads get about the same work, so the wall clock measures how
        // the library scales rather than how unevenly the stream's users were dealt (dealt in
        // turn, the threads' work differed by up to 13%).
        var bytesOfUser: [String: Int] = [:]
        var index = 0
        BenchInput.forEachLine(of: stream) { line, _ in
            bytesOfUser[envelopes[index].user, default: 0] += line.count + 1
            index += 1
        }
        var users: [String: Int] = [:]
        var bytesOfThread = [Int](repeating: 0, count: threads)
        for (user, bytes) in bytesOfUser.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
            let thread = bytesOfThread.indices.min { bytesOfThread[$0] < bytesOfThread[$1] }!
            users[user] = thread
            bytesOfThread[thread] += bytes
        }
        // Each thread's lines, as JSON Lines of their own.
        var parts = [[UInt8]](repeating: [], count: threads)
        index = 0
        BenchInput.forEachLine(of: stream) { line, _ in
            let thread = users[envelopes[index].user]!
            index += 1
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
                    BenchInput.forEachLine(of: lines) { line, number in
                        if let envelope = try? session.envelope(fromJSON: line, line: number) { part.append(envelope) }
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
        let w0 = Stopwatch.wall()
        for _ in 0..<threads { start.signal() }
        group.wait()
        if let failure = results.failure { throw ValidationError(failure) }
        // From the start to the last thread's last decision: as in the one-core runs, freeing the
        // session and the envelopes afterwards is not counted (it took 0.06-0.1 s here).
        let wall = results.lastFinish - w0
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
        private(set) var lastFinish = 0.0
        init(count: Int) { runs = Array(repeating: nil, count: count) }
        func set(_ i: Int, _ run: Run) {
            lock.lock()
            runs[i] = run
            lastFinish = max(lastFinish, run.end)
            lock.unlock()
        }
        func fail(_ message: String) { lock.lock(); failure = message; lock.unlock() }
    }

    static func memory(
        engine: Engine, envelopes: [Envelope], context: EvaluationContext,
        evaluations: Int
    ) throws -> (evaluations: Int, first: Double, last: Double, cpuRate: Double) {
        let session = try engine.makeSession()
        var done = 0
        var week = 0
        var first = 0.0
        let c0 = Stopwatch.threadCPU()
        while done < evaluations {
            for e in envelopes {
                _ = try session.evaluate(shifted(e, weeks: week), context: context)
                done += 1
                if done == evaluations { break }
            }
            week += 1
            let rss = Double(Memory.residentBytes())
            if week == 1 { first = rss }
            progress(String(format: "  memory: %d evaluations, RSS %.1f MB", done, rss / 1e6))
        }
        let cpu = Stopwatch.threadCPU() - c0
        return (done, first, Double(Memory.residentBytes()), Double(done) / cpu)
    }
}
