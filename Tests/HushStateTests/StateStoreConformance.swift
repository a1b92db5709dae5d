import Foundation
import HushCore
import HushPostgres
import PostgresTestSupport
import XCTest

@testable import HushState

/// The behaviour every `StateStore` shares, checked against `InMemoryStateStore` (the reference)
/// and `SQLiteStateStore`, each test on a fresh store. A failure names the store.
final class StateStoreConformanceTests: XCTestCase {
    /// Makes a store kept `retentionDays`, pruning a user at least every `pruneEvery` applies.
    typealias Make =
        @Sendable (_ directory: TemporaryDirectory, _ retentionDays: Double, _ pruneEvery: Int) throws -> any StateStore

    static let stores: [(name: String, make: Make)] = [
        ("InMemoryStateStore", { _, days, every in try InMemoryStateStore(retentionDays: days, pruneEvery: every) }),
        (
            "SQLiteStateStore",
            { try SQLiteStateStore(path: $0.path("state/hush.sqlite"), retentionDays: $1, pruneEvery: $2) }
        ),
        // A database of its own on the tests' private cluster (scripts/test-postgres.sh).
        (
            "PostgresStateStore",
            { _, days, every in
                try PostgresStateStore(url: PostgresTestCluster.makeDatabase(), retentionDays: days, pruneEvery: every)
            }
        ),
    ]

    private var currentStore: String?
    private let day = 86400.0

    /// Runs `check` on a fresh store of every kind.
    func forEachStore(retentionDays: Double = 7, pruneEvery: Int = 1000, _ check: (any StateStore) throws -> Void)
        throws
    {
        try forEachKind { directory, make in try check(make(directory, retentionDays, pruneEvery)) }
    }

