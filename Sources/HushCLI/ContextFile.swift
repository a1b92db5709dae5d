import ArgumentParser
import Foundation
import Hush
import HushCore
import HushJSON

enum ContextFile {
    /// Reads --context, or the defaults; a bad file, or a focus `policy` does not declare, is a
    /// usage error (exit 2).
    static func load(_ path: String?, for policy: Policy) throws -> EvaluationContext {
        guard let path else { return EvaluationContext() }
        guard let data = FileManager.default.contents(atPath: path) else {
            Output.error("hush: \(path): no such file or cannot be read")
            throw ExitCode(2)
        }
        do {
            let json = try Array(data).withUnsafeBytes { buffer throws(JSONError) in try JSONParser.parse(buffer) }
            let context = try EvaluationContext.decode(json)
            try context.checkFocus(declaredBy: policy)
            return context
        } catch let error as JSONError {
            Output.error("hush: \(path): \(error.message)")
            throw ExitCode(2)
        } catch {
            Output.error("hush: \(path): \(error)")
            throw ExitCode(2)
        }
    }
}
