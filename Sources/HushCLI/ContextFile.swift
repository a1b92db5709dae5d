import ArgumentParser
import Foundation
import Hush

enum ContextFile {
    /// Reads --context, or the defaults; a bad file is a usage error (exit 2).
    static func load(_ path: String?) throws -> EvaluationContext {
        guard let path else { return EvaluationContext() }
        guard let data = FileManager.default.contents(atPath: path) else {
            Output.error("hush: \(path): no such file or cannot be read")
            throw ExitCode(2)
        }
        do {
            let json = try Array(data).withUnsafeBytes { buffer throws(JSONError) in try JSONParser.parse(buffer) }
            return try EvaluationContext.decode(json)
        } catch let error as JSONError {
            Output.error("hush: \(path): \(error.message)")
            throw ExitCode(2)
        } catch {
            Output.error("hush: \(path): \(error)")
            throw ExitCode(2)
        }
    }
}
