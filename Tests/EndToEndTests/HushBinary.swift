import Foundation
import XCTest

/// Runs the built `hush` executable, as a person at a terminal would.
struct HushBinary {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }

        /// Each stdout line parsed as a JSON object.
        var objects: [[String: Any]] {
            lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
    }

    static var executable: URL {
        // The test bundle sits in the products directory, beside the executable.
        let bundle = URL(
            fileURLWithPath: CommandLine.arguments.first { $0.hasSuffix(".xctest") } ?? CommandLine.arguments[0])
        return bundle.deletingLastPathComponent().appendingPathComponent("hush")
    }

    /// The repository root (for examples/ and policies/).
    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    @discardableResult
    static func run(
        _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
        in directory: URL? = nil, standardInput file: URL? = nil
    ) throws -> Run {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory ?? root
        var env = ProcessInfo.processInfo.environment
        // Never pick up the developer's own policy or state.
        env["XDG_CONFIG_HOME"] =
            FileManager.default.temporaryDirectory.appendingPathComponent("hush-e2e-config-none").path
        env["XDG_STATE_HOME"] =
            FileManager.default.temporaryDirectory.appendingPathComponent("hush-e2e-state-\(UUID().uuidString)").path
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        // A file as standard input: `stdin` is written whole before the output is read, so it
        // must fit in a pipe (64 KiB) with what the process prints meanwhile.
        if let file {
            process.standardInput = try FileHandle(forReadingFrom: file)
        } else {
            process.standardInput = input
        }
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    /// A temporary file with the given contents.
    static func file(_ contents: String, name: String = "file", ext: String = "json") throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hush-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent("\(name).\(ext)")
        try contents.write(to: url, atomically: true, encoding: .utf8)
        return url
    }
}
