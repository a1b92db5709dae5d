import Foundation
import HushCore
import HushState
import XCTest

/// What one evaluation asks of the store, repeated: due summaries, then the reads of the pipeline
/// (collapse, group, manual focus, repeated calls for a call, `hush.recent` over 10 minutes) and
/// one `apply`. Prints evaluations per second (a debug build is several times slower than
/// release); asserts only a floor far below the expected figure, so a loaded machine passes.
final class SQLiteStateStoreThroughputTests: XCTestCase {
    static let evaluations = 1500

    func testThroughputOfEvaluationTraffic() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sqlite = try SQLiteStateStore(path: directory.path("state.sqlite"))
        let memory = InMemoryStateStore()

        let sqliteRate = try measureRate(sqlite)
        let memoryRate = try measureRate(memory)
        print(
            "state-throughput: SQLiteStateStore \(Int(sqliteRate)) evaluations/s; InMemoryStateStore \(Int(memoryRate)) evaluations/s"
                + " (\(Self.evaluations) evaluations)")
        XCTAssertGreaterThan(sqliteRate, 200)
    }

    private func measureRate(_ store: any StateStore) throws -> Double {
        let caller = Person(handle: "+15550001", name: "Ana", aliases: ["ana@example.com"])
        let start = DispatchTime.now().uptimeNanoseconds
        for i in 0..<Self.evaluations {
            let now = t0 + Double(i) * 20
            let app = "com.example.app\(i % 5)"
            let id = "n\(i % 2000)"  // some replace earlier ones in place
            let group = "\(app)/thread\(i % 40)"  // 40 groups, growing to a few dozen members
            _ = try store.takeDueSummaries(user: "u", upTo: now)
            _ = try store.delivered(user: "u", app: app, id: id)
            _ = try store.queued(user: "u", app: app, id: id)
            _ = try store.groupMembers(user: "u", groupID: group)
            _ = try store.manualFocus(user: "u")
            if i % 10 == 0 { _ = try store.calls(user: "u", since: now - 180) }
            _ = try store.recent(user: "u", since: now - 600)
            var n = StoredNotification(
                user: "u", app: app, id: id, date: now, title: "Title \(i)", body: "Body of \(i)",
                threadID: "thread\(i % 40)", groupID: group, sender: "+1555000\(i % 10)")
            var changes: [StateChange] = []
            if i % 4 == 0 {
                n.summaryAt = now + 86400
                changes.append(.enqueue(n))
            } else {
                changes.append(.deliver(n))
            }
            if i % 10 == 0 { changes.append(.recordCall(CallRecord(user: "u", date: now, app: app, caller: caller))) }
            try store.apply(changes)
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return Double(Self.evaluations) / seconds
    }
}
