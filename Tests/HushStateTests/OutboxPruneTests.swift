import Foundation
import HushCore
import XCTest

@testable import HushState

/// What `prune(before:)` keeps of the outbox for the webhooks (`OutboxHolds`), on every kind of
/// store (`ServiceStateTests.forEachStore`): the events a webhook has not acknowledged stay however
/// old, the acknowledged ones go by age, and the cursors table's other entries (`outbox id`,
/// `configured webhook URL`, `prunes`, `alive webhook URL`) hold nothing back.
extension ServiceStateTests {
    private var hook: String { "webhook http://127.0.0.1:9/hook" }

    private func oldEvents(_ store: any StateStore, _ count: Int) throws {
        try store.appendEvents(
            (1...count).map {
                StoredEvent(user: "u\($0 % 2)", at: t0 - 1000 + Double($0), kind: "focus", json: "\($0)")
            })
    }

    private func seqs(_ store: any StateStore) throws -> [Int64] {
        try store.events(after: 0, user: nil, limit: 100).map(\.seq)
    }

    /// The bug this fixes: `outbox id` and `configured webhook URL` (1) were taken for cursors, so
    /// with a webhook configured no event was ever pruned.
    func testPruneKeepsWhatTheWebhookHasNotAcknowledgedAndDropsWhatItHas() throws {
        try forEachStore { store in
            try store.setCursor("outbox id", 0x7fff_0000_1234)
            try store.setCursor("configured " + hook, 1)
            try store.setCursor(hook, 0)
            try oldEvents(store, 6)
            try store.apply([.deliver(note("old", date: t0 - 1000)), .deliver(note("new", date: t0))])
            try store.prune(before: t0)
            XCTAssertEqual(try seqs(store), [1, 2, 3, 4, 5, 6], "down: nothing acknowledged, nothing pruned")
            XCTAssertNil(try store.delivered(user: "u", app: "com.example.chat", id: "old"), "retention as before")
            XCTAssertNotNil(try store.delivered(user: "u", app: "com.example.chat", id: "new"))

            try store.setCursor(hook, 4)
            try store.prune(before: t0)
            XCTAssertEqual(try seqs(store), [5, 6], "the acknowledged old ones go")
            try store.setCursor(hook, 6)
            try store.prune(before: t0 - 994.5)
            XCTAssertEqual(try seqs(store), [6], "acknowledged but younger than the retention: kept")
            try store.prune(before: t0)
            XCTAssertEqual(try seqs(store), [])
            XCTAssertEqual(try store.cursor("outbox id"), 0x7fff_0000_1234, "the other entries are left alone")
            XCTAssertEqual(try store.cursor("prunes"), 4, "each prune counted")
        }
    }

    func testWithoutAWebhookTheOtherEntriesHoldNothingBack() throws {
        try forEachStore { store in
            try store.setCursor("outbox id", 1)
            try store.setCursor("configured webhook http://gone.example/", 1)
            try store.setCursor("alive webhook http://gone.example/", 1)
            try oldEvents(store, 3)
            try store.prune(before: t0)
            XCTAssertEqual(try seqs(store), [], "age alone decides")
        }
    }

    /// A webhook no server sends to any more (its `--webhook` removed or changed) holds its events
    /// for the retention's worth of prunes (7 days: 168 hourly prunes), then lets go; one whose
    /// sender renews after the prunes keeps holding.
    func testAWebhookNobodySendsToLetsGoAfterTheRetentionsPrunes() throws {
        try forEachStore { store in
            let renewed = "webhook http://renewed.example/"
            try store.setCursor(hook, 1)
            try store.setCursor(renewed, 2)
            try oldEvents(store, 5)
            for _ in 1...168 {
                try store.prune(before: t0)
                try store.setCursor("alive " + renewed, try store.cursor("prunes"))
            }
            XCTAssertEqual(try seqs(store), [2, 3, 4, 5], "168 prunes missed: still held by the lowest cursor")
            try store.prune(before: t0)
            XCTAssertEqual(try seqs(store), [3, 4, 5], "the 169th: the forgotten webhook lets go")
        }
    }

    func testOnlyWebhookCursorsCount() {
        let cursors: [String: Int64] = [
            "outbox id": 1, "configured webhook a": 1, "prunes": 10, "webhook a": 7, "alive webhook a": 10,
            "webhook b": 3, "alive webhook b": 10 - 25, "stream": 2,
        ]
        XCTAssertEqual(OutboxHolds.acknowledged(cursors: cursors, prune: 10, retentionSeconds: 3600), 7)
        XCTAssertEqual(OutboxHolds.lapse(retentionSeconds: 7 * 86400), 168)
        XCTAssertEqual(OutboxHolds.lapse(retentionSeconds: 864), 24)
        XCTAssertNil(OutboxHolds.acknowledged(cursors: ["outbox id": 1, "prunes": 3], prune: 4, retentionSeconds: 1))
    }
}