    /// Runs `check` with each kind of store's maker and a fresh directory.
    func forEachKind(_ check: (TemporaryDirectory, Make) throws -> Void) throws {
        for (name, make) in Self.stores {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            currentStore = name
            defer { currentStore = nil }
            do {
                try check(directory, make)
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

    func testDeliverRoundTripsEveryField() throws { try forEachStore(checkDeliverRoundTripsEveryField) }
    func testReplaceInPlaceKeepsGroupMembershipAndOrder() throws {
        try forEachStore(checkReplaceInPlaceKeepsGroupMembershipAndOrder)
    }
    func testGroupsAreKeptPerUserAndApp() throws { try forEachStore(checkGroupsAreKeptPerUserAndApp) }
    func testEnqueueReplaceAndDequeue() throws { try forEachStore(checkEnqueueReplaceAndDequeue) }
    func testTheQueueIsAskedByKeyAfterEveryKindOfChange() throws {
        try forEachStore(checkTheQueueIsAskedByKeyAfterEveryKindOfChange)
    }
    func testQueuedNotificationsBySummaryThenDate() throws {
        try forEachStore(checkQueuedNotificationsBySummaryThenDate)
    }
    func testTakeDueSummariesInPresentationOrderAndDropsExpired() throws {
        try forEachStore(checkTakeDueSummariesInPresentationOrderAndDropsExpired)
    }
    func testTiesInTheQueueKeepQueueOrder() throws { try forEachStore(checkTiesInTheQueueKeepQueueOrder) }
    func testCallsSinceOldestFirst() throws { try forEachStore(checkCallsSinceOldestFirst) }
    func testManualFocusSetReplaceAndClear() throws { try forEachStore(checkManualFocusSetReplaceAndClear) }
    func testInteractionsSince() throws { try forEachStore(checkInteractionsSince) }
    func testRecentCountsArrivalsDeliveredOrQueued() throws {
        try forEachStore(checkRecentCountsArrivalsDeliveredOrQueued)
    }
    func testPruneForgetsOldDeliveredAndCalls() throws { try forEachStore(checkPruneForgetsOldDeliveredAndCalls) }
    func testAPruneForgetsWhatArrivedOlderThanWhatTheLastOneKept() throws {
        try forEachStore(checkAPruneForgetsWhatArrivedOlderThanWhatTheLastOneKept)
    }
    func testArrivalsOutOfDateOrderArePrunedByDateAndKeepTheirOrder() throws {
        try forEachStore(checkArrivalsOutOfDateOrderArePrunedByDateAndKeepTheirOrder)
    }
    func testEmptyApplyChangesNothing() throws { try forEachStore(checkEmptyApplyChangesNothing) }
    func testReplaceIsAnUpdateNotAnArrival() throws { try forEachStore(checkReplaceIsAnUpdateNotAnArrival) }
    func testWithdrawRemovesDeliveredAndQueued() throws { try forEachStore(checkWithdrawRemovesDeliveredAndQueued) }
    func testTheSameIDInSeveralAppsIsKeptApart() throws {
        try forEachStore { try checkTheSameIDInSeveralAppsIsKeptApart($0, others: 0) }
    }
    /// The same among more notifications than a user's short list holds (`ByAppAndID.fewLimit`).
    func testTheSameIDInSeveralAppsIsKeptApartAmongMany() throws {
        try forEachStore { try checkTheSameIDInSeveralAppsIsKeptApart($0, others: 40) }
    }
    func testABatchKeepsItsWritesAndJoinsAnOpenOne() throws {
        try forEachStore(checkABatchKeepsItsWritesAndJoinsAnOpenOne)
    }
    func testARetentionThatIsNotPositiveIsRefused() throws {
        try forEachKind(checkARetentionThatIsNotPositiveIsRefused)
    }
    func testPrunesOnItsOwnBehindTheNewestDate() throws {
        try forEachStore(retentionDays: 2, checkPrunesOnItsOwnBehindTheNewestDate)
    }
    func testPrunesEveryNApplies() throws {
        try forEachStore(retentionDays: 1, pruneEvery: 10, checkPrunesEveryNApplies)
    }
    func testUsersArePrunedAgainstTheirOwnNewestDate() throws {
        try forEachStore(retentionDays: 1, checkUsersArePrunedAgainstTheirOwnNewestDate)
    }
    func testAFutureDateDoesNotPruneTheRealRows() throws { try forEachStore(checkAFutureDateDoesNotPruneTheRealRows) }

    // MARK: delivered list and groups

    private func checkDeliverRoundTripsEveryField(_ store: any StateStore) throws {
        let full = StoredNotification(
            user: "u", app: "com.example.chat", id: "1", date: t0 + 0.125, title: "Tïtle \"q\"",
            body: "line\nline\t✓ 🎉", category: "MESSAGE", threadID: "th", groupID: "g",
            summaryArgument: "Ana", summaryArgumentCount: 3, relevance: 0.75, hasMedia: true,
            expiration: t0 + 3600, summaryAt: nil, sender: "+15551234567")
        let bare = StoredNotification(
            user: "u", app: "com.example.chat", id: "2", date: t0, title: nil, body: nil,
            category: nil, threadID: nil, groupID: nil, summaryArgument: nil,
            summaryArgumentCount: 1, relevance: nil, hasMedia: false, expiration: nil,
            summaryAt: t0 + 60, sender: nil)
        try store.apply([.deliver(full), .deliver(bare)])
        XCTAssertEqual(try store.delivered(user: "u", app: "com.example.chat", id: "1"), full)
        XCTAssertEqual(try store.delivered(user: "u", app: "com.example.chat", id: "2"), bare)
        XCTAssertNil(try store.delivered(user: "u", app: "com.example.other", id: "1"))
        XCTAssertNil(try store.delivered(user: "someone else", app: "com.example.chat", id: "1"))
        XCTAssertNil(try store.queued(user: "u", app: "com.example.chat", id: "1"))
    }

    private func checkReplaceInPlaceKeepsGroupMembershipAndOrder(_ store: any StateStore) throws {
        try store.apply([.deliver(note("a", date: t0, group: "g"))])
        try store.apply([.deliver(note("b", date: t0 + 1, group: "g"))])
        try store.apply([.deliver(note("c", date: t0 + 2, group: "g"))])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["a", "b", "c"])

        // Replaced in place: same place, new content.
        try store.apply([.deliver(note("a", date: t0 + 10, title: "new a", group: "g"))])
        let members = try store.groupMembers(user: "u", groupID: "g")
        XCTAssertEqual(members.map(\.id), ["a", "b", "c"])
        XCTAssertEqual(members.first?.title, "new a")
        XCTAssertEqual(members.first?.date, t0 + 10)
        XCTAssertEqual(try store.delivered(user: "u", app: "com.example.chat", id: "a")?.title, "new a")

        // Moving to another group leaves the first and joins the second last.
        try store.apply([.deliver(note("d", date: t0 + 3, group: "h"))])
        try store.apply([.deliver(note("b", date: t0 + 11, group: "h"))])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["a", "c"])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "h").map(\.id), ["d", "b"])

