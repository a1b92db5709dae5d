import ArgumentParser
import Foundation
import Hush

/// The stream and the device context, read the way the library offers to its users.
enum BenchInput {
    static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("\(path): no such file or cannot be read")
        }
        return Array(data)
    }

    /// Every notification of the stream, decoded by `session`; a line that is not one stops the run.
    static func envelopes(of bytes: [UInt8], named name: String, session: Session) throws -> [Envelope] {
        var envelopes: [Envelope] = []
        try forEachLine(of: bytes) { line, number in
            do throws(HushError) {
                envelopes.append(try session.envelope(fromJSON: line, line: number))
            } catch {
                throw ValidationError("\(name):\(number): \(error)")
            }
        }
        guard !envelopes.isEmpty else { throw ValidationError("\(name) has no notifications") }
        return envelopes
    }

    /// Each non-blank line of JSON Lines bytes, with its 1-based number: a stream the harness holds
    /// whole (`hush eval` reads its input a chunk at a time instead).
    static func forEachLine(of bytes: [UInt8], _ body: (UnsafeRawBufferPointer, Int) throws -> Void) rethrows {
        try bytes.withUnsafeBytes { all in
            var number = 0
            var start = 0
            while start < all.count {
                let end = all[start...].firstIndex(of: 10) ?? all.count
                number += 1
                var last = end
                if last > start, all[last - 1] == 13 { last -= 1 }
                let line = UnsafeRawBufferPointer(rebasing: all[start..<last])
                if line.contains(where: { $0 != 32 && $0 != 9 }) { try body(line, number) }
                start = end + 1
            }
        }
    }

    /// The device context: the file given, else Benchmarks/context.json if present, else Europe/Berlin,
    /// locked. The library reads contexts only from parsed JSON, which is not part of its public API:
    /// the file's keys are read here (all but `now`: the stream's dates are the time).
    static func context(path: String?) throws -> EvaluationContext {
        let defaultPath = "Benchmarks/context.json"
        guard let path = path ?? (FileManager.default.fileExists(atPath: defaultPath) ? defaultPath : nil) else {
            return EvaluationContext(timezone: "Europe/Berlin", locked: true)
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(read(path))) as? [String: Any] else {
            throw ValidationError("\(path): a context must be a JSON object")
        }
        var context = EvaluationContext()
        for (key, value) in object {
            switch (key, value) {
            case ("timezone", let name as String): context.timezone = name
            case ("locked", let locked as Bool): context.locked = locked
            case ("ringer", let name as String) where EvaluationContext.Ringer(rawValue: name) != nil:
                context.ringer = EvaluationContext.Ringer(rawValue: name)!
            case ("audio", let name as String) where EvaluationContext.Audio(rawValue: name) != nil:
                context.audio = EvaluationContext.Audio(rawValue: name)!
            case ("focus", let off as Bool) where !off: context.focus = .off
            case ("focus", let name as String): context.focus = name == "off" || name.isEmpty ? .off : .on(name)
            default: throw ValidationError("\(path): \(key): not a context key the benchmark reads, or a wrong value")
            }
        }
        return context
    }
}
