import Foundation
import HushCore
import HushState
import XCTest

/// Two stores on one file (as two `hush` processes would have), used from two threads at once.
final class SQLiteStateStoreConcurrencyTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    func testTwoStoresWritingAtOnceLoseNothing() throws {
        let path = directory.path("state.sqlite")
        _ = try SQLiteStateStore(path: path)
        let errors = ErrorBox()
        let applies = 300
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            do {
                let store = try SQLiteStateStore(path: path)
                for i in 0..<applies {
                    let date = t0 + Double(i)
                    try store.apply([
                        .deliver(note("w\(worker)-\(i)", date: date, group: "g\(worker)")),
                        .deliver(note("shared-\(i % 10)", date: date, group: "shared")),
                        .enqueue(note("q\(worker)-\(i)", date: date, summaryAt: date + 60)),
                        .recordCall(
                            CallRecord(user: "u", date: date, app: "phone", caller: Person(handle: "w\(worker)"))),
                    ])
                    if i % 30 == 0 {
                        try store.addInteractions(
                            (0..<20).map {
                                Interaction(
                                    user: "u", date: date + Double($0), direction: .outgoing, kind: .message,
                                    people: [Person(handle: "w\(worker)-\(i)-\($0)")])
                            })
                    }
                    if i % 7 == 0 {
                        _ = try store.groupMembers(user: "u", groupID: "shared")
                        _ = try store.calls(user: "u", since: date - 180)
                    }
                }
                try store.setManualFocus(user: "w\(worker)", ManualFocus(name: "Work", since: t0))
            } catch {
                errors.add(error)
            }
        }
        XCTAssertEqual(errors.all, [])

        let store = try SQLiteStateStore(path: path)
        for worker in 0..<2 {
            XCTAssertEqual(
                try store.groupMembers(user: "u", groupID: "g\(worker)").map(\.id),
                (0..<applies).map { "w\(worker)-\($0)" })
            XCTAssertEqual(
                try store.calls(user: "u", since: 0).filter { $0.caller.handle == "w\(worker)" }.count, applies)
            XCTAssertNotNil(try store.manualFocus(user: "w\(worker)"))
        }
        XCTAssertEqual(
            Set(try store.groupMembers(user: "u", groupID: "shared").map(\.id)), Set((0..<10).map { "shared-\($0)" }))
        XCTAssertEqual(try store.queuedNotifications(user: "u").count, 2 * applies)
        XCTAssertEqual(try store.interactions(user: "u", since: 0).count, 2 * 10 * 20)
        XCTAssertEqual(try store.recent(user: "u", since: 0).count, 2 * applies * 3)
    }

    func testConcurrentTakersTakeEachSummaryOnce() throws {
        let path = directory.path("state.sqlite")
        let count = 400
        try SQLiteStateStore(path: path).apply(
            (0..<count).map { .enqueue(note("q\($0)", date: t0, summaryAt: t0 + Double($0))) })
        let taken = ErrorBox()  // collects ids as strings
        let errors = ErrorBox()
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            do {
                let store = try SQLiteStateStore(path: path)
                for step in stride(from: 0, through: count, by: 3) {
                    for batch in try store.takeDueSummaries(user: "u", upTo: t0 + Double(step)) {
                        for n in batch.notifications { taken.add(TakenID(id: n.id)) }
                    }
                }
            } catch {
                errors.add(error)
            }
        }
        XCTAssertEqual(errors.all, [])
        XCTAssertEqual(taken.all.count, count)
        XCTAssertEqual(Set(taken.all).count, count)
    }

    /// Creating a file races: who migrates, who switches it to WAL (which answers SQLITE_BUSY at
    /// once, without the busy handler).
    func testOpeningANewFileFromThreeThreadsAtOnce() throws {
        for attempt in 0..<50 {
            let path = directory.path("new-\(attempt)/state.sqlite")
            let errors = ErrorBox()
            DispatchQueue.concurrentPerform(iterations: 3) { worker in
                do {
                    try SQLiteStateStore(path: path).apply([.deliver(note("w\(worker)"))])
                } catch {
                    errors.add(error)
                }
            }
            XCTAssertEqual(errors.all, [], "attempt \(attempt)")
            XCTAssertEqual(try SQLiteStateStore(path: path).recent(user: "u", since: 0).count, 3)
        }
    }
}

private struct TakenID: Error, CustomStringConvertible {
    var id: String
    var description: String { id }
}
