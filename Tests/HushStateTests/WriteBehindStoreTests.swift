import Foundation
import GRDB
import HushCore
import XCTest

@testable import HushState

/// Write-behind (`SQLiteStateStore+WriteBehind.swift`): writes recorded while deciding, committed by
/// a writer of their own, must land exactly as the ordinary way writes them, or not at all.
final class WriteBehindStoreTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    /// Runs `body`, failing the test when it throws (inside the non-throwing closures of a batch).
    private func ok(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) {
        do { try body() } catch { XCTFail("\(error)", file: file, line: line) }
    }

    /// Every kind of change an evaluation makes, over two users.
    private func changes(_ round: Int) -> [[StateChange]] {
        let d = t0 + Double(round) * 60
        return [
            [.deliver(note("a\(round)", date: d, group: "g"))],
            [.enqueue(note("q\(round)", user: "v", date: d, summaryAt: d + 3600))],
            [.deliver(note("a\(round)", date: d + 1, title: "edited", group: "h"))],
            [.recordCall(CallRecord(user: "u", date: d, app: "com.apple.mobilephone", caller: Person(handle: "mum")))],
            [.replace(note("q\(round)", user: "v", date: d + 2, title: "replaced", summaryAt: d + 3600), queued: true)],
            [.withdraw(user: "u", app: "com.example.chat", id: "a\(round - 1)")],
            [.dequeue(user: "v", app: "com.example.chat", id: "q\(round - 1)")],
        ]
    }

    /// What the file holds, table by table, as text (the random user versions left out).
    private func contents(_ path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try ["delivered", "queue", "arrivals", "calls", "retention", "events"].map { table in
                let columns = table == "events" ? "user, at, kind, json" : "*"
                return try Row.fetchAll(db, sql: "SELECT \(columns) FROM \(table) ORDER BY 1, 2")
                    .map(\.description).joined(separator: "\n")
            }
        }
    }

    func testRecordedWritesLandAsTheOrdinaryWayWritesThem() throws {
        let ordinaryPath = directory.path("ordinary.sqlite")
        let behindPath = directory.path("behind.sqlite")
        let ordinary = try SQLiteStateStore(path: ordinaryPath)
        let behind = try SQLiteStateStore(path: behindPath)
        let writer = try behind.makeBackgroundWriter()
        for round in 1...3 {
            try ordinary.batch {
                for change in changes(round) { ok { try ordinary.apply(change) } }
            }
            let log = behind.recordingWrites {
                for change in changes(round) { ok { try behind.apply(change) } }
                // Reads inside see the batch's own writes, from memory.
                XCTAssertEqual(try? behind.groupMembers(user: "u", groupID: "h").map(\.id), ["a\(round)"])
            }
            let recorded = try XCTUnwrap(log)
            XCTAssertGreaterThan(recorded.count, 6)
            writer.submit(recorded)
            guard case .committed = writer.wait() else { return XCTFail("round \(round) did not commit") }
        }
        XCTAssertEqual(try contents(behindPath), try contents(ordinaryPath))
        // Another connection reads what was written behind.
        let other = try SQLiteStateStore(path: behindPath)
        XCTAssertEqual(try other.groupMembers(user: "u", groupID: "h").map(\.id), ["a3"])
        XCTAssertEqual(try other.queuedNotifications(user: "v").map(\.title), ["replaced"])
    }

    func testAnotherConnectionCommittingMeanwhileIsAConflict() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        let writer = try store.makeBackgroundWriter()
        let log = try XCTUnwrap(store.recordingWrites { ok { try store.apply(changes(1)[0]) } })
        // Another process sets a focus between the decision and its commit.
        try SQLiteStateStore(path: path).setManualFocus(user: "u", ManualFocus(name: "Sleep", since: t0))
        writer.submit(log)
        guard case .conflict = writer.wait() else { return XCTFail("no conflict") }
        store.forgetSpeculation(restoring: nil)
        XCTAssertNil(try store.delivered(user: "u", app: "com.example.chat", id: "a1"))
        XCTAssertEqual(try store.manualFocus(user: "u")?.name, "Sleep")
        // Taken as the new baseline, the next log commits.
        try writer.rebaseline()
        let again = try XCTUnwrap(store.recordingWrites { ok { try store.apply(changes(1)[0]) } })
        writer.submit(again)
        guard case .committed = writer.wait() else { return XCTFail("did not commit") }
        XCTAssertNotNil(try SQLiteStateStore(path: path).delivered(user: "u", app: "com.example.chat", id: "a1"))
    }

    func testALogThatFailsWritesNothing() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        try store.dbQueue.write { db in
            try db.execute(
                sql: """
                    CREATE TRIGGER fail AFTER INSERT ON delivered WHEN new.id = 'bad'
                    BEGIN SELECT RAISE(ABORT, 'refused'); END;
                    """)
        }
        let writer = try store.makeBackgroundWriter()
        let log = try XCTUnwrap(
            store.recordingWrites {
                ok { try store.apply([.deliver(note("good", date: t0))]) }
                ok { try store.apply([.deliver(note("bad", date: t0 + 1))]) }
            })
        writer.submit(log)
        guard case .failed(let error) = writer.wait() else { return XCTFail("the log committed") }
        XCTAssertTrue("\(error)".contains("refused"), "\(error)")
        store.forgetSpeculation(restoring: nil)
        XCTAssertNil(try store.delivered(user: "u", app: "com.example.chat", id: "good"))
        XCTAssertEqual(try store.recent(user: "u", since: 0).count, 0)
    }

    /// A write that would bypass the log (a service write) cannot land outside a transaction:
    /// the batch is left to be decided again.
    func testAWriteTheLogCannotHoldLeavesTheBatchToTheOrdinaryWay() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        let log = store.recordingWrites {
            let refused = (try? store.setManualFocus(user: "u", ManualFocus(name: "Sleep", since: t0))) == nil
            XCTAssertTrue(refused)
        }
        XCTAssertNil(log)
        store.forgetSpeculation(restoring: nil)
        XCTAssertNil(try store.manualFocus(user: "u"))
        // The connection writes again afterwards.
        ok { try store.setManualFocus(user: "u", ManualFocus(name: "Sleep", since: t0)) }
    }

    /// Arrivals are not loaded for a write (they are most of the rows): read while a write of
    /// theirs is pending, they are the file's with the pending ones on top, in order.
    func testArrivalsReadWhileTheirWritesArePendingIncludeThem() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        try store.apply([.deliver(note("old", date: t0))])
        store.forgetSpeculation(restoring: nil)
        let writer = try store.makeBackgroundWriter()
        let first = try XCTUnwrap(store.recordingWrites { ok { try store.apply(changes(1)[0]) } })
        XCTAssertNil(store.userCache.users["u"]?.arrivals)
        writer.submit(first)
        // The next batch, decided while the first may still be committing.
        let second = store.recordingWrites {
            XCTAssertEqual(try? store.recent(user: "u", since: 0).map(\.id), ["old", "a1"])
            ok { try store.apply(changes(2)[0]) }
            XCTAssertEqual(try? store.recent(user: "u", since: 0).map(\.id), ["old", "a1", "a2"])
        }
        guard case .committed = writer.wait() else { return XCTFail("did not commit") }
        writer.submit(try XCTUnwrap(second))
        guard case .committed = writer.wait() else { return XCTFail("did not commit") }
        XCTAssertEqual(try SQLiteStateStore(path: directory.path("state.sqlite")).recent(user: "u", since: 0).count, 3)
    }

    /// The batch before may be committed by the time this one reads the arrivals: they are not
    /// counted twice (the file already holds them).
    func testArrivalsOfABatchCommittedMeanwhileAreNotCountedTwice() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        try store.apply([.deliver(note("old", date: t0))])
        store.forgetSpeculation(restoring: nil)
        let writer = try store.makeBackgroundWriter()
        let first = try XCTUnwrap(store.recordingWrites { ok { try store.apply(changes(1)[0]) } })
        writer.submit(first)
        guard case .committed = writer.wait() else { return XCTFail("did not commit") }
        let second = store.recordingWrites {
            XCTAssertEqual(try? store.recent(user: "u", since: 0).map(\.id), ["old", "a1"])
        }
        XCTAssertNotNil(second)
    }

    /// Two batches may be in flight while a third is decided, and the file may hold neither, the
    /// first, or both when the third reads the arrivals: each pending one is counted once, also
    /// when the second wrote the user without an arrival (a call: no pending row, a new version).
    func testArrivalsReadWithTwoBatchesInFlightCountEachOnce() throws {
        for (secondArrives, committed) in [true, false].flatMap({ arrives in (0...2).map { (arrives, $0) } }) {
            let path = directory.path("state-\(secondArrives)-\(committed).sqlite")
            let store = try SQLiteStateStore(path: path)
            try store.apply([.deliver(note("old", date: t0))])
            store.forgetSpeculation(restoring: nil)
            let writer = try store.makeBackgroundWriter()
            var logs = [try XCTUnwrap(store.recordingWrites { ok { try store.apply(changes(1)[0]) } })]
            let second = changes(2)[secondArrives ? 0 : 3]
            logs.append(try XCTUnwrap(store.recordingWrites { ok { try store.apply(second) } }))
            for log in logs.prefix(committed) {
                writer.submit(log)
                guard case .committed = writer.wait() else { return XCTFail("did not commit") }
            }
            XCTAssertNil(store.userCache.users["u"]?.arrivals)
            let expected = secondArrives ? ["old", "a1", "a2"] : ["old", "a1"]
            let third = store.recordingWrites {
                XCTAssertEqual(
                    try? store.recent(user: "u", since: 0).map(\.id), expected,
                    "\(committed) committed, the second \(secondArrives ? "an arrival" : "a call")")
                ok { try store.apply(changes(3)[0]) }
            }
            for log in logs.dropFirst(committed) + [try XCTUnwrap(third)] {
                writer.submit(log)
                guard case .committed = writer.wait() else { return XCTFail("did not commit") }
            }
            for _ in 0..<3 { store.batchCommitted() }
            let kept = try SQLiteStateStore(path: path).recent(user: "u", since: 0)
            XCTAssertEqual(kept.map(\.id), expected + ["a3"])
        }
    }

    /// When a log does not commit, the writer runs none queued after it (they were decided on top
    /// of it) until it takes the file's state again.
    func testALogQueuedAfterOneThatDidNotCommitIsNotRun() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        let writer = try store.makeBackgroundWriter()
        let first = try XCTUnwrap(store.recordingWrites { ok { try store.apply(changes(1)[0]) } })
        let second = try XCTUnwrap(store.recordingWrites { ok { try store.apply(changes(2)[0]) } })
        // Another connection commits: the first log conflicts.
        try SQLiteStateStore(path: path).setManualFocus(user: "w", ManualFocus(name: "Sleep", since: t0))
        writer.submit(first)
        writer.submit(second)
        guard case .conflict = writer.wait() else { return XCTFail("the first did not conflict") }
        guard case .notRun = writer.wait() else { return XCTFail("the second was run") }
        try writer.rebaseline()
        store.forgetSpeculation(restoring: nil)
        XCTAssertEqual(try SQLiteStateStore(path: path).recent(user: "u", since: 0).count, 0)
        let third = try XCTUnwrap(store.recordingWrites { ok { try store.apply(changes(3)[0]) } })
        writer.submit(third)
        guard case .committed = writer.wait() else { return XCTFail("did not commit after rebaseline") }
        XCTAssertEqual(try SQLiteStateStore(path: path).recent(user: "u", since: 0).map(\.id), ["a3"])
    }

    /// A batch decided again starts from the retention bookkeeping it was first decided from.
    func testForgettingABatchRestoresTheRetentionBookkeeping() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        try store.apply([.deliver(note("old", date: t0))])
        let before = store.retentionBook
        let mark = store.retentionMark()
        _ = store.recordingWrites {
            ok { try store.apply([.deliver(note("new", date: t0 + 86_400))]) }
            ok { try store.apply([.deliver(note("v1", user: "v", date: t0))]) }
        }
        XCTAssertNotEqual(store.retentionBook, before)
        store.forgetSpeculation(restoring: mark)
        XCTAssertEqual(store.retentionBook, before)
    }

    /// The cache starts over, between batches, only once it is full AND a user not in it was
    /// needed (as the ordinary way starts over): users whose rows alone fill it are not loaded
    /// again before every batch.
    func testAFullCacheStartsOverOnlyWhenAUserNotInItIsNeeded() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        store.cacheRowLimit = 20
        let writer = try store.makeBackgroundWriter()
        func batch(_ users: [String], _ round: Int) throws {
            let log = store.recordingWrites {
                for user in users {
                    for i in 0..<10 { ok { try store.apply([.deliver(note("\(user)-\(round)-\(i)", user: user))]) } }
                }
            }
            writer.submit(try XCTUnwrap(log))
            guard case .committed = writer.wait() else { return XCTFail("round \(round) did not commit") }
            store.batchCommitted()
        }
        try batch(["u", "v"], 1)
        try batch(["u", "v"], 2)
        XCTAssertGreaterThan(store.cachedRows, store.cacheRowLimit)
        XCTAssertFalse(store.cacheIsFull, "every user needed is in memory")
        try batch(["w"], 3)
        XCTAssertTrue(store.cacheIsFull, "full, and a user not in memory was loaded")
        store.restartCache()
        XCTAssertFalse(store.cacheIsFull)
        XCTAssertEqual(store.cachedRows, 0)
        // Loaded again from the file, with what was written behind.
        try batch(["u"], 4)
        XCTAssertEqual(try store.recent(user: "u", since: 0).count, 30)
        XCTAssertFalse(store.cacheIsFull)
    }
}
