import Foundation
import GRDB
import HushCore
import HushJSON
import XCTest

@testable import HushState

/// The state file itself: persistence, WAL, schema versions, refusing files that are not ours.
final class SQLiteStateStoreFileTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    func testCreatesParentDirectories() throws {
        let path = directory.path("a/b/c/state.sqlite")
        _ = try SQLiteStateStore(path: path)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
    }

    func testReopenedFileHoldsEverything() throws {
        let path = directory.path("state.sqlite")
        let ana = Person(handle: "+15550001", name: "Ana", contact: "ab-1", aliases: ["ana@example.com"])
        let delivered = [
            note("a", date: t0, group: "g"), note("b", date: t0 + 1, group: "g", relevance: 0.5, media: true),
        ]
        let queued = note("q", date: t0 + 2, expiration: t0 + 9999, summaryAt: t0 + 3600)
        let call = CallRecord(user: "u", date: t0 + 3, app: "com.apple.phone", caller: ana)
        let focus = ManualFocus(name: "Sleep", since: t0, until: t0 + 8 * 3600)
        let interaction = Interaction(
            user: "u", date: t0 - 86400, direction: .outgoing, kind: .message,
            app: "com.example.chat", people: [ana, Person(name: "No Handle")], group: "Family")
        do {
            let store = try SQLiteStateStore(path: path)
            try store.apply(delivered.map { .deliver($0) } + [.enqueue(queued), .recordCall(call)])
            try store.apply([.deliver(note("a", date: t0 + 4, title: "replaced", group: "g"))])
            try store.setManualFocus(user: "u", focus)
            try store.addInteractions([interaction])
        }
        let store = try SQLiteStateStore(path: path)
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["a", "b"])
        XCTAssertEqual(try store.delivered(user: "u", app: "com.example.chat", id: "a")?.title, "replaced")
        XCTAssertEqual(try store.delivered(user: "u", app: "com.example.chat", id: "b"), delivered[1])
        XCTAssertEqual(try store.queued(user: "u", app: "com.example.chat", id: "q"), queued)
        XCTAssertEqual(try store.queuedNotifications(user: "u"), [queued])
        XCTAssertEqual(try store.calls(user: "u", since: 0), [call])
        XCTAssertEqual(try store.manualFocus(user: "u"), focus)
        XCTAssertEqual(try store.interactions(user: "u", since: 0), [interaction])
        XCTAssertEqual(try store.recent(user: "u", since: 0).map(\.id), ["a", "b", "q", "a"])

        // The order of a group survives reopening and keeps growing at the end.
        try store.apply([.deliver(note("c", date: t0 + 5, group: "g"))])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["a", "b", "c"])
    }

    func testWALIsOnAndEveryApplyIsCommitted() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        let other = try DatabaseQueue(path: path)
        XCTAssertEqual(try other.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }, "wal")
        XCTAssertEqual(try store.dbQueue.read { try Int.fetchOne($0, sql: "PRAGMA synchronous") }, 1)  // NORMAL
        XCTAssertEqual(try store.dbQueue.read { try Int.fetchOne($0, sql: "PRAGMA foreign_keys") }, 1)
        XCTAssertEqual(try store.dbQueue.read { try Int.fetchOne($0, sql: "PRAGMA busy_timeout") }, 5000)

        let reader = try SQLiteStateStore(path: path)
        for i in 0..<50 {
            try store.apply([.deliver(note("n\(i)", date: t0 + Double(i), group: "g"))])
            // Another connection sees it at once: nothing waits in a cache for a close.
            XCTAssertNotNil(try reader.delivered(user: "u", app: "com.example.chat", id: "n\(i)"))
            XCTAssertEqual(try other.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM delivered") }, i + 1)
        }
        XCTAssertEqual(try reader.groupMembers(user: "u", groupID: "g").count, 50)
    }

    func testApplyIsAtomic() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        // SQLite stores NaN as NULL: the second change breaks a NOT NULL constraint.
        XCTAssertThrowsError(
            try store.apply([
                .deliver(note("ok", date: t0)), .enqueue(note("bad", date: .nan, summaryAt: t0)),
                .recordCall(CallRecord(user: "u", date: t0, app: "p", caller: Person())),
            ])
        ) { error in
            XCTAssertTrue("\(error)".contains("could not record an evaluation"), "\(error)")
        }
        XCTAssertNil(try store.delivered(user: "u", app: "com.example.chat", id: "ok"))
        XCTAssertEqual(try store.calls(user: "u", since: 0), [])
        XCTAssertEqual(try store.recent(user: "u", since: 0), [])
        // The store goes on working.
        try store.apply([.deliver(note("ok", date: t0))])
        XCTAssertNotNil(try store.delivered(user: "u", app: "com.example.chat", id: "ok"))
    }

    /// A batch commits its writes together: another connection sees none before the commit and
    /// all after; a failing write inside it is undone alone, and the batch goes on.
    func testABatchCommitsTogetherAndEachWriteStaysAtomic() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        let other = try DatabaseQueue(path: path)
        func othersCount() throws -> Int {
            try other.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM delivered") ?? -1 }
        }

        try store.batch { () -> Void in
            for i in 0..<10 {
                expectNoThrow { try store.apply([.deliver(note("n\(i)", date: t0 + Double(i), group: "g"))]) }
            }
            expectThrow {
                try store.apply([.deliver(note("half", date: t0)), .enqueue(note("bad", date: .nan, summaryAt: t0))])
            }
            // The batch's own reads see its writes.
            XCTAssertEqual(checked { try store.groupMembers(user: "u", groupID: "g").count }, 10)
            XCTAssertNil(checked { try store.delivered(user: "u", app: "com.example.chat", id: "half") } ?? nil)
            // A batch inside the batch joins it.
            expectNoThrow {
                try store.batch { expectNoThrow { try store.apply([.deliver(note("nested", date: t0 + 50))]) } }
            }
            XCTAssertEqual(try? othersCount(), 0, "nothing is visible before the commit")
        }
        XCTAssertEqual(try othersCount(), 11)

        // Without a batch, every write commits at once again.
        try store.apply([.deliver(note("after", date: t0 + 100))])
        XCTAssertEqual(try othersCount(), 12)
    }

    /// A batch that cannot begin (another process holds the write lock past the busy timeout)
    /// throws without running its body: nothing of it happened.
    func testABatchThatCannotBeginRunsNothing() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        try store.dbQueue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA busy_timeout = 50") }
        var ran = false
        try DatabaseQueue(path: path).inTransaction(.immediate) { _ in
            XCTAssertThrowsError(try store.batch { ran = true }) { error in
                XCTAssertTrue(
                    "\(error)".hasPrefix("state file \(path): could not begin a batch of writes: "), "\(error)")
            }
            return .commit
        }
        XCTAssertFalse(ran)
        // The lock released, the store goes on.
        try store.batch { expectNoThrow { try store.apply([.deliver(note("after"))]) } }
        XCTAssertNotNil(try store.delivered(user: "u", app: "com.example.chat", id: "after"))
    }

    /// While a write is open (here, delivering a summary), what its closure reads and writes goes
    /// through the write's own connection: GRDB's accesses are not reentrant.
    func testAWritesClosureReadsAndWritesThroughIt() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        try store.apply([
            .deliver(note("member", date: t0, group: "g")), .enqueue(note("q", date: t0, summaryAt: t0 + 60)),
        ])
        let batches = try store.deliverDueSummaries(user: "u", upTo: t0 + 60) { batch in
            XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["member"])
            XCTAssertNil(try store.queued(user: "u", app: "com.example.chat", id: "q"), "taken in this transaction")
            expectNoThrow { try store.apply([.deliver(note("inner", date: t0 + 1, group: "g"))]) }
            return batch.notifications.map { .deliver($0) }
        }
        XCTAssertEqual(batches.count, 1)
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["member", "inner"])
        XCTAssertNotNil(try store.delivered(user: "u", app: "com.example.chat", id: "q"))
    }

    func testSchemaVersionIsRecorded() throws {
        let path = directory.path("state.sqlite")
        _ = try SQLiteStateStore(path: path)
        let db = try DatabaseQueue(path: path)
        XCTAssertEqual(try db.read { try Int.fetchOne($0, sql: "PRAGMA user_version") }, SQLiteStateStore.schemaVersion)
        XCTAssertEqual(
            try db.read { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations") },
            ["v1", "v2", "v3", "v4", "v5", "v6", "v7"])
    }

    func testNewerUserVersionIsRefusedAndLeftAlone() throws {
        let path = directory.path("state.sqlite")
        try SQLiteStateStore(path: path).apply([.deliver(note("kept"))])
        try DatabaseQueue(path: path).write { try $0.execute(sql: "PRAGMA user_version = 99") }

        XCTAssertThrowsError(try SQLiteStateStore(path: path)) { error in
            XCTAssertEqual(
                storeError(error),
                .newerSchema(path: path, found: 99, supported: SQLiteStateStore.schemaVersion))
            XCTAssertEqual(
                "\(error)", "state file \(path) was written by a newer Hush (schema 99); this Hush knows up to 7")
        }
        let db = try DatabaseQueue(path: path)
        XCTAssertEqual(try db.read { try Int.fetchOne($0, sql: "PRAGMA user_version") }, 99)
        XCTAssertEqual(try db.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM delivered") }, 1)
    }

    func testUnknownMigrationIsRefused() throws {
        let path = directory.path("state.sqlite")
        _ = try SQLiteStateStore(path: path)
        try DatabaseQueue(path: path).write { try $0.execute(sql: "INSERT INTO grdb_migrations VALUES ('v8'), ('v9')") }
        XCTAssertThrowsError(try SQLiteStateStore(path: path)) { error in
            XCTAssertEqual(storeError(error), .newerSchema(path: path, found: 9, supported: 7))
        }
    }

    func testGarbageFileIsRefusedAndUntouched() throws {
        for (name, bytes) in [
            ("text", Array("hello, this is not a database\n".utf8)),
            ("random", (0..<8192).map { _ in UInt8.random(in: 0...255) }),
            ("sqlite-header-then-junk", Array("SQLite format 3\0".utf8) + [UInt8](repeating: 0xAB, count: 4096)),
        ] {
            let path = directory.path("\(name).sqlite")
            let data = Data(bytes)
            try data.write(to: URL(fileURLWithPath: path))
            XCTAssertThrowsError(try SQLiteStateStore(path: path), name) { error in
                guard case .notAStateFile(let errorPath, _)? = storeError(error) else {
                    return XCTFail("\(name): \(error)")
                }
                XCTAssertEqual(errorPath, path)
                XCTAssertTrue("\(error)".hasPrefix("\(path) is not a Hush state file ("), "\(error)")
                if name != "sqlite-header-then-junk" {
                    XCTAssertEqual("\(error)", "\(path) is not a Hush state file (file is not a database)")
                }
            }
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), data, name)
            XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"), name)
        }
    }

    func testAnotherProgramsDatabaseIsRefusedAndUntouched() throws {
        let path = directory.path("photos.sqlite")
        try DatabaseQueue(path: path).write { db in
            try db.execute(
                sql: "CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO photos (name) VALUES ('cat')"
            )
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try SQLiteStateStore(path: path)) { error in
            XCTAssertEqual(
                "\(error)", "\(path) is not a Hush state file (an SQLite database with other tables: photos)")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
    }

    func testEmptyFileBecomesAStateFile() throws {
        let path = directory.path("empty.sqlite")
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data()))
        try SQLiteStateStore(path: path).apply([.deliver(note("a"))])
        XCTAssertNotNil(try SQLiteStateStore(path: path).delivered(user: "u", app: "com.example.chat", id: "a"))
    }

    func testDirectoryAndBadRetentionAreRefused() throws {
        XCTAssertThrowsError(try SQLiteStateStore(path: directory.url.path)) { error in
            XCTAssertEqual(storeError(error), .cannotOpen(path: directory.url.path, reason: "it is a directory"))
        }
        for days in [0, -1, Double.nan] {
            XCTAssertThrowsError(try SQLiteStateStore(path: directory.path("s.sqlite"), retentionDays: days))
        }
    }

    func testAFailedReadThrowsAtOnceNamingTheFileAndTheRead() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        try store.apply([.recordCall(CallRecord(user: "u", date: t0, app: "p", caller: Person(handle: "x")))])
        try DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE calls SET caller = 'not json'") }

        XCTAssertThrowsError(try store.calls(user: "u", since: 0)) { error in
            XCTAssertTrue("\(error)".hasPrefix("state file \(path): could not read calls: "), "\(error)")
        }
        // Nothing is left to fail a later write: the store goes on.
        try store.apply([.deliver(note("later"))])
        XCTAssertNotNil(try store.delivered(user: "u", app: "com.example.chat", id: "later"))
    }

    /// A table dropped by another connection: deciding a call must read the calls (a repeated
    /// call passes the focus), so the evaluation fails with the store's error instead of deciding
    /// as if nobody had called.
    func testAnEvaluationWhoseReadFailsThrowsTheStoresErrorInsteadOfDeciding() throws {
        let path = directory.path("state.sqlite")
        let store = try SQLiteStateStore(path: path)
        let pipeline = Pipeline(
            policy: Policy(focuses: [FocusSettings(name: "Sleep", calls: .nobody, repeatedCalls: true)]))
        let sleep = EvaluationContext(focus: .on("Sleep"))
        func decideCall(at date: Double) throws -> Decision {
            var call = try Envelope.decode(
                JSONParser.parse(
                    """
                    {"app":"com.apple.phone","payload":{"aps":{"alert":"Ana"}},"communication":{"kind":"call","sender":{"handle":"+15550001"}}}
                    """), fallbackID: "call at \(date)")
            call.date = date
            let outcome = try pipeline.evaluate(
                call, now: date, context: sleep, state: store, rules: nil, clock: pipeline.defaultClock)
            try store.apply(outcome.changes)
            return outcome.decision
        }
        XCTAssertEqual(try decideCall(at: t0).delivery, .silenced)
        XCTAssertEqual(try decideCall(at: t0 + 60).breakthrough, .repeatedCall)

        try DatabaseQueue(path: path).write { try $0.execute(sql: "DROP TABLE calls") }
        XCTAssertThrowsError(try decideCall(at: t0 + 120)) { error in
            guard
                case .failed(path: path, action: "read calls", let reason)? = storeError(error)
                    ?? (error as? SQLiteStateStore.Error)
            else {
                return XCTFail("\(error)")
            }
            XCTAssertTrue(reason.contains("no such table: calls"), reason)
            XCTAssertTrue("\(error)".hasPrefix("state file \(path): could not read calls: "), "\(error)")
        }
    }

    func testPersonsRoundTripExactly() throws {
        let store = try SQLiteStateStore(path: directory.path("state.sqlite"))
        let people = [
            Person(), Person(handle: ""), Person(name: ""), Person(contact: "c"), Person(aliases: ["a", "a", ""]),
            Person(
                handle: "quote\" back\\slash \u{0} \u{1F} tab\t nl\n é 🎉 \u{2028}", name: "名前", contact: "{\"json\":1}",
                aliases: ["[", "]", "null"]),
        ]
        try store.apply(
            people.enumerated().map {
                .recordCall(CallRecord(user: "u", date: t0 + Double($0.offset), app: "p", caller: $0.element))
            })
        try store.addInteractions([Interaction(user: "u", date: t0, direction: .incoming, kind: .call, people: people)])
        XCTAssertEqual(try store.calls(user: "u", since: 0).map(\.caller), people)
        XCTAssertEqual(try store.interactions(user: "u", since: 0).first?.people, people)
    }
}

/// The store's own error inside the `HushError` its public initializer throws.
func storeError(_ error: any Error) -> SQLiteStateStore.Error? {
    (error as? HushError)?.cause as? SQLiteStateStore.Error
}
