import ArgumentParser
import Foundation

/// Reads INPUT (a file, or stdin for nil or "-") whole.
enum InputFile {
    static func read(_ path: String?) throws -> [UInt8] {
        if path == nil || path == "-" {
            return Array(FileHandle.standardInput.readDataToEndOfFile())
        }
        guard let data = FileManager.default.contents(atPath: path!) else {
            Output.error("hush: \(path!): no such file or cannot be read")
            throw ExitCode(2)
        }
        return Array(data)
    }
}
