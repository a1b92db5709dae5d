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
        try LineStream(bytes: bytes).forEachLine { line, number in
            do throws(LineError) {
                envelopes.append(try session.envelope(fromLine: line, number: number))
            } catch {
                throw ValidationError("\(name):\(number): \(error.reason)")
            }
        }
        guard !envelopes.isEmpty else { throw ValidationError("\(name) has no notifications") }
        return envelopes
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