        // Back to the first group: it joins last.
        try store.apply([.deliver(note("b", date: t0 + 12, group: "g"))])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["a", "c", "b"])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "h").map(\.id), ["d"])

        // Out of any group, then into one: last.
        try store.apply([.deliver(note("a", date: t0 + 13, group: nil))])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["c", "b"])
        try store.apply([.deliver(note("a", date: t0 + 14, group: "g"))])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["c", "b", "a"])
    }

    private func checkGroupsAreKeptPerUserAndApp(_ store: any StateStore) throws {
        try store.apply([
            .deliver(note("1", user: "ana", group: "g")), .deliver(note("1", user: "bo", group: "g")),
            .deliver(note("1", user: "ana", app: "com.example.mail", group: "g")),
        ])
        XCTAssertEqual(
            try store.groupMembers(user: "ana", groupID: "g").map(\.app), ["com.example.chat", "com.example.mail"])
        XCTAssertEqual(try store.groupMembers(user: "bo", groupID: "g").count, 1)
        XCTAssertEqual(try store.groupMembers(user: "cy", groupID: "g"), [])
        XCTAssertEqual(try store.groupMembers(user: "ana", groupID: "other"), [])
    }

    // MARK: summary queue

    private func checkEnqueueReplaceAndDequeue(_ store: any StateStore) throws {
        try store.apply([.enqueue(note("q1", date: t0, summaryAt: t0 + 3600))])
        XCTAssertEqual(try store.queued(user: "u", app: "com.example.chat", id: "q1")?.summaryAt, t0 + 3600)
        XCTAssertNil(try store.delivered(user: "u", app: "com.example.chat", id: "q1"))

        try store.apply([.enqueue(note("q1", date: t0 + 5, title: "replaced", summaryAt: t0 + 3600))])
        XCTAssertEqual(try store.queued(user: "u", app: "com.example.chat", id: "q1")?.title, "replaced")
        XCTAssertEqual(try store.queuedNotifications(user: "u").count, 1)

        // Replaced by one delivered now: dequeued in the same evaluation.
        try store.apply([.dequeue(user: "u", app: "com.example.chat", id: "q1"), .deliver(note("q1", date: t0 + 6))])
        XCTAssertNil(try store.queued(user: "u", app: "com.example.chat", id: "q1"))
        XCTAssertNotNil(try store.delivered(user: "u", app: "com.example.chat", id: "q1"))
        XCTAssertEqual(try store.queuedNotifications(user: "u"), [])
        // Dequeuing something absent is fine.
        try store.apply([.dequeue(user: "u", app: "com.example.chat", id: "nothing")])
    }

    /// Each way a notification leaves the queue, and comes back to it under the same key: the
    /// SQLite store answers `queued` from a set of the queue's keys kept beside it.
    /// `deliveredOrQueued` (a store's own, or the protocol's) answers as `delivered` and `queued`.
    private func checkDeliveredOrQueued(
        _ store: any StateStore, app: String, id: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let delivered = try store.delivered(user: "u", app: app, id: id)
        let queued = try store.queued(user: "u", app: app, id: id)
        let both = try store.deliveredOrQueued(user: "u", app: app, id: id)
        XCTAssertEqual(both.delivered, delivered, "delivered \(app) \(id)", file: file, line: line)
        XCTAssertEqual(both.queued, delivered == nil && queued != nil, "queued \(app) \(id)", file: file, line: line)
    }

    private func checkTheQueueIsAskedByKeyAfterEveryKindOfChange(_ store: any StateStore) throws {
        func queuedTitle(_ id: String, app: String = "com.example.chat") throws -> String? {
            try checkDeliveredOrQueued(store, app: app, id: id)
            return try store.queued(user: "u", app: app, id: id)?.title
        }
        let at = t0 + 3600
        XCTAssertNil(try queuedTitle("a"), "nothing queued yet")
        try store.apply([
            .enqueue(note("a", date: t0, title: "a1", summaryAt: at)),
            .enqueue(note("b", date: t0 + 1, title: "b1", summaryAt: at)),
            .enqueue(note("a", app: "com.example.mail", date: t0 + 2, title: "mail a", summaryAt: at + 60)),
        ])
        XCTAssertEqual(try queuedTitle("a"), "a1")
        XCTAssertEqual(try queuedTitle("a", app: "com.example.mail"), "mail a", "the same id in another app")
        XCTAssertNil(try queuedTitle("c"))

        // Replaced in the queue, then by a delivery (dequeued), then queued again.
        try store.apply([.enqueue(note("a", date: t0 + 3, title: "a2", summaryAt: at))])
        XCTAssertEqual(try queuedTitle("a"), "a2")
        try store.apply([.dequeue(user: "u", app: "com.example.chat", id: "a"), .deliver(note("a", date: t0 + 4))])
        XCTAssertNil(try queuedTitle("a"))
        XCTAssertEqual(try queuedTitle("a", app: "com.example.mail"), "mail a", "only that app's is dequeued")
        try store.apply([.enqueue(note("a", date: t0 + 5, title: "a3", summaryAt: at))])
        XCTAssertEqual(try queuedTitle("a"), "a3")

        // Withdrawn, then queued again.
        try store.apply([.withdraw(user: "u", app: "com.example.chat", id: "b")])
        XCTAssertNil(try queuedTitle("b"))
        try store.apply([.enqueue(note("b", date: t0 + 6, title: "b2", summaryAt: at))])
        XCTAssertEqual(try queuedTitle("b"), "b2")

        // Taken by its summary (the one due later stays), then queued again.
        let taken = try store.takeDueSummaries(user: "u", upTo: at).flatMap(\.notifications)
        XCTAssertEqual(Set(taken.map(\.id)), ["a", "b"])
        XCTAssertNil(try queuedTitle("a"))
        XCTAssertNil(try queuedTitle("b"))
        XCTAssertEqual(try queuedTitle("a", app: "com.example.mail"), "mail a", "not due yet")
        try store.apply([.enqueue(note("a", date: at + 1, title: "a4", summaryAt: at + 7200))])
        XCTAssertEqual(try queuedTitle("a"), "a4")
        XCTAssertEqual(try store.queuedNotifications(user: "u").map(\.title), ["mail a", "a4"])
    }

    private func checkQueuedNotificationsBySummaryThenDate(_ store: any StateStore) throws {
        try store.apply([
            .enqueue(note("late", date: t0 + 1, summaryAt: t0 + 7200)),
            .enqueue(note("b", date: t0 + 2, summaryAt: t0 + 3600)),
            .enqueue(note("a", date: t0 + 1, summaryAt: t0 + 3600)),
            .enqueue(note("other", user: "v", date: t0, summaryAt: t0 + 60)),
        ])
        XCTAssertEqual(try store.queuedNotifications(user: "u").map(\.id), ["a", "b", "late"])
        XCTAssertEqual(try store.queuedNotifications(user: "v").map(\.id), ["other"])
    }

    private func checkTakeDueSummariesInPresentationOrderAndDropsExpired(_ store: any StateStore) throws {
        let at1 = t0 + 3600, at2 = t0 + 7200
        try store.apply([
            .enqueue(note("plain-old", date: t0 + 1, summaryAt: at1)),
            .enqueue(note("plain-new", date: t0 + 2, summaryAt: at1)),
            .enqueue(note("media", date: t0 + 0.5, media: true, summaryAt: at1)),
            .enqueue(note("zero", date: t0 + 3, relevance: 0, summaryAt: at1)),  // same as missing
            .enqueue(note("high", date: t0, relevance: 1, summaryAt: at1)),
            .enqueue(note("mid-media", date: t0, relevance: 0.5, media: true, summaryAt: at1)),
            .enqueue(note("mid", date: t0 + 4, relevance: 0.5, summaryAt: at1)),
            .enqueue(note("expired-2", date: t0 + 2, expiration: at1 - 1, summaryAt: at1)),
            .enqueue(note("expired-1", date: t0 + 1, expiration: t0 + 10, summaryAt: at1)),
            .enqueue(note("expires-at-summary", date: t0 + 0.25, expiration: at1, summaryAt: at1)),
            .enqueue(note("second", date: t0 + 5, summaryAt: at2)),
            .enqueue(note("not-due", date: t0 + 6, summaryAt: at2 + 1)),
            .enqueue(note("other-user", user: "v", date: t0, summaryAt: at1)),
        ])
        XCTAssertEqual(try store.takeDueSummaries(user: "u", upTo: at1 - 1), [])

        let batches = try store.takeDueSummaries(user: "u", upTo: at2)
        XCTAssertEqual(batches.map(\.at), [at1, at2])
        XCTAssertEqual(batches.map(\.user), ["u", "u"])
        XCTAssertEqual(
            batches[0].notifications.map(\.id),
            ["high", "mid-media", "mid", "media", "zero", "plain-new", "plain-old", "expires-at-summary"])
        XCTAssertEqual(batches[0].dropped.map(\.id), ["expired-1", "expired-2"])
        XCTAssertEqual(batches[1].notifications.map(\.id), ["second"])
        XCTAssertEqual(batches[1].dropped, [])
        XCTAssertEqual(batches[0].notifications.first, note("high", date: t0, relevance: 1, summaryAt: at1))

        // Taken means gone; the rest waits.
        XCTAssertEqual(try store.takeDueSummaries(user: "u", upTo: at2), [])
        XCTAssertNil(try store.queued(user: "u", app: "com.example.chat", id: "high"))
        XCTAssertEqual(try store.queuedNotifications(user: "u").map(\.id), ["not-due"])
        XCTAssertEqual(try store.queuedNotifications(user: "v").map(\.id), ["other-user"])
        XCTAssertEqual(
            try store.takeDueSummaries(user: "u", upTo: at2 + 1).map { $0.notifications.map(\.id) }, [["not-due"]])
    }

    /// Notifications alike in everything the orders look at come in queue order: first enqueued
    /// first, a replaced one in its place.
    private func checkTiesInTheQueueKeepQueueOrder(_ store: any StateStore) throws {
        let at = t0 + 3600
        let ids = ["c", "a", "d", "b", "e"], expired = ["x-c", "x-a", "x-d", "x-b", "x-e"]
        try store.apply(ids.map { .enqueue(note($0, date: t0, summaryAt: at)) })
        try store.apply(expired.map { .enqueue(note($0, date: t0, expiration: t0 + 1, summaryAt: at)) })
        try store.apply([.enqueue(note("a", date: t0, title: "replaced", summaryAt: at))])
        try store.apply([.replace(note("d", date: t0, title: "replaced too", summaryAt: at), queued: true)])
        XCTAssertEqual(try store.queuedNotifications(user: "u").map(\.id), ids + expired)

        let batches = try store.takeDueSummaries(user: "u", upTo: at)
        XCTAssertEqual(batches.map { $0.notifications.map(\.id) }, [ids])
        XCTAssertEqual(batches.map { $0.dropped.map(\.id) }, [expired])
        XCTAssertEqual(batches.first?.notifications[1].title, "replaced")
    }

    // MARK: calls

    private func checkCallsSinceOldestFirst(_ store: any StateStore) throws {
        let ana = Person(
            handle: "+15550001", name: "Ana \"A\" Núñez", contact: "ab-1", aliases: ["ana@example.com", "+15550002"])
        let bare = Person(handle: "+15559999")
        let nobody = Person()
        try store.apply([.recordCall(CallRecord(user: "u", date: t0, app: "com.apple.phone", caller: ana))])
        try store.apply([
            .recordCall(CallRecord(user: "u", date: t0 + 60, app: "com.apple.phone", caller: bare)),
            .recordCall(CallRecord(user: "v", date: t0 + 60, app: "com.apple.phone", caller: ana)),
        ])
        try store.apply([.recordCall(CallRecord(user: "u", date: t0 + 120, app: "com.example.voip", caller: nobody))])

        XCTAssertEqual(try store.calls(user: "u", since: t0).map(\.caller), [ana, bare, nobody])
        XCTAssertEqual(try store.calls(user: "u", since: t0 + 60).map(\.date), [t0 + 60, t0 + 120])
        XCTAssertEqual(try store.calls(user: "u", since: t0 + 121), [])
        XCTAssertEqual(
            try store.calls(user: "v", since: 0),
            [CallRecord(user: "v", date: t0 + 60, app: "com.apple.phone", caller: ana)])
        XCTAssertEqual(
            try store.calls(user: "u", since: 0).last,
            CallRecord(user: "u", date: t0 + 120, app: "com.example.voip", caller: nobody))
    }

    // MARK: manual focus

    private func checkManualFocusSetReplaceAndClear(_ store: any StateStore) throws {
        XCTAssertNil(try store.manualFocus(user: "u"))
        try store.setManualFocus(user: "u", ManualFocus(name: "Work", since: t0, until: t0 + 3600))
        let work = try XCTUnwrap(store.manualFocus(user: "u"))
        XCTAssertEqual(work, ManualFocus(name: "Work", since: t0, until: t0 + 3600))
        XCTAssertTrue(work.isInForce(at: t0 + 3599))
        XCTAssertFalse(work.isInForce(at: t0 + 3600))
        XCTAssertNil(try store.manualFocus(user: "v"))

        // Every focus off by hand is a state of its own, not "no manual focus".
        try store.setManualFocus(user: "u", ManualFocus(name: nil, since: t0 + 10))
        XCTAssertEqual(try store.manualFocus(user: "u"), ManualFocus(name: nil, since: t0 + 10, until: nil))
        try store.setManualFocus(user: "u", nil)
        XCTAssertNil(try store.manualFocus(user: "u"))
        try store.setManualFocus(user: "u", nil)
        XCTAssertNil(try store.manualFocus(user: "u"))
    }

    // MARK: interactions

    private func checkInteractionsSince(_ store: any StateStore) throws {
        let ana = Person(handle: "+15550001", name: "Ana", aliases: ["ana@example.com"])
        let bo = Person(handle: "bo@example.com", contact: "ab-2")
        let donated = [
            Interaction(
                user: "u", date: t0, direction: .outgoing, kind: .message, app: "com.example.chat", people: [ana, bo],
                group: "Family"),
            Interaction(user: "u", date: t0 + 60, direction: .incoming, kind: .call, app: nil, people: [bo]),
            Interaction(user: "v", date: t0 + 30, direction: .outgoing, kind: .call, people: []),
            Interaction(user: "u", date: t0 + 120, direction: .outgoing, kind: .message, people: [ana]),
        ]
        try store.addInteractions(Array(donated[0..<2]))
        try store.addInteractions(Array(donated[2...]))
        try store.addInteractions([])
        XCTAssertEqual(try store.interactions(user: "u", since: t0), [donated[0], donated[1], donated[3]])
        XCTAssertEqual(try store.interactions(user: "u", since: t0 + 60), [donated[1], donated[3]])
        XCTAssertEqual(try store.interactions(user: "v", since: 0), [donated[2]])
        XCTAssertEqual(try store.interactions(user: "w", since: 0), [])
    }

    // MARK: recent

    private func checkRecentCountsArrivalsDeliveredOrQueued(_ store: any StateStore) throws {
        try store.apply([.deliver(note("d1", date: t0, sender: "+1555"))])
        try store.apply([.enqueue(note("q1", date: t0 + 10, summaryAt: t0 + 3600))])
        try store.apply([.deliver(note("old", date: t0 - 100))])
        XCTAssertEqual(try store.recent(user: "u", since: t0).map(\.id), ["d1", "q1"])
        XCTAssertEqual(try store.recent(user: "u", since: t0).first?.sender, "+1555")

        // Summarised: delivered with its summary instant, not counted twice; still recent.
        let batches = try store.takeDueSummaries(user: "u", upTo: t0 + 3600)
        try store.apply(batches[0].notifications.map { .deliver($0) })
        XCTAssertEqual(try store.recent(user: "u", since: t0).map(\.id), ["d1", "q1"])
        XCTAssertEqual(try store.recent(user: "u", since: t0 - 1000).map(\.id), ["d1", "q1", "old"])
        XCTAssertEqual(try store.recent(user: "v", since: 0), [])
    }

    private func checkReplaceIsAnUpdateNotAnArrival(_ store: any StateStore) throws {
        try store.apply([
            .deliver(note("d1", date: t0, title: "first", group: "g")), .deliver(note("d2", date: t0 + 1, group: "g")),
        ])
        try store.apply([.replace(note("d1", date: t0 + 5, title: "second", group: "g"), queued: false)])
        XCTAssertEqual(try store.delivered(user: "u", app: "com.example.chat", id: "d1")?.title, "second")
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["d1", "d2"], "replaced in place")
        try store.apply([.enqueue(note("q1", date: t0 + 10, summaryAt: t0 + 3600))])
        try store.apply([.replace(note("q1", date: t0 + 20, title: "newer", summaryAt: t0 + 3600), queued: true)])
        XCTAssertEqual(try store.queued(user: "u", app: "com.example.chat", id: "q1")?.title, "newer")
        XCTAssertEqual(try store.queuedNotifications(user: "u").count, 1)
        // Each counted once, when it first arrived.
        XCTAssertEqual(try store.recent(user: "u", since: t0).map(\.id), ["d1", "d2", "q1"])
    }

    private func checkWithdrawRemovesDeliveredAndQueued(_ store: any StateStore) throws {
        try store.apply([
            .deliver(note("a", date: t0, group: "g")), .deliver(note("b", date: t0 + 1, group: "g")),
            .deliver(note("c", date: t0 + 2, group: "g")), .deliver(note("b", user: "v", date: t0, group: "g")),
            .enqueue(note("q", date: t0 + 3, summaryAt: t0 + 3600)),
        ])
        XCTAssertEqual(try store.groupDigest(user: "u", groupID: "g")?.memberCount ?? 3, 3)
        try store.apply([.withdraw(user: "u", app: "com.example.chat", id: "b")])
        XCTAssertNil(try store.delivered(user: "u", app: "com.example.chat", id: "b"))
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["a", "c"])
        if let digest = try store.groupDigest(user: "u", groupID: "g") { XCTAssertEqual(digest.memberCount, 2) }
        XCTAssertNotNil(try store.delivered(user: "v", app: "com.example.chat", id: "b"), "another user's is untouched")
        try store.apply([.withdraw(user: "u", app: "com.example.chat", id: "q")])
        XCTAssertEqual(try store.queuedNotifications(user: "u"), [])
        XCTAssertEqual(
            try store.takeDueSummaries(user: "u", upTo: t0 + 7200), [], "a withdrawn held one is in no summary")
        // Nothing to withdraw: nothing changes.
        try store.apply([.withdraw(user: "u", app: "com.example.other", id: "a")])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["a", "c"])
        try store.apply([
            .withdraw(user: "u", app: "com.example.chat", id: "a"),
            .withdraw(user: "u", app: "com.example.chat", id: "c"),
        ])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g"), [])
    }

    /// The stores keep delivered notifications by id, with another app's notification of an id
    /// already held kept aside: every order of delivering, replacing, withdrawing and pruning
    /// them must keep each app's apart.
    private func checkTheSameIDInSeveralAppsIsKeptApart(_ store: any StateStore, others: Int) throws {
        let apps = ["com.example.chat", "com.example.mail", "com.example.news"]
        // Others first, of the same apps and ids of their own, none older than the prune below.
        try store.apply((0..<others).map { .deliver(note("other \($0)", app: apps[$0 % 3], date: t0 + 100)) })
        func titles() throws -> [String?] {
            try apps.map {
                try checkDeliveredOrQueued(store, app: $0, id: "x")
                return try store.delivered(user: "u", app: $0, id: "x")?.title
            }
        }
        for (i, app) in apps.enumerated() {
            try store.apply([.deliver(note("x", app: app, date: t0 + Double(i), title: "\(i) 1", group: "g"))])
        }
        XCTAssertEqual(try titles(), ["0 1", "1 1", "2 1"])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.app), apps)

        // Each replaced in place, the others untouched.
        try store.apply([.deliver(note("x", app: apps[1], date: t0 + 10, title: "1 2", group: "g"))])
        XCTAssertEqual(try titles(), ["0 1", "1 2", "2 1"])
        // The first app's withdrawn: the others stay, and are still replaced and withdrawn as theirs.
        try store.apply([.withdraw(user: "u", app: apps[0], id: "x")])
        XCTAssertEqual(try titles(), [nil, "1 2", "2 1"])
        try store.apply([.deliver(note("x", app: apps[2], date: t0 + 11, title: "2 2", group: "g"))])
        XCTAssertEqual(try titles(), [nil, "1 2", "2 2"])
        try store.apply([.deliver(note("x", app: apps[0], date: t0 + 12, title: "0 3", group: "g"))])
        XCTAssertEqual(try titles(), ["0 3", "1 2", "2 2"])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.title), ["1 2", "2 2", "0 3"])
        try store.apply([.withdraw(user: "u", app: apps[1], id: "x"), .withdraw(user: "u", app: apps[2], id: "x")])
        XCTAssertEqual(try titles(), ["0 3", nil, nil])
        try store.apply([.withdraw(user: "u", app: apps[0], id: "x")])
        XCTAssertEqual(try titles(), [nil, nil, nil])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g"), [])

        // Pruned: the old ones go whichever app's came first, the newer stay.
        try store.apply([
            .deliver(note("y", app: apps[0], date: t0 + 20)), .deliver(note("y", app: apps[1], date: t0 + 40)),
            .deliver(note("y", app: apps[2], date: t0 + 20)),
        ])
        try store.prune(before: t0 + 30)
        XCTAssertEqual(try apps.map { try store.delivered(user: "u", app: $0, id: "y")?.date }, [nil, t0 + 40, nil])
        try store.apply([.deliver(note("y", app: apps[0], date: t0 + 50))])
        XCTAssertEqual(
            try apps.map { try store.delivered(user: "u", app: $0, id: "y")?.date }, [t0 + 50, t0 + 40, nil])
        for i in 0..<others {
            XCTAssertEqual(try store.delivered(user: "u", app: apps[i % 3], id: "other \(i)")?.date, t0 + 100)
            XCTAssertNil(try store.delivered(user: "u", app: apps[(i + 1) % 3], id: "other \(i)"))
        }
    }

    // MARK: prune

    private func checkPruneForgetsOldDeliveredAndCalls(_ store: any StateStore) throws {
        let ana = Person(handle: "+15550001")
        try store.apply([
            .deliver(note("old", date: t0 - 10, group: "g")), .deliver(note("new", date: t0, group: "g")),
            .deliver(note("old-v", user: "v", date: t0 - 10)),
            .enqueue(note("queued-old", date: t0 - 10, summaryAt: t0 + 100)),
            .recordCall(CallRecord(user: "u", date: t0 - 10, app: "phone", caller: ana)),
            .recordCall(CallRecord(user: "u", date: t0, app: "phone", caller: ana)),
        ])
        try store.addInteractions([
            Interaction(user: "u", date: t0 - 10, direction: .outgoing, kind: .call, people: [ana])
        ])
        try store.prune(before: t0)

        XCTAssertNil(try store.delivered(user: "u", app: "com.example.chat", id: "old"))
        XCTAssertNil(try store.delivered(user: "v", app: "com.example.chat", id: "old-v"))
        XCTAssertNotNil(try store.delivered(user: "u", app: "com.example.chat", id: "new"))
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["new"])
        XCTAssertEqual(try store.calls(user: "u", since: 0).map(\.date), [t0])
        XCTAssertEqual(try store.recent(user: "u", since: 0).map(\.id), ["new"])
        // The queue and interactions are not the delivered list: kept.
        XCTAssertNotNil(try store.queued(user: "u", app: "com.example.chat", id: "queued-old"))
        XCTAssertEqual(try store.interactions(user: "u", since: 0).count, 1)
    }

    /// A store may skip a prune that cannot find anything (the in-memory store keeps the oldest
    /// delivered date, exact after a prune): a notification delivered later with an older date, or
    /// one replaced by an older version, is still forgotten by the next prune.
    private func checkAPruneForgetsWhatArrivedOlderThanWhatTheLastOneKept(_ store: any StateStore) throws {
        func delivered() throws -> [String] {
            try ["a", "b", "c", "older", "x"].filter {
                try store.delivered(user: "u", app: "com.example.chat", id: $0) != nil
            }
        }
        try store.apply([
            .deliver(note("x", date: t0 - 30, group: "g")), .deliver(note("a", date: t0, group: "g")),
            .deliver(note("b", date: t0 + 5, group: "g")), .deliver(note("c", date: t0 + 10, group: "g")),
        ])
        try store.prune(before: t0 - 25)
        XCTAssertEqual(try delivered(), ["a", "b", "c"])
        try store.prune(before: t0 - 20)  // nothing is older: may be skipped
        try store.apply([.deliver(note("older", date: t0 - 10, group: "g"))])
        try store.prune(before: t0 - 5)
        XCTAssertEqual(try delivered(), ["a", "b", "c"])
        try store.prune(before: t0 + 1)  // what the last prune kept is older than this
        XCTAssertEqual(try delivered(), ["b", "c"])
        try store.apply([.replace(note("b", date: t0 - 20, group: "g"), queued: false)])
        try store.prune(before: t0 + 1)
        XCTAssertEqual(try delivered(), ["c"])
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["c"])
    }

    /// Arrivals whose dates go back (a service's requests reach its state thread out of the order
    /// their clocks were read in): a prune that finds nothing older keeps them all, in arrival
    /// order, and one written later with an older date still goes at the next prune that reaches it.
    private func checkArrivalsOutOfDateOrderArePrunedByDateAndKeepTheirOrder(_ store: any StateStore) throws {
        try store.apply([.deliver(note("a", date: t0 + 10)), .deliver(note("b", date: t0))])
        try store.apply([.deliver(note("c", date: t0 + 20))])
        try store.prune(before: t0 - 5)
        XCTAssertEqual(try store.recent(user: "u", since: 0).map(\.id), ["a", "b", "c"])
        try store.apply([.deliver(note("d", date: t0 - 10)), .deliver(note("e", date: t0 + 30))])
        XCTAssertEqual(try store.recent(user: "u", since: 0).map(\.id), ["a", "b", "c", "d", "e"])
        try store.prune(before: t0 - 5)
        XCTAssertEqual(try store.recent(user: "u", since: 0).map(\.id), ["a", "b", "c", "e"])
        try store.prune(before: t0 + 5)
        XCTAssertEqual(try store.recent(user: "u", since: 0).map(\.id), ["a", "c", "e"])
        XCTAssertEqual(try store.recent(user: "u", since: t0 + 15).map(\.id), ["c", "e"])
    }

    // MARK: batches

    private func checkABatchKeepsItsWritesAndJoinsAnOpenOne(_ store: any StateStore) throws {
        let members = try store.batch { () -> [String] in
            expectNoThrow { try store.apply([.deliver(note("a", date: t0, group: "g"))]) }
            let inner = try? store.batch {
                expectNoThrow { try store.apply([.deliver(note("b", date: t0 + 1, group: "g"))]) }
                return 2
            }
            XCTAssertEqual(inner, 2)
            return (try? store.groupMembers(user: "u", groupID: "g").map(\.id)) ?? ["(the group could not be read)"]
        }
        XCTAssertEqual(members, ["a", "b"], "a batch reads its own writes")
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["a", "b"])
        XCTAssertEqual(try store.batch { 42 }, 42, "an empty batch")
    }

    // MARK: retention

    /// 0, a negative number or NaN is an error, not some other retention: whoever asked for it is told.
    private func checkARetentionThatIsNotPositiveIsRefused(_ directory: TemporaryDirectory, _ make: Make) throws {
        for days: Double in [0, -1, -.infinity, .nan] {
            XCTAssertThrowsError(try make(directory, days, 1000), "\(days) days") { error in
                XCTAssertTrue(
                    "\(error)".hasSuffix("retention must be a positive number of days, got \(days)"), "\(error)")
            }
        }
        XCTAssertNoThrow(try make(directory, 0.5, 1000))
        XCTAssertNoThrow(try make(directory, .infinity, 1000), "kept for ever")
    }

    /// Delivered notifications, arrivals and calls older than the retention behind the user's
    /// newest date go; the queue stays, and interactions stay as long as suggestions look back.
    private func checkPrunesOnItsOwnBehindTheNewestDate(_ store: any StateStore) throws {
        let ana = Person(handle: "+1555")
        try store.apply([
            .deliver(note("old", date: t0, group: "g")),
            .enqueue(note("queued", date: t0, summaryAt: t0 + 30 * day)),
            .recordCall(CallRecord(user: "u", date: t0, app: "phone", caller: ana)),
        ])
        try store.addInteractions([
            Interaction(user: "u", date: t0 - 100 * day, direction: .outgoing, kind: .call, people: [ana]),
            Interaction(user: "u", date: t0 - 10 * day, direction: .outgoing, kind: .call, people: [ana]),
        ])
        try store.apply([.deliver(note("kept", date: t0 + 1 * day, group: "g"))])
        XCTAssertNotNil(try store.delivered(user: "u", app: "com.example.chat", id: "old"), "within the retention")

        try store.apply([.deliver(note("new", date: t0 + 3 * day, group: "g"))])
        XCTAssertNil(try store.delivered(user: "u", app: "com.example.chat", id: "old"))
        XCTAssertEqual(try store.groupMembers(user: "u", groupID: "g").map(\.id), ["kept", "new"])
        XCTAssertEqual(try store.calls(user: "u", since: 0), [])
        XCTAssertEqual(try store.recent(user: "u", since: 0).map(\.id), ["kept", "new"])
        XCTAssertNotNil(try store.queued(user: "u", app: "com.example.chat", id: "queued"))
        XCTAssertEqual(try store.interactions(user: "u", since: 0).map(\.date), [t0 - 10 * day])
    }

    /// Without a day passing, a user is pruned every `pruneEvery` applies that touch them.
    private func checkPrunesEveryNApplies(_ store: any StateStore) throws {
        func isDelivered(_ id: String) throws -> Bool {
            try store.delivered(user: "u", app: "com.example.chat", id: id) != nil
        }
        try store.apply([.deliver(note("first", date: t0))])  // a new user: pruned at once
        try store.apply([.deliver(note("old", date: t0 - 2 * day))])  // apply 1 since
        for i in 2..<10 {
            try store.apply([
                .deliver(note("x\(i)", date: t0 + Double(i))), .deliver(note("y\(i)", date: t0 + Double(i))),
            ])
            try store.apply([.deliver(note("other-user", user: "v", date: t0 + Double(i)))])
            XCTAssertTrue(try isDelivered("old"), "pruned early, at apply \(i)")
        }
        try store.apply([.deliver(note("x10", date: t0 + 10))])  // apply 10: prune
        XCTAssertFalse(try isDelivered("old"))
        XCTAssertTrue(try isDelivered("first"))
        XCTAssertEqual(try store.recent(user: "u", since: 0).map(\.id).first, "first")
    }

    private func checkUsersArePrunedAgainstTheirOwnNewestDate(_ store: any StateStore) throws {
        try store.apply([.deliver(note("b-old", user: "b", date: t0))])
        try store.apply([.deliver(note("a", user: "a", date: t0 + 30 * day))])
        try store.apply([
            .deliver(note("a", user: "a", date: t0 + 31 * day)), .deliver(note("b-new", user: "b", date: t0 + 1)),
        ])
        XCTAssertNotNil(try store.delivered(user: "b", app: "com.example.chat", id: "b-old"))
    }

    /// A date far in the future (a bad clock, a typo) counts as tomorrow's.
    private func checkAFutureDateDoesNotPruneTheRealRows(_ store: any StateStore) throws {
        let now = Date().timeIntervalSince1970
        try store.apply([.deliver(note("today", date: now - 3600))])
        try store.apply([.recordCall(CallRecord(user: "u", date: now + 10 * 365 * day, app: "phone", caller: Person()))]
        )
        try store.apply([.deliver(note("typo", date: now + 20 * 365 * day))])
        XCTAssertNotNil(try store.delivered(user: "u", app: "com.example.chat", id: "today"))
    }

    private func checkEmptyApplyChangesNothing(_ store: any StateStore) throws {
        try store.apply([])
        XCTAssertEqual(try store.recent(user: "u", since: 0), [])
        XCTAssertEqual(try store.takeDueSummaries(user: "u", upTo: .greatestFiniteMagnitude), [])
    }
}
