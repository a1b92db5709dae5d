import XCTest

@testable import HushCore

/// A stored notification keeps its optional numbers as plain doubles, nil as one NaN of its own:
/// what goes in comes out, and they compare and hash as the optionals they stand for.
final class StoredNotificationTests: XCTestCase {
    private func stored(relevance: Double?, expiration: Double? = nil, summaryAt: Double? = nil) -> StoredNotification {
        StoredNotification(
            user: "u", app: "com.example.chat", id: "1", date: 0, relevance: relevance, expiration: expiration,
            summaryAt: summaryAt)
    }

    func testOptionalNumbersComeOutAsTheyWentIn() {
        for value in [nil, 0, -0.0, 1, 0.5, -1e300, .infinity, -.infinity, .leastNonzeroMagnitude] as [Double?] {
            let n = stored(relevance: value, expiration: value, summaryAt: value)
            XCTAssertEqual(n.relevance?.bitPattern, value?.bitPattern, "relevance \(String(describing: value))")
            XCTAssertEqual(n.expiration?.bitPattern, value?.bitPattern)
            XCTAssertEqual(n.summaryAt?.bitPattern, value?.bitPattern)
        }
        // A NaN (0/0 in a rule, say) stays a number, not nil.
        XCTAssertEqual(stored(relevance: .nan).relevance?.isNaN, true)
        XCTAssertEqual(stored(relevance: -Double.nan).relevance?.isNaN, true)
        var n = stored(relevance: 1, summaryAt: 5)
        n.relevance = nil
        n.summaryAt = 7
        XCTAssertNil(n.relevance)
        XCTAssertEqual(n.summaryAt, 7)
        n.expiration = 9
        XCTAssertEqual(n.expiration, 9)
    }

    func testEqualityIsTheOptionals() {
        XCTAssertEqual(stored(relevance: nil), stored(relevance: nil))
        XCTAssertEqual(stored(relevance: 0), stored(relevance: -0.0))
        XCTAssertNotEqual(stored(relevance: nil), stored(relevance: 0))
        XCTAssertNotEqual(stored(relevance: .nan), stored(relevance: .nan), "NaN equals nothing, as before")
        XCTAssertNotEqual(stored(relevance: nil, summaryAt: 1), stored(relevance: nil, summaryAt: nil))
        XCTAssertEqual(Set([stored(relevance: nil), stored(relevance: nil), stored(relevance: 0.5)]).count, 2)
    }
}

/// Group ids are remembered per thread in a small table: whatever shares a slot, each pair's id
/// is its own.
final class GroupIDsTests: XCTestCase {
    func testEveryPairGetsItsOwnID() {
        let apps = ["com.example.chat", "a", "com.example.mail.with.a.much.longer.bundle.identifier", "ü.app"]
        let threads = (0..<600).map { "thread-\($0 % 300)" + String(repeating: "x", count: $0 % 7) } + ["", "/", "🎉"]
        for _ in 0..<2 {
            for app in apps {
                for thread in threads {
                    XCTAssertEqual(Pipeline.threadGroupID(app: app, thread: thread), app + "/" + thread)
                }
            }
        }
        // Made once for a pair still in its slot: the same text, not a copy.
        let first = Pipeline.threadGroupID(app: "com.example.chat", thread: "family-dinner-plans")
        let again = Pipeline.threadGroupID(app: "com.example.chat", thread: "family-dinner-plans")
        XCTAssertEqual(first, again)
        var a = first
        var b = again
        XCTAssertEqual(a.withUTF8 { $0.baseAddress }, b.withUTF8 { $0.baseAddress })
    }
}
