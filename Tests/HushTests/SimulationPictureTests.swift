import Foundation
import Hush
import HushCore
import HushJSON
import HushPolicy
import HushState
import XCTest

/// The data behind `hush simulate --html` (bands, marks, counts) says what `simulate --json` says.
final class SimulationPictureTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The week of examples/ under policies/week.lua: the picture and the JSON lines of one replay.
    func replay(policy: String = "policies/week.lua", stream: String = "examples/week.jsonl") throws -> (
        SimulationPicture, [JSONValue]
    ) {
        let text = try String(contentsOf: Self.root.appendingPathComponent(policy), encoding: .utf8)
        let engine = try Engine(sources: [PolicySource(name: policy, text: text)])
        let session = try engine.makeSession(storing: InMemoryStateStore())
        let context = EvaluationContext(timezone: "Europe/Berlin", locked: true)
        let clock = session.clock(for: context)
        var items: [(line: Int, result: Result<Envelope, InputError>)] = []
        let bytes = Array(try Data(contentsOf: Self.root.appendingPathComponent(stream)))
        try LineStream(bytes: bytes).forEachLine { line, number in
            let decoded = Result { () throws(LineError) in try session.envelope(fromLine: line, number: number) }
            items.append((number, decoded.mapError(\.reason)))
        }
        var lines: [JSONValue] = []
        let picture = try session.picture(items, context: context, until: nil) { event in
            lines.append(try JSONParser.parse(event.jsonLine(clock: clock)))
        }
        return (picture, lines)
    }

    func testAMarkForEveryNotificationAsJSONDecidedIt() throws {
        let (picture, lines) = try replay()
        let decisions = lines.filter { $0["event"]?.stringValue == "notification" }.compactMap { $0["decision"] }
        XCTAssertGreaterThan(decisions.count, 300, "the example week")
        let marks = picture.users.flatMap(\.marks)
        XCTAssertEqual(marks.map(\.id), decisions.map { $0["id"]!.stringValue! })
        XCTAssertEqual(marks.map(\.delivery.rawValue), decisions.map { $0["delivery"]!.stringValue! })
        XCTAssertEqual(marks.map { $0.breakthrough?.rawValue }, decisions.map { $0["breakthrough"]?.stringValue })
        XCTAssertEqual(marks.map(\.focus), decisions.map { $0["focus"]?.stringValue })
        XCTAssertEqual(marks.map(\.reasons), decisions.map { $0["reasons"]!.arrayValue!.map { $0.stringValue! } })
        XCTAssertTrue(marks.contains { $0.breakthrough == .critical }, "the SEV1 page at night")
    }

    func testABandForEveryFocusChange() throws {
        let (picture, lines) = try replay()
        let changes = lines.filter { $0["event"]?.stringValue == "focus" }
        let bands = picture.users.flatMap(\.bands)
        let turnedOn = changes.filter { !($0["focus"]?.isNull ?? true) }
        XCTAssertEqual(bands.count, turnedOn.count)
        XCTAssertEqual(bands.map(\.focus), turnedOn.map { $0["focus"]!.stringValue! })
        XCTAssertEqual(bands.map(\.reason), turnedOn.map { $0["reason"]!.stringValue! })
        XCTAssertEqual(Set(bands.map(\.focus)), ["Sleep", "Work", "Personal"])
        // Each band ends where the next change is, and they never overlap.
        let clock = picture.clock
        let times = changes.map { $0["at"]!.stringValue! }
        for band in bands where band.endReason != nil {
            XCTAssertTrue(times.contains(clock.format(band.end)), "\(band) ends at a change")
        }
        for (a, b) in zip(bands, bands.dropFirst()) { XCTAssertLessThanOrEqual(a.end, b.start) }
        XCTAssertEqual(picture.days.count, 7, "Monday to Sunday")
    }

    func testCountsAddUpToTheDecisions() throws {
        let (picture, lines) = try replay()
        let decisions = lines.filter { $0["event"]?.stringValue == "notification" }.compactMap { $0["decision"] }
        guard let user = picture.users.first else { return XCTFail("no user") }
        func count(_ deliveries: Set<String>, focus: String?? = nil) -> Int {
            decisions.filter {
                deliveries.contains($0["delivery"]!.stringValue!)
                    && (focus == nil || $0["focus"]?.stringValue == focus!)
            }.count
        }
        XCTAssertEqual(user.total.total, decisions.count)
        XCTAssertEqual(user.total.interrupted, count(["alert"]))
        XCTAssertEqual(user.total.waited, count(["summary"]))
        XCTAssertEqual(user.total.silenced, count(["silenced"]))
        XCTAssertEqual(user.total.unseen, count(["dropped", "background", "withdrawn"]))
        XCTAssertEqual(user.perApp.reduce(0) { $0 + $1.tally.total }, decisions.count)
        for (focus, tally) in user.perFocus {
            XCTAssertEqual(tally.interrupted, count(["alert"], focus: .some(focus)), "\(focus ?? "none")")
            XCTAssertEqual(tally.silenced, count(["silenced"], focus: .some(focus)), "\(focus ?? "none")")
        }
        let sleep = user.perFocus.first { $0.focus == "Sleep" }!.tally
        XCTAssertEqual(
            sleep.brokeThrough,
            decisions.filter { $0["focus"]?.stringValue == "Sleep" && !($0["breakthrough"]?.isNull ?? true) }.count)
        // Summaries: as delivered, each with its notifications.
        let summaries = lines.filter { $0["event"]?.stringValue == "summary" }
        XCTAssertEqual(user.summaries.map(\.items.count), summaries.map { $0["notifications"]!.arrayValue!.count })
        XCTAssertEqual(
            user.summaries.flatMap { $0.items.map(\.id) },
            summaries.flatMap { $0["notifications"]!.arrayValue!.map { $0["id"]!.stringValue! } })
        XCTAssertEqual(picture.summaryTimes.count, 14, "08:00 and 18:00 on seven days")
    }

    /// Hidden previews stay hidden in the picture: the placeholder, never the text.
    func testHiddenPreviewsShowThePlaceholder() throws {
        let (picture, lines) = try replay(policy: "policies/personal.lua", stream: "examples/stream.jsonl")
        let decisions = lines.filter { $0["event"]?.stringValue == "notification" }.compactMap { $0["decision"] }
        let hidden = decisions.filter { !($0["placeholder"]?.isNull ?? true) }
        XCTAssertFalse(hidden.isEmpty, "personal.lua hides the bank's previews")
        let marks = Dictionary(picture.users.flatMap(\.marks).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        for decision in hidden {
            XCTAssertEqual(marks[decision["id"]!.stringValue!]?.text, decision["placeholder"]!.stringValue!)
        }
    }
}
