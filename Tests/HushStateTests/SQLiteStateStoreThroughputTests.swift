import Foundation
import HushCore
import HushState
import XCTest

/// What one evaluation asks of the store, repeated: the reads of the pipeline (collapse, group,
/// repeated calls, manual focus, `hush.recent`) and one `apply`. Prints evaluations per second;
/// asserts only a floor far below the expected figure, so a loaded machine does not fail it.
final class SQLiteStateStoreThroughputTests: XCTestCase {
    static let evaluations = 3000

    func testThroughputOfEvaluationTraffic() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sqlite = try SQLiteStateStore(path: directory.path("state.sqlite"))
        let memory = InMemoryStateStore()

        let sqliteRate = try measureRate(sqlite)
        let memoryRate = try measureRate(memory)
        print("state-throughput: SQLiteStateStore \(Int(sqliteRate)) evaluations/s; InMemoryStateStore \(Int(memoryRate)) evaluations/s"
              + " (\(Self.evaluations) evaluations: 6 reads + 1 apply each)")
        XCTAssertGreaterThan(sqliteRate, 200)
    }

    private func measureRate(_ store: any StateStore) throws -> Double {
        let caller = Person(handle: "+15550001", name: "Ana", aliases: ["ana@example.com"])
        let start = DispatchTime.now().uptimeNanoseconds
        for i in 0..<Self.evaluations {
            let now = t0 + Double(i) * 20
            let app = "com.example.app\(i % 5)"
            let id = "n\(i % 2000)"                // some replace earlier ones in place
            let group = "\(app)/thread\(i % 40)"   // groups of up to ~75 members
            _ = store.delivered(user: "u", app: app, id: id)
            _ = store.queued(user: "u", app: app, id: id)
            _ = store.groupMembers(user: "u", groupID: group)
            _ = store.calls(user: "u", since: now - 180)
            _ = store.manualFocus(user: "u")
            _ = store.recent(user: "u", since: now - 3600)
            var n = StoredNotification(user: "u", app: app, id: id, date: now, title: "Title \(i)", body: "Body of \(i)",
                                       threadID: "thread\(i % 40)", groupID: group, sender: "+1555000\(i % 10)")
            var changes: [StateChange] = []
            if i % 4 == 0 {
                n.summaryAt = now + 3600
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
