import Foundation
import GRDB
import HushCore
import XCTest

@testable import HushState

/// `ServiceState` (the event outbox, schedule marks, users' own policies, consumer cursors),
/// checked against every kind of store as `StateStoreConformanceTests` does, each test on a fresh
/// store; then what only the SQLite file does: keeping it all across a reopen, the v2 migration of
/// a v1 file, and `atomically` undoing its writes when its body throws (the in-memory store's
/// writes cannot fail halfway: its `atomically` just runs the body).
final class ServiceStateTests: XCTestCase {
    struct Refused: Error, Equatable {}

    private var currentStore: String?

    /// Runs `check` on a fresh store of every kind `StateStoreConformanceTests` knows.
    func forEachStore(_ check: (any StateStore) throws -> Void) throws {
        for (name, make) in StateStoreConformanceTests.stores {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            currentStore = name
            defer { currentStore = nil }
            do {
                try check(make(directory, 7, 1000))
            } catch {
                XCTFail("threw \(error)")
            }
        }
    }

    override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int,
        expected: Bool
    ) {
        let label = currentStore.map { "[\($0)] " } ?? ""
        super.recordFailure(
            withDescription: label + description, inFile: filePath, atLine: lineNumber, expected: expected)
    }

    private func event(_ user: String, at: Double = t0, kind: String = "summary", _ json: String) -> StoredEvent {
        StoredEvent(user: user, at: at, kind: kind, json: json)
    }

    func testEventsAreRecordedInOrderWithIncreasingSeq() throws { try forEachStore(checkEventsInOrder) }
    func testEventsAfterForAUserUpToALimit() throws { try forEachStore(checkEventsFiltering) }
    func testScheduleMarksRoundTrip() throws { try forEachStore(checkScheduleMarks) }
    func testUserPoliciesSetReplaceAndRemove() throws { try forEachStore(checkUserPolicies) }
    func testCursorsStartAtZeroAndRoundTrip() throws { try forEachStore(checkCursors) }
    func testWhetherASummaryIsDueFollowsEveryChangeToTheQueue() throws { try forEachStore(checkDueFollowsTheQueue) }
    func testKnownUsersAreEveryUserWithAnyStateSorted() throws { try forEachStore(checkKnownUsers) }
    func testAtomicallyReturnsItsResultAndItsReadsSeeItsWrites() throws {
        try forEachStore(checkAtomicallyReturnsAndReadsItsWrites)
    }
    func testPruneKeepsTheEventsAConsumerHasNotAcknowledged() throws {
        try forEachStore(checkPruneKeepsUnacknowledgedEvents)
    }
    func testPruneWithoutCursorsGoesByAgeAlone() throws { try forEachStore(checkPruneWithoutCursors) }

    // MARK: the outbox

    private func checkEventsInOrder(_ store: any StateStore) throws {
        XCTAssertEqual(try store.lastEventSeq(), 0)
        XCTAssertEqual(try store.events(after: 0, user: nil, limit: 10), [])

        var first = event("ana", #"{"n":1}"#)
        first.seq = 99  // not the store's: replaced
        let recorded = try store.appendEvents([
            first, event("bo", at: t0 + 1, kind: "focus", #"{"focus":"Sleep"}"#),
        ])
        XCTAssertEqual(recorded.map(\.seq), [1, 2])
        XCTAssertEqual(recorded.map(\.json), [#"{"n":1}"#, #"{"focus":"Sleep"}"#])
        XCTAssertEqual(try store.appendEvents([event("ana", at: t0 + 2, "line \"3\" ✓")]).map(\.seq), [3])
        XCTAssertEqual(try store.appendEvents([]), [])

        XCTAssertEqual(
            try store.events(after: 0, user: nil, limit: 10),
            [
                StoredEvent(seq: 1, user: "ana", at: t0, kind: "summary", json: #"{"n":1}"#),
                StoredEvent(seq: 2, user: "bo", at: t0 + 1, kind: "focus", json: #"{"focus":"Sleep"}"#),
                StoredEvent(seq: 3, user: "ana", at: t0 + 2, kind: "summary", json: "line \"3\" ✓"),
            ])
        XCTAssertEqual(try store.lastEventSeq(), 3)
    }

    private func checkEventsFiltering(_ store: any StateStore) throws {
        let users = ["ana", "bo", "ana", "ana", "bo", "cy"]
        try store.appendEvents(users.enumerated().map { event($1, at: t0 + Double($0), "e\($0 + 1)") })
        func seqs(after: Int64, user: String? = nil, limit: Int = 100) throws -> [Int64] {
            try store.events(after: after, user: user, limit: limit).map(\.seq)
        }
        XCTAssertEqual(try seqs(after: 0), [1, 2, 3, 4, 5, 6])
        XCTAssertEqual(try seqs(after: 2), [3, 4, 5, 6])
        XCTAssertEqual(try seqs(after: 6), [])
        XCTAssertEqual(try seqs(after: 100), [])
        XCTAssertEqual(try seqs(after: 0, user: "ana"), [1, 3, 4])
        XCTAssertEqual(try seqs(after: 1, user: "ana"), [3, 4])
        XCTAssertEqual(try seqs(after: 0, user: "bo"), [2, 5])
        XCTAssertEqual(try seqs(after: 0, user: "nobody"), [])
        XCTAssertEqual(try seqs(after: 0, limit: 2), [1, 2])
        XCTAssertEqual(try seqs(after: 3, limit: 2), [4, 5])
        XCTAssertEqual(try seqs(after: 1, user: "ana", limit: 1), [3])
        XCTAssertEqual(try seqs(after: 0, user: "bo", limit: 5), [2, 5])
        XCTAssertEqual(try seqs(after: 0, limit: 0), [])
        XCTAssertEqual(try seqs(after: 0, limit: -1), [], "no limit is not every event")
        XCTAssertEqual(try store.events(after: 4, user: "bo", limit: 10).map(\.json), ["e5"])
        XCTAssertEqual(try store.lastEventSeq(), 6)
    }

    // MARK: marks, policies, cursors

    private func checkScheduleMarks(_ store: any StateStore) throws {
        XCTAssertNil(try store.scheduleMark(user: "ana"))
        let none = ScheduleMark(focus: nil, announced: false, through: t0)
        try store.setScheduleMark(user: "ana", none)
        XCTAssertEqual(try store.scheduleMark(user: "ana"), none)

        let sleep = ScheduleMark(focus: "Sleep", announced: true, through: t0 + 60.5)
        try store.setScheduleMark(user: "ana", sleep)
        XCTAssertEqual(try store.scheduleMark(user: "ana"), sleep)
        let offAgain = ScheduleMark(focus: nil, announced: true, through: t0 + 120)
        try store.setScheduleMark(user: "bo", offAgain)
        XCTAssertEqual(try store.scheduleMark(user: "bo"), offAgain)
        XCTAssertEqual(try store.scheduleMark(user: "ana"), sleep, "another user's mark is untouched")

        try store.setScheduleMark(user: "ana", offAgain)
        XCTAssertEqual(try store.scheduleMark(user: "ana")?.focus, .some(nil))
        XCTAssertEqual(try store.scheduleMark(user: "ana")?.announced, true)
    }

    private func checkUserPolicies(_ store: any StateStore) throws {
        XCTAssertNil(try store.userPolicy(user: "ana"))
        let first = "rule { when = function(n) return n.app == 'x' end, deliver = 'silently' }"
        try store.setUserPolicy(user: "ana", first)
        XCTAssertEqual(try store.userPolicy(user: "ana"), first)
        try store.setUserPolicy(user: "ana", "-- replaced\nreturn {}")
        XCTAssertEqual(try store.userPolicy(user: "ana"), "-- replaced\nreturn {}")
        try store.setUserPolicy(user: "bo", "")
        XCTAssertEqual(try store.userPolicy(user: "bo"), "", "an empty policy is a policy")

        try store.setUserPolicy(user: "ana", nil)
        XCTAssertNil(try store.userPolicy(user: "ana"))
        XCTAssertEqual(try store.userPolicy(user: "bo"), "")
        try store.setUserPolicy(user: "nobody", nil)  // removing none is fine
        XCTAssertNil(try store.userPolicy(user: "nobody"))
    }

    /// Asked before every evaluation, and answered from memory where a store keeps the queue. A
    /// "yes" with nothing due only costs a look at the queue; a "no" with a summary due would hold
    /// it back, so every change to the queue, earlier or later, must be followed.
    private func checkDueFollowsTheQueue(_ state: any StateStore) throws {
        let store = try XCTUnwrap(state as? any ServiceState)
        func due(_ t: Double) throws -> Bool { try store.hasDueSummaries(user: "u", upTo: t) }
        XCTAssertFalse(try due(t0 + 10_000))
        try state.apply([.enqueue(note("late", date: t0, summaryAt: t0 + 3600))])
        XCTAssertFalse(try due(t0 + 1800))
        XCTAssertTrue(try due(t0 + 3600))
        try state.apply([.enqueue(note("early", date: t0, summaryAt: t0 + 600))])
        XCTAssertTrue(try due(t0 + 1800))
        try state.apply([.replace(note("early", date: t0, summaryAt: t0 + 7200), queued: true)])
        try state.apply([.dequeue(user: "u", app: "com.example.chat", id: "late")])
        XCTAssertTrue(try due(t0 + 7200))
        try state.apply([.replace(note("early", date: t0, summaryAt: t0 + 300), queued: true)])
        XCTAssertTrue(try due(t0 + 300))
        XCTAssertEqual(try state.takeDueSummaries(user: "u", upTo: t0 + 300).map(\.at), [t0 + 300])
        XCTAssertFalse(try due(t0 + 100_000))
    }

    private func checkCursors(_ store: any StateStore) throws {
        XCTAssertEqual(try store.cursor("webhook"), 0)
        try store.setCursor("webhook", 5)
        XCTAssertEqual(try store.cursor("webhook"), 5)
        try store.setCursor("stream", 7)
        XCTAssertEqual(try store.cursor("stream"), 7)
        XCTAssertEqual(try store.cursor("webhook"), 5)
        try store.setCursor("webhook", 3)
        XCTAssertEqual(try store.cursor("webhook"), 3, "set, not only moved forward")
        XCTAssertEqual(try store.cursor("other"), 0)
    }

    // MARK: users

    private func checkKnownUsers(_ store: any StateStore) throws {
        XCTAssertEqual(try store.knownUsers(), [])
        try store.setUserPolicy(user: "zed", "return {}")  // only a policy
        try store.apply([.deliver(note("1", user: "bo"))])  // only a notification
        try store.apply([.enqueue(note("q", user: "gus", summaryAt: t0 + 60))])
        try store.apply([.recordCall(CallRecord(user: "dan", date: t0, app: "phone", caller: Person()))])
        try store.setManualFocus(user: "eve", ManualFocus(name: "Work", since: t0))
        try store.addInteractions([
            Interaction(user: "fay", date: t0, direction: .outgoing, kind: .call, people: [Person(handle: "+1")])
        ])
        try store.setScheduleMark(user: "amy", ScheduleMark(focus: nil, announced: false, through: t0))
        try store.appendEvents([event("cat", "{}")])
        try store.appendEvents([event("bo", "{}")])
        try store.setCursor("webhook", 1)  // a consumer is no user
        try store.setManualFocus(user: "hal", nil)  // clearing nothing keeps nothing
        XCTAssertEqual(try store.knownUsers(), ["amy", "bo", "cat", "dan", "eve", "fay", "gus", "zed"])

        try store.setUserPolicy(user: "zed", nil)
        try store.setManualFocus(user: "eve", nil)
        XCTAssertEqual(try store.knownUsers(), ["amy", "bo", "cat", "dan", "fay", "gus"])
    }

    // MARK: atomically

    private func checkAtomicallyReturnsAndReadsItsWrites(_ store: any StateStore) throws {
        let seen = try store.atomically { () throws -> [Int64] in
            try store.appendEvents([event("ana", "a"), event("ana", "b")])
            try store.setCursor("webhook", 1)
            try store.setUserPolicy(user: "ana", "return {}")
            XCTAssertEqual(try store.cursor("webhook"), 1)
            XCTAssertEqual(try store.userPolicy(user: "ana"), "return {}")
            // One inside another joins it.
            try store.atomically {
                try store.setScheduleMark(user: "ana", .init(focus: "Sleep", announced: true, through: t0))
            }
            XCTAssertEqual(try store.scheduleMark(user: "ana")?.focus, "Sleep")
            return try store.events(after: 0, user: "ana", limit: 10).map(\.seq)
        }
        XCTAssertEqual(seen, [1, 2])
        XCTAssertEqual(try store.events(after: 0, user: nil, limit: 10).map(\.json), ["a", "b"])
        XCTAssertEqual(try store.cursor("webhook"), 1)
        XCTAssertEqual(try store.scheduleMark(user: "ana")?.focus, "Sleep")

        // The body's own error comes back as it is, not as a failure of the store.
        XCTAssertThrowsError(try store.atomically { () throws -> Int in throw Refused() }) { error in
            XCTAssertEqual(error as? Refused, Refused())
        }

        // Inside a batch, too.
        let inBatch = try store.batch { () -> Int64? in
            checked {
                try store.atomically { () throws -> Int64 in
                    try store.appendEvents([event("bo", "c")]).first?.seq ?? -1
                }
            }
        }
        XCTAssertEqual(inBatch, 3)
        XCTAssertEqual(try store.lastEventSeq(), 3)
    }

    // MARK: prune

    private func checkPruneKeepsUnacknowledgedEvents(_ store: any StateStore) throws {
        let old = t0 - 100
        try store.appendEvents([
            event("ana", at: old, "1"), event("bo", at: old, "2"), event("ana", at: old, "3"), event("ana", "4"),
        ])
        try store.apply([.deliver(note("old", date: old)), .deliver(note("new", date: t0))])
        try store.setCursor("webhook http://a.example/", 1)
        try store.setCursor("webhook http://b.example/", 4)
        try store.prune(before: t0)
        XCTAssertEqual(
            try store.events(after: 0, user: nil, limit: 10).map(\.seq), [2, 3, 4],
            "2 and 3 are old but the webhook has not taken them")
        XCTAssertNil(
            try store.delivered(user: "u", app: "com.example.chat", id: "old"), "notifications pruned as before")
        XCTAssertNotNil(try store.delivered(user: "u", app: "com.example.chat", id: "new"))

        try store.setCursor("webhook http://a.example/", 2)
        try store.prune(before: t0)
        XCTAssertEqual(try store.events(after: 0, user: nil, limit: 10).map(\.seq), [3, 4])

        try store.setCursor("webhook http://a.example/", 4)
        try store.prune(before: t0)
        XCTAssertEqual(try store.events(after: 0, user: nil, limit: 10).map(\.seq), [4], "4 is not old")
        try store.prune(before: t0 + 1)
        XCTAssertEqual(try store.events(after: 0, user: nil, limit: 10), [])
        XCTAssertEqual(try store.lastEventSeq(), 4, "the last seq given stays once its event is pruned")
        XCTAssertEqual(try store.appendEvents([event("ana", "5")]).map(\.seq), [5], "and is never given again")
    }

    private func checkPruneWithoutCursors(_ store: any StateStore) throws {
        try store.appendEvents([
            event("ana", at: t0 - 10, "old"), event("ana", at: t0 + 10, "new"), event("bo", at: t0 - 1, "late old"),
            event("bo", at: t0, "now"),
        ])
        try store.prune(before: t0)
        XCTAssertEqual(try store.events(after: 0, user: nil, limit: 10).map(\.json), ["new", "now"])
        XCTAssertEqual(try store.events(after: 0, user: nil, limit: 10).map(\.seq), [2, 4])
        XCTAssertEqual(try store.lastEventSeq(), 4)
    }
}

/// What only the SQLite store does: a file that keeps it all, a v1 file migrated, and writes
/// undone together when `atomically`'s body throws.
final class SQLiteServiceStateTests: XCTestCase {
    struct Refused: Error, Equatable {}

    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    private func event(_ user: String, at: Double = t0, _ json: String) -> StoredEvent {
        StoredEvent(user: user, at: at, kind: "summary", json: json)
    }

    func testEverythingSurvivesReopeningTheFile() throws {
        let path = directory.path("state.sqlite")
        let mark = ScheduleMark(focus: "Sleep", announced: true, through: t0 + 0.25)
        let before = Date().timeIntervalSince1970
        do {
            let store = try SQLiteStateStore(path: path)
            try store.appendEvents([event("ana", "1"), event("bo", at: t0 + 1, "2")])
            try store.setScheduleMark(user: "ana", mark)
            try store.setUserPolicy(user: "bo", "return {}")
            try store.setCursor("webhook", 1)
        }
        let store = try SQLiteStateStore(path: path)
        XCTAssertEqual(
            try store.events(after: 0, user: nil, limit: 10),
            [
                StoredEvent(seq: 1, user: "ana", at: t0, kind: "summary", json: "1"),
                StoredEvent(seq: 2, user: "bo", at: t0 + 1, kind: "summary", json: "2"),
            ])
        XCTAssertEqual(try store.lastEventSeq(), 2)
        XCTAssertEqual(try store.scheduleMark(user: "ana"), mark)
        XCTAssertEqual(try store.userPolicy(user: "bo"), "return {}")
        XCTAssertEqual(try store.cursor("webhook"), 1)
        XCTAssertEqual(try store.knownUsers(), ["ana", "bo"])
        XCTAssertEqual(try store.appendEvents([event("cy", "3")]).map(\.seq), [3], "numbering goes on")

        // As GRDB fetches the records; `updated` is the wall clock when the policy was set.
        try store.dbQueue.read { db in
            XCTAssertEqual(try EventRow.fetchAll(db).map(\.event.seq), [1, 2, 3])
            XCTAssertEqual(try ScheduleMarkRow.fetchOne(db, key: "ana")?.mark, mark)
            XCTAssertEqual(try CursorRow.fetchOne(db, key: "webhook")?.seq, 1)
            let updated = try XCTUnwrap(UserPolicyRow.fetchOne(db, key: "bo")?.updated)
            XCTAssertTrue(updated >= before - 1 && updated <= Date().timeIntervalSince1970 + 1, "\(updated)")
        }
    }

    /// Events pruned to the last one, then the file reopened: seqs are still never given twice.
    func testSeqsAreNeverGivenTwiceAcrossAReopen() throws {
        let path = directory.path("state.sqlite")
        do {
            let store = try SQLiteStateStore(path: path)
            try store.appendEvents([event("ana", at: t0 - 10, "1"), event("ana", at: t0 - 10, "2")])
            try store.prune(before: t0)
            XCTAssertEqual(try store.events(after: 0, user: nil, limit: 10), [])
        }
        let store = try SQLiteStateStore(path: path)
        XCTAssertEqual(try store.lastEventSeq(), 2)
        XCTAssertEqual(try store.appendEvents([event("ana", "3")]).map(\.seq), [3])
    }

    /// A file made by the v1 migration alone (as the previous Hush left it) opens: its rows are
    /// kept and it gains the v2 tables. A file from a newer Hush is still refused.
    func testAV1FileIsMigratedAndGainsTheNewTables() throws {
        let path = directory.path("v1.sqlite")
        func tables(_ db: Database) throws -> Set<String> {
            Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
        }
        let newTables: Set<String> = ["events", "schedule_marks", "user_policies", "cursors"]
        do {
            let v1 = try DatabaseQueue(path: path)
            try SQLiteStateStore.migrator.migrate(v1, upTo: "v1")
            try v1.write { db in
                try db.execute(
                    sql: "INSERT INTO manual_focus (user, name, since) VALUES ('old', 'Sleep', ?)", arguments: [t0])
                XCTAssertEqual(try Int.fetchOne(db, sql: "PRAGMA user_version"), 1)
                XCTAssertTrue(try tables(db).isDisjoint(with: newTables))
            }
            try v1.close()
        }

        let store = try SQLiteStateStore(path: path)
        XCTAssertEqual(try store.manualFocus(user: "old"), ManualFocus(name: "Sleep", since: t0))
        try store.dbQueue.read { db in
            XCTAssertEqual(try Int.fetchOne(db, sql: "PRAGMA user_version"), 7)
            XCTAssertEqual(
                try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"),
                ["v1", "v2", "v3", "v4", "v5", "v6", "v7"])
            XCTAssertTrue(try tables(db).isSuperset(of: newTables))
            XCTAssertEqual(
                try String.fetchAll(db, sql: "SELECT name FROM pragma_index_list('events') WHERE origin = 'c'"),
                ["events_by_user"])
            XCTAssertEqual(
                try String.fetchAll(db, sql: "SELECT name FROM pragma_index_info('events_by_user') ORDER BY seqno"),
                ["user", "seq"])
        }
        XCTAssertEqual(try store.appendEvents([event("new", "1")]).map(\.seq), [1])
        try store.setUserPolicy(user: "p", "return {}")
        XCTAssertEqual(try store.knownUsers(), ["new", "old", "p"])

        // Reopened: nothing more to migrate. Then marked by a newer Hush: refused, as before.
        XCTAssertEqual(try SQLiteStateStore(path: path).events(after: 0, user: nil, limit: 10).count, 1)
        try DatabaseQueue(path: path).write { try $0.execute(sql: "PRAGMA user_version = 8") }
        XCTAssertThrowsError(try SQLiteStateStore(path: path)) { error in
            XCTAssertEqual(storeError(error), .newerSchema(path: path, found: 8, supported: 7))
        }
    }

    /// Outside a batch, `atomically` is one transaction: a throw undoes every write of its body.
    func testAtomicallyUndoesItsWritesWhenItsBodyThrows() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        let other = try DatabaseQueue(path: path)
        try store.setCursor("webhook", 1)
        try store.apply([.deliver(note("kept", date: t0, group: "g"))])

        XCTAssertThrowsError(
            try store.atomically { () throws -> Void in
                try store.appendEvents([event("ana", "1"), event("bo", "2")])
                try store.setScheduleMark(user: "ana", ScheduleMark(focus: "Sleep", announced: true, through: t0))
                try store.setUserPolicy(user: "ana", "return {}")
                try store.setCursor("webhook", 2)
                try store.apply([.deliver(note("undone", date: t0 + 1, group: "g"))])
                XCTAssertEqual(try store.lastEventSeq(), 2, "its reads see its writes")
                XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["kept", "undone"])
                XCTAssertEqual(
                    try other.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM events") }, 0,
                    "nothing is visible before it ends")
                throw Refused()
            }
        ) { error in
            XCTAssertEqual(error as? Refused, Refused())
        }
        XCTAssertEqual(try store.events(after: 0, user: nil, limit: 10), [])
        XCTAssertEqual(try store.lastEventSeq(), 0)
        XCTAssertNil(try store.scheduleMark(user: "ana"))
        XCTAssertNil(try store.userPolicy(user: "ana"))
        XCTAssertEqual(try store.cursor("webhook"), 1)
        XCTAssertNil(try store.delivered(user: "u", app: "com.example.chat", id: "undone"))
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["kept"])
        XCTAssertEqual(try store.knownUsers(), ["u"])

        // The store goes on; a body that returns commits at once.
        XCTAssertEqual(try store.atomically { try store.appendEvents([event("ana", "again")]).map(\.seq) }, [1])
        XCTAssertEqual(try other.read { try String.fetchAll($0, sql: "SELECT json FROM events") }, ["again"])
    }

    /// Inside a batch, `atomically` is a savepoint: a throw undoes its writes alone, the batch's
    /// other writes (before and after it) are committed with the batch.
    func testAtomicallyInsideABatchUndoesOnlyItsOwnWrites() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        let other = try DatabaseQueue(path: path)
        try store.batch { () -> Void in
            expectNoThrow { try store.appendEvents([event("ana", "before")]) }
            expectNoThrow { try store.setCursor("webhook", 1) }
            do {
                try store.atomically { () throws -> Void in
                    try store.appendEvents([event("ana", "undone")])
                    try store.setCursor("webhook", 9)
                    try store.setUserPolicy(user: "ana", "return {}")
                    XCTAssertEqual(try store.cursor("webhook"), 9)
                    throw Refused()
                }
                XCTFail("did not throw")
            } catch {
                XCTAssertEqual(error as? Refused, Refused())
            }
            XCTAssertEqual(checked { try store.cursor("webhook") }, 1, "undone at once, inside the batch")
            XCTAssertNil(checked { try store.userPolicy(user: "ana") } ?? "(the read failed)")
            XCTAssertEqual(checked { try store.events(after: 0, user: nil, limit: 10).map(\.json) }, ["before"])

            // One inside another: the inner one undone alone when the outer body goes on.
            expectNoThrow {
                try store.atomically {
                    try store.setScheduleMark(user: "ana", ScheduleMark(focus: nil, announced: true, through: t0))
                    XCTAssertThrowsError(
                        try store.atomically { () throws -> Void in
                            try store.setCursor("stream", 5)
                            throw Refused()
                        })
                    XCTAssertEqual(try store.cursor("stream"), 0)
                }
            }
            expectNoThrow { try store.appendEvents([event("bo", "after")]) }
            XCTAssertEqual(
                try? other.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM events") }, 0,
                "nothing is visible before the batch commits")
        }
        XCTAssertEqual(try store.events(after: 0, user: nil, limit: 10).map(\.json), ["before", "after"])
        XCTAssertEqual(
            try other.read { try String.fetchAll($0, sql: "SELECT json FROM events ORDER BY seq") },
            [
                "before", "after",
            ])
        XCTAssertEqual(try store.cursor("webhook"), 1)
        XCTAssertEqual(try store.cursor("stream"), 0)
        XCTAssertNil(try store.userPolicy(user: "ana"))
        XCTAssertEqual(try store.scheduleMark(user: "ana"), ScheduleMark(focus: nil, announced: true, through: t0))
    }

    /// A write that fails names the file and what it did, like every other write of the store.
    func testAFailedWriteNamesTheFileAndTheAction() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        // SQLite stores NaN as NULL: it breaks the NOT NULL constraint.
        XCTAssertThrowsError(try store.appendEvents([event("ana", "ok"), event("ana", at: .nan, "bad")])) { error in
            XCTAssertTrue("\(error)".hasPrefix("state file \(path): could not record events: "), "\(error)")
        }
        XCTAssertEqual(try store.lastEventSeq(), 0, "the events are recorded together or not at all")
        try DatabaseQueue(path: path).write { try $0.execute(sql: "DROP TABLE cursors") }
        XCTAssertThrowsError(try store.cursor("webhook")) { error in
            XCTAssertTrue("\(error)".hasPrefix("state file \(path): could not read a cursor: "), "\(error)")
        }
    }
}
