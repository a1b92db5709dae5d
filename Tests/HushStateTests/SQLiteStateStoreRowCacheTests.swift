import Foundation
import HushCore
import XCTest

@testable import HushState

/// Group members are served from decoded rows checked against each row's random `rev`: what
/// another process changes must show at once.
final class SQLiteStateStoreRowCacheTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    func testChangesByAnotherConnectionShowThroughTheCache() throws {
        let path = directory.path("state.sqlite")
        let reader = try SQLiteStateStore(path: path)
        let writer = try SQLiteStateStore(path: path)
        try writer.apply((0..<5).map { .deliver(note("m\($0)", date: t0 + Double($0), group: "g")) })
        XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "g").map(\.id), ["m0", "m1", "m2", "m3", "m4"])
        XCTAssertEqual(reader.rowCache.count, 5)

        // Replaced in place (same seq): the new content, not the cached one.
        try writer.apply([.deliver(note("m1", date: t0 + 10, title: "edited", group: "g"))])
        XCTAssertEqual(
            try reader.groupMembers(user: "u", groupID: "g").map(\.title),
            ["title m0", "edited", "title m2", "title m3", "title m4"])
        // Moved, pruned, and a new row that may reuse a deleted row's seq.
        try writer.apply([.deliver(note("m4", date: t0 + 11, group: "h"))])
        try writer.prune(before: t0 + 1)
        try writer.apply([.deliver(note("m5", date: t0 + 12, title: "new", group: "g"))])
        XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "g").map(\.id), ["m1", "m2", "m3", "m5"])
        XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "g").last?.title, "new")
        XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "h").map(\.id), ["m4"])
    }

    func testTheCacheIsBounded() {
        var cache = RowCache()
        for seq in 0..<Int64(RowCache.limit) { cache.insert(note("\(seq)"), seq: seq, rev: 1) }
        XCTAssertEqual(cache.count, RowCache.limit)
        XCTAssertEqual(cache[0, 1]?.id, "0")
        XCTAssertNil(cache[0, 2])
        cache.insert(note("more"), seq: -1, rev: 1)
        XCTAssertEqual(cache.count, 1)
        XCTAssertEqual(cache[-1, 1]?.id, "more")
    }
}
