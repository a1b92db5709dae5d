import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import XCTest

/// A real `hush serve`, started on a free loopback port (port 0; the bound port is read from its
/// `hush: listening on` line) and stopped by the test.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    private(set) var port = 0
    private let stderrPipe = Pipe()
    private let lock = NSLock()
    private var stderrText = ""

    /// The repository root (examples/, policies/).
    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    static var executable: URL {
        let bundle = URL(
            fileURLWithPath: CommandLine.arguments.first { $0.hasSuffix(".xctest") } ?? CommandLine.arguments[0])
        return bundle.deletingLastPathComponent().appendingPathComponent("hush")
    }

    /// The environment `hush` runs in: never the developer's own policy or state.
    static var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["XDG_CONFIG_HOME"] = FileManager.default.temporaryDirectory.appendingPathComponent("hush-svc-none").path
        env["XDG_STATE_HOME"] =
            FileManager.default.temporaryDirectory.appendingPathComponent("hush-svc-\(UUID().uuidString)").path
        return env
    }

    /// Starts `hush serve ARGUMENTS --listen 127.0.0.1:0` and waits until it listens. With
    /// `fileSizeLimit` (bytes), it runs under `ulimit -f`: a write past that size fails (EFBIG).
    init(
        _ arguments: [String], fileSizeLimit: Int? = nil, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        process.executableURL = Self.executable
        process.arguments = ["serve", "--listen", "127.0.0.1:0"] + arguments
        if let fileSizeLimit {
            // dash's `ulimit -f` counts 512-byte blocks (bash's, 1024: a limit twice as high).
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments =
                ["-c", "ulimit -f \(fileSizeLimit / 512) && exec \"$0\" \"$@\"", Self.executable.path]
                + process.arguments!
        }
        process.currentDirectoryURL = Self.root
        process.environment = Self.environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderrPipe
        stderrPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            lock.lock()
            stderrText += String(decoding: data, as: UTF8.self)
            lock.unlock()
        }
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let match = stderr.range(of: #"listening on http://127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                port = Int(stderr[match].split(separator: ":").last!)!
                return
            }
            if !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        process.terminate()
        XCTFail("hush serve did not start: \(stderr)", file: file, line: line)
        throw CocoaError(.executableLoad)
    }

    /// What the server logged so far.
    var stderr: String {
        lock.lock()
        defer { lock.unlock() }
        return stderrText
    }

    var base: String { "http://127.0.0.1:\(port)" }

    /// Sends `signal` and waits (at most `timeout` s) for the process to end; its exit status, or
    /// nil when it had to be killed.
    @discardableResult
    func stop(signal: Int32 = SIGTERM, timeout: TimeInterval = 20) -> Int32? {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        return signal == SIGKILL ? -9 : process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        stderrPipe.fileHandleForReading.readabilityHandler = nil
    }
}

/// One HTTP answer.
struct HTTPAnswer: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: String
    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] }
    var lines: [String] { body.split(separator: "\n").map(String.init) }
}

/// HTTP calls to a server.
enum HTTP {
    static func send(
        _ method: HTTPMethod, _ url: String, body: String? = nil, headers: [(String, String)] = []
    ) async throws -> HTTPAnswer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 256 << 20)
        return HTTPAnswer(
            status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    static func get(_ url: String, headers: [(String, String)] = []) async throws -> HTTPAnswer {
        try await send(.GET, url, headers: headers)
    }
}

/// Reads a Server-Sent Events stream in the background and keeps each event as it arrives, with
/// the (real) instant it arrived.
final class EventStreamReader: @unchecked Sendable {
    struct Event: Sendable {
        var id: Int64?
        var name: String?
        var data: String
        var arrived: Date
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any]) ?? [:] }
    }

    private let lock = NSLock()
    private var received: [Event] = []
    private var comments = 0
    private var task: Task<Void, Never>?
    private(set) var opened = false

    var events: [Event] {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    /// Opens `url` and returns once the stream's first bytes arrived (it is subscribed).
    init(_ url: String, headers: [(String, String)] = []) async throws {
        let (opened, openedContinuation) = AsyncStream.makeStream(of: Bool.self)
        task = Task { [weak self] in
            var request = HTTPClientRequest(url: url)
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            do {
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(3600))
                var pending = ""
                for try await chunk in response.body {
                    openedContinuation.yield(true)
                    pending += String(buffer: chunk)
                    while let end = pending.range(of: "\n\n") {
                        let block = String(pending[..<end.lowerBound])
                        pending = String(pending[end.upperBound...])
                        self?.take(block)
                    }
                }
            } catch {}
            openedContinuation.yield(false)
            openedContinuation.finish()
        }
        var iterator = opened.makeAsyncIterator()
        self.opened = await iterator.next() ?? false
    }

    private func take(_ block: String) {
        var event = Event(id: nil, name: nil, data: "", arrived: Date())
        var isEvent = false
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") { continue }
            if line.hasPrefix("id: ") { event.id = Int64(line.dropFirst(4)) }
            if line.hasPrefix("event: ") { event.name = String(line.dropFirst(7)) }
            if line.hasPrefix("data: ") {
                event.data += line.dropFirst(6)
                isEvent = true
            }
        }
        guard isEvent else { return }
        lock.lock()
        received.append(event)
        lock.unlock()
    }

    /// Waits (at most `timeout` real seconds) until `condition` holds for the events so far.
    @discardableResult
    func wait(timeout: TimeInterval, until condition: ([Event]) -> Bool) async -> [Event] {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let now = events
            if condition(now) { return now }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return events
    }

    func close() { task?.cancel() }

    deinit { task?.cancel() }
}

/// Runs `hush` (not serve) and returns stdout.
enum HushCommandLine {
    @discardableResult
    static func run(_ arguments: [String], stdin: String? = nil) throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let process = Process()
        process.executableURL = ServerProcess.executable
        process.arguments = arguments
        process.currentDirectoryURL = ServerProcess.root
        process.environment = ServerProcess.environment
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: outData, as: UTF8.self),
            String(decoding: errData, as: UTF8.self)
        )
    }
}

/// A fresh temporary folder.
func temporaryFolder(_ name: String) throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hush-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}
