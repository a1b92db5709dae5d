import ArgumentParser
import Foundation
import Hush

/// The library's memory on a stream, as a program holds it that reads its input a chunk at a time:
/// one session decodes and evaluates each line as it comes (no decoded stream held, unlike the
/// timed runs), so the process's peak RSS is the library's (issue 16: < 200 MB on 200k lines).
enum Streaming {
    static func run(engine: Engine, path: String, context: EvaluationContext) throws -> Runs.Run {
        guard let file = FileHandle(forReadingAtPath: path) else {
            throw ValidationError("\(path): no such file or cannot be read")
        }
        defer { try? file.close() }
        let session = try engine.makeSession()
        var pending: [UInt8] = []
        var count = 0
        var number = 0
        let w0 = Stopwatch.wall(), c0 = Stopwatch.threadCPU()
        func evaluate(_ bytes: [UInt8]) throws {
            try BenchInput.forEachLine(of: bytes) { line, _ in
                number += 1
                do throws(HushError) {
                    _ = try session.evaluate(session.envelope(fromJSON: line, line: number), context: context)
                } catch {
                    throw ValidationError("\(path):\(number): \(error)")
                }
                count += 1
            }
        }
        while true {
            let chunk = file.readData(ofLength: 1 << 20)
            if chunk.isEmpty { break }
            pending.append(contentsOf: chunk)
            guard let last = pending.lastIndex(of: 10) else { continue }
            try evaluate(Array(pending[...last]))
            pending.removeSubrange(...last)
        }
        if !pending.isEmpty { try evaluate(pending) }
        let w1 = Stopwatch.wall(), c1 = Stopwatch.threadCPU()
        return Runs.Run(count: count, wall: w1 - w0, cpu: c1 - c0)
    }
}
