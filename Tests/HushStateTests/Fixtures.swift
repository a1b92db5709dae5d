import Foundation
import HushCore
import HushState
import XCTest

/// A base instant for tests: 2023-11-14T22:13:20Z.
let t0 = 1_700_000_000.0

func note(
    _ id: String, user: String = "u", app: String = "com.example.chat", date: Double = t0, title: String? = nil,
    group: String? = nil, thread: String? = nil, relevance: Double? = nil, media: Bool = false,
    expiration: Double? = nil, summaryAt: Double? = nil, sender: String? = nil
) -> StoredNotification {
    StoredNotification(
        user: user, app: app, id: id, date: date, title: title ?? "title \(id)", threadID: thread,
        groupID: group, relevance: relevance, hasMedia: media, expiration: expiration,
        summaryAt: summaryAt, sender: sender)
}

/// A fresh directory under the temporary directory, removed by `remove()`.
struct TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("hush-state-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Collects errors from several threads.
final class ErrorBox: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [String] = []

    func add(_ error: any Error) { lock.withLock { errors.append("\(error)") } }
    var all: [String] { lock.withLock { errors } }
}

/// A batch's body cannot throw (each write inside reports its own error to it), and an XCTest
/// assertion on a `try` would make it throw: these run a step inside one and record a failure
/// when it throws, or does not.
func expectNoThrow(_ step: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) {
    do { try step() } catch { XCTFail("threw \(error)", file: file, line: line) }
}

func expectThrow(_ step: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) {
    do {
        try step()
        XCTFail("did not throw", file: file, line: line)
    } catch {}
}

/// A read inside a batch's closure, which cannot throw: a read that fails fails the test.
func checked<T>(_ read: () throws -> T, file: StaticString = #filePath, line: UInt = #line) -> T? {
    do { return try read() } catch {
        XCTFail("the read failed: \(error)", file: file, line: line)
        return nil
    }
}
