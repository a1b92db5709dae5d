// PostgresTestSupport: a PostgreSQL server for the tests of the PostgreSQL state store, with
// nothing to set up by hand. A test process uses the cluster that $HUSH_TEST_POSTGRES_URL names,
// or else a private, throwaway one that scripts/test-postgres.sh starts (on a free 127.0.0.1 port,
// in a directory under /tmp) the first time a test asks, and stops when the process exits; each
// test takes a new, empty database on it (makeDatabase), so tests share no state. Where no server
// can be had (none installed: scripts/setup.sh installs Debian's), url() says why, for a skip.

import Foundation

/// Why no PostgreSQL server can be had for the tests (or why a database could not be made on it).
public struct PostgresUnavailable: Error, CustomStringConvertible {
    public var description: String

    public init(description: String) {
        self.description = description
    }
}

public enum PostgresTestCluster {
    /// The URL of the cluster for this test process: $HUSH_TEST_POSTGRES_URL when set, else a
    /// private cluster started once (scripts/test-postgres.sh start in a temp dir) and stopped
    /// when the process exits (atexit). A failure, with the reason, when none can be had.
    public static func url() -> Result<String, PostgresUnavailable> {
        cluster.url()
    }

    /// A new, empty database on that cluster (CREATE DATABASE hush_test_<random>, via psql),
    /// returned as its URL.
    public static func makeDatabase() throws -> String {
        let base = try url().get()
        guard var components = URLComponents(string: base) else {
            throw PostgresUnavailable(description: "not a URL: \(base)")
        }
        guard let psql = findPsql() else {
            throw PostgresUnavailable(description: "psql not found (on PATH or in /usr/lib/postgresql/*/bin)")
        }
        let name = "hush_test_" + randomHex(16)
        let output = try run(
            psql, [base, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", "CREATE DATABASE \(name)"]
        ).get()
        guard output.status == 0 else {
            throw PostgresUnavailable(
                description: "psql could not create database \(name) (exit \(output.status)): \(output.stderr)")
        }
        components.path = "/" + name
        guard let url = components.string else {
            throw PostgresUnavailable(description: "cannot make a URL for database \(name) from \(base)")
        }
        return url
    }

    /// Restarts the private cluster (fast: every open connection is cut), for a test of what a
    /// PostgreSQL restart does to its clients. Throws when the cluster is not this process's own
    /// ($HUSH_TEST_POSTGRES_URL) or does not come back.
    public static func restart() throws {
        _ = try url().get()
        try cluster.restart()
    }
}

/// The cluster of this process: started at most once, under a lock (tests call from many threads).
private final class Cluster: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<String, PostgresUnavailable>?
    /// The data directory of the cluster this process started, which `stop()` stops and removes.
    private var directory: String?

    func url() -> Result<String, PostgresUnavailable> {
        lock.lock()
        defer { lock.unlock() }
        if let result { return result }
        let result = start()
        self.result = result
        return result
    }

    private func start() -> Result<String, PostgresUnavailable> {
        let environment = ProcessInfo.processInfo.environment
        if let url = environment["HUSH_TEST_POSTGRES_URL"], !url.isEmpty {
            return .success(url)
        }
        guard FileManager.default.fileExists(atPath: script) else {
            return .failure(PostgresUnavailable(description: "\(script) not found"))
        }
        // Under /tmp, which every user can traverse (as root the server runs as `postgres`), and
        // short: the Unix socket's path (in the directory) must fit in about 100 bytes.
        let directory = "/tmp/hush-pg-" + randomHex(12)
        // A crashed test process runs no atexit handler; the script's watcher stops the cluster then.
        let watch = ["HUSH_TEST_POSTGRES_WATCH_PID": String(ProcessInfo.processInfo.processIdentifier)]
        let output: Output
        switch run("/bin/bash", [script, "start", directory], environment: watch) {
        case .success(let value): output = value
        case .failure(let error): return .failure(error)
        }
        let url = output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard output.status == 0, url.hasPrefix("postgres://") else {
            _ = run("/bin/bash", [script, "stop", directory])
            return .failure(
                PostgresUnavailable(
                    description: "no private PostgreSQL cluster (scripts/test-postgres.sh start exited "
                        + "\(output.status)): \(output.stderr)\(output.stdout)"))
        }
        self.directory = directory
        atexit { cluster.stop() }
        return .success(url)
    }

    func restart() throws {
        lock.lock()
        let directory = self.directory
        lock.unlock()
        guard let directory else {
            throw PostgresUnavailable(description: "the cluster is not this process's own: it cannot be restarted")
        }
        let output = try run("/bin/bash", [script, "restart", directory]).get()
        guard output.status == 0 else {
            throw PostgresUnavailable(description: "the cluster did not restart: \(output.stderr)")
        }
    }

    /// Stops the cluster this process started, if it did (at exit).
    func stop() {
        lock.lock()
        let directory = self.directory
        self.directory = nil
        lock.unlock()
        guard let directory else { return }
        _ = run("/bin/bash", [script, "stop", directory])
    }
}

private let cluster = Cluster()

/// scripts/test-postgres.sh in this repository (this file is Tests/PostgresTestSupport/…).
private let script: String = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()
    .deletingLastPathComponent()
    .deletingLastPathComponent()
    .appendingPathComponent("scripts")
    .appendingPathComponent("test-postgres.sh")
    .path

private struct Output {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs a program to its end, its output going to temporary files rather than pipes (a server it
/// starts in the background may hold a pipe open long after it exits).
private func run(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:]
) -> Result<Output, PostgresUnavailable> {
    let files = FileManager.default
    let stem = files.temporaryDirectory.appendingPathComponent("hush-pg-run-" + randomHex(12)).path
    let outPath = stem + ".out"
    let errPath = stem + ".err"
    defer {
        try? files.removeItem(atPath: outPath)
        try? files.removeItem(atPath: errPath)
    }
    guard files.createFile(atPath: outPath, contents: nil), files.createFile(atPath: errPath, contents: nil),
        let out = FileHandle(forWritingAtPath: outPath), let err = FileHandle(forWritingAtPath: errPath)
    else {
        return .failure(PostgresUnavailable(description: "cannot create temporary files at \(stem)"))
    }
    defer {
        try? out.close()
        try? err.close()
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = out
    process.standardError = err
    do {
        try process.run()
    } catch {
        return .failure(PostgresUnavailable(description: "cannot run \(executable): \(error)"))
    }
    process.waitUntilExit()
    let stdout = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
    let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
    return .success(Output(status: process.terminationStatus, stdout: stdout, stderr: stderr))
}

/// psql: on PATH, else in the newest /usr/lib/postgresql/*/bin.
private func findPsql() -> String? {
    let files = FileManager.default
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    var directories = path.split(separator: ":").map(String.init)
    let versions = (try? files.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
    directories += versions.sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }.map { "/usr/lib/postgresql/\($0)/bin" }
    return directories.map { $0 + "/psql" }.first { files.isExecutableFile(atPath: $0) }
}

private func randomHex(_ count: Int) -> String {
    String((0..<count).map { _ in "0123456789abcdef".randomElement() ?? "0" })
}
