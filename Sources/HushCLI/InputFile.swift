import ArgumentParser
import Foundation
import Hush

/// INPUT: a file, or stdin for nil or "-".
enum InputFile {
    /// Reads INPUT whole (for the small inputs of donate and simulate).
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

    /// Calls `body` with INPUT as a stream of lines read a chunk at a time, then closes it.
    static func withLines<T>(_ path: String?, _ body: (LineStream) throws -> T) throws -> T {
        if path == nil || path == "-" {
            return try body(LineStream(descriptor: 0))
        }
        let descriptor = open(path!, O_RDONLY)
        guard descriptor >= 0, LineStream.isReadableFile(descriptor) else {
            if descriptor >= 0 { close(descriptor) }
            Output.error("hush: \(path!): no such file or cannot be read")
            throw ExitCode(2)
        }
        defer { close(descriptor) }
        return try body(LineStream(descriptor: descriptor))
    }
}
