import Foundation
import GRDB
import HushCore
import XCTest

@testable import HushState

/// The SQLite store's group digests must always equal a digest made from the group's members, as
/// they are in the file, whoever wrote them.
final class SQLiteStateStoreDigestTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    func message(
        _ id: String, group: String, date: Double, category: String = "MESSAGE", argument: String? = nil,
        count: Int = 1, user: String = "u"
    ) -> StoredNotification {
        StoredNotification(
            user: user, app: "com.example.chat", id: id, date: date, title: "t", category: category,
            groupID: group, summaryArgument: argument, summaryArgumentCount: count)
    }

    func assertDigestsMatchMembers(
        _ store: SQLiteStateStore, groups: [String], user: String = "u",
        file: StaticString = #filePath, line: UInt = #line
    ) {
        for group in groups {
            guard let members = try? store.groupMembers(user: user, groupID: group) else {
                return XCTFail("group \(group): the members could not be read", file: file, line: line)
            }
            let expected = GroupDigest(members: members)
            XCTAssertEqual(
                try store.groupDigest(user: user, groupID: group), expected, "group \(group)", file: file, line: line)
        }
    }

    func testDigestsFollowJoinsReplacementsMovesAndPrunes() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        let groups = ["g", "h"]
        assertDigestsMatchMembers(store, groups: groups)  // empty groups, cached as such
        try store.apply([.deliver(message("a", group: "g", date: t0, argument: "Alice"))])
        try store.apply([.deliver(message("b", group: "g", date: t0 + 1, argument: "Bob", count: 2))])
        assertDigestsMatchMembers(store, groups: groups)
        try store.apply([.deliver(message("c", group: "g", date: t0 + 2, category: "OTHER"))])
        assertDigestsMatchMembers(store, groups: groups)
        // Replaced in place, with another argument.
        try store.apply([.deliver(message("b", group: "g", date: t0 + 3, argument: "Carol"))])
        assertDigestsMatchMembers(store, groups: groups)
        XCTAssertEqual(try store.groupDigest(user: "u", groupID: "g")?.pieces.first?.arguments, ["Alice", "Carol"])
        // Moved to another group.
        try store.apply([.deliver(message("a", group: "h", date: t0 + 4, argument: "Alice"))])
        assertDigestsMatchMembers(store, groups: groups)
        XCTAssertEqual(try store.groupDigest(user: "u", groupID: "h")?.memberCount, 1)
        // Leaves every group.
        try store.apply([.deliver(StoredNotification(user: "u", app: "com.example.chat", id: "c", date: t0 + 5))])
        assertDigestsMatchMembers(store, groups: groups)
        // Pruned.
        try store.prune(before: t0 + 3.5)
        assertDigestsMatchMembers(store, groups: groups)
        XCTAssertEqual(try store.groupDigest(user: "u", groupID: "g")?.memberCount, 0)
    }

    func testWhatAnotherConnectionCommitsIsSeen() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        let other = try SQLiteStateStore(path: path)
        try store.apply([.deliver(message("a", group: "g", date: t0, argument: "Alice"))])
        XCTAssertEqual(try store.groupDigest(user: "u", groupID: "g")?.memberCount, 1)
        try other.apply([.deliver(message("b", group: "g", date: t0 + 1, argument: "Bob"))])
        XCTAssertEqual(try store.groupDigest(user: "u", groupID: "g")?.memberCount, 2)
        // Replaced in place by the other: same count, other argument.
        try other.apply([.deliver(message("a", group: "g", date: t0 + 2, argument: "Dan"))])
        assertDigestsMatchMembers(store, groups: ["g"])
        XCTAssertEqual(try store.groupDigest(user: "u", groupID: "g")?.pieces.first?.arguments, ["Dan", "Bob"])
    }

    func testAWriteUndoneInABatchLeavesTheDigestRight() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        try store.apply([.deliver(message("a", group: "g", date: t0, argument: "Alice"))])
        try store.batch { () -> Void in
            XCTAssertEqual(checked { try store.groupDigest(user: "u", groupID: "g")?.memberCount }, 1)
            // The first change joins the group, the second fails (NaN is stored as NULL): both undone.
            expectThrow {
                try store.apply([
                    .deliver(message("b", group: "g", date: t0 + 1, argument: "Bob")),
                    .enqueue(note("bad", date: .nan, summaryAt: t0)),
                ])
            }
            assertDigestsMatchMembers(store, groups: ["g"])
            XCTAssertEqual(checked { try store.groupDigest(user: "u", groupID: "g")?.memberCount }, 1)
            expectNoThrow { try store.apply([.deliver(message("c", group: "g", date: t0 + 2, argument: "Carol"))]) }
        }
        assertDigestsMatchMembers(store, groups: ["g"])
        XCTAssertEqual(try store.groupDigest(user: "u", groupID: "g")?.memberCount, 2)
    }

    /// Many users and groups, in a batch and out, against the in-memory store.
    func testALongRandomStreamMatchesTheInMemoryStore() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        let twin = InMemoryStateStore()
        var generator = SystemRandomNumberGenerator()
        func step(_ i: Int) throws {
            let user = "u\(Int.random(in: 0..<3, using: &generator))"
            let group = ["g1", "g2", "g3"].randomElement(using: &generator)!
            let id = "n\(Int.random(in: 0..<400, using: &generator))"
            let n = message(
                id, group: group, date: t0 + Double(i), category: ["MESSAGE", "OTHER"].randomElement()!,
                argument: ["Alice", "Bob", nil].randomElement()!, count: Int.random(in: 1...3), user: user)
            XCTAssertEqual(
                try store.groupDigest(user: user, groupID: group), twin.groupDigest(user: user, groupID: group),
                "step \(i)")
            try store.apply([.deliver(n)])
            twin.apply([.deliver(n)])
        }
        for i in 0..<1500 {
            // Every other hundred steps in one batch.
            if i / 100 % 2 == 0 {
                try step(i)
            } else if i % 100 == 0 {
                try store.batch { for j in i..<i + 100 { expectNoThrow { try step(j) } } }
            }
        }
        for user in ["u0", "u1", "u2"] { assertDigestsMatchMembers(store, groups: ["g1", "g2", "g3"], user: user) }
    }
}
