import HushCore
import HushJSON
import XCTest

/// `Decision.write(to:)` writes in place, literal by literal: held here to the plain way of writing
/// the same line, the writer's methods one after another, over every value of its enums, every
/// optional present and absent, texts to escape and to cut, and a line longer than its first room.
final class DecisionJSONTests: XCTestCase {
    /// The line written the plain way (docs/reference.md, "Decision").
    static func reference(_ d: Decision) -> String {
        var w = JSONWriter()
        w.raw("{\"id\":")
        w.writeString(d.id)
        w.raw(",\"app\":")
        w.writeString(d.app)
        w.raw(",\"user\":")
        w.writeString(d.user)
        w.raw(",\"delivery\":")
        w.writeString(d.delivery.rawValue)
        w.raw(",\"level\":")
        w.writeString(d.level.rawValue)
        w.raw(",\"requested_level\":")
        w.writeString(d.requestedLevel.rawValue)
        w.raw(",\"focus\":")
        optional(d.focus, &w)
        w.raw(",\"breakthrough\":")
        optional(d.breakthrough?.rawValue, &w)
        w.raw(",\"alert\":")
        if let alert = d.alert {
            w.raw("{\"sound\":")
            w.writeBool(alert.sound)
            w.raw(",\"sound_name\":")
            optional(alert.soundName, &w)
            w.raw(",\"volume\":")
            if let volume = alert.volume { w.writeNumber(volume) } else { w.writeNull() }
            w.raw(",\"vibrate\":")
            w.writeBool(alert.vibrate)
            w.raw(",\"wake_screen\":")
            w.writeBool(alert.wakeScreen)
            w.raw(",\"banner\":")
            w.writeBool(alert.banner)
            w.raw(",\"lock_screen\":")
            w.writeBool(alert.lockScreen)
            w.raw(",\"bypass_ringer\":")
            w.writeBool(alert.bypassRinger)
            w.raw("}")
        } else {
            w.writeNull()
        }
        w.raw(",\"badge\":")
        if let badge = d.badge { w.writeInt(badge) } else { w.writeNull() }
        w.raw(",\"announcement\":")
        optional(d.announcement, &w)
        w.raw(",\"group\":")
        if let group = d.group {
            w.raw("{\"id\":")
            w.writeString(OutputBounds.cut(group.id))
            w.raw(",\"count\":")
            w.writeInt(group.count)
            w.raw(",\"summary\":")
            optional(group.summary, &w)
            w.raw("}")
        } else {
            w.writeNull()
        }
        w.raw(",\"placeholder\":")
        optional(d.placeholder, &w)
        w.raw(",\"summary_at\":")
        optional(d.summaryAt.map { RFC3339.format($0, offset: d.summaryAtOffset) }, &w)
        w.raw(",\"replaces\":")
        optional(d.replaces, &w)
        for (key, list) in [(",\"reasons\":", d.reasons), (",\"rules\":", d.rules), (",\"errors\":", d.errors)] {
            w.bytes += Array(key.utf8)
            w.raw("[")
            for (i, s) in list.enumerated() {
                if i > 0 { w.raw(",") }
                w.writeString(s)
            }
            w.raw("]")
        }
        if let trace = d.trace {
            w.raw(",\"trace\":[")
            for (i, step) in trace.enumerated() {
                if i > 0 { w.raw(",") }
                w.raw("{\"step\":")
                w.writeString(step.step)
                if let rule = step.rule {
                    w.raw(",\"rule\":")
                    w.writeString(rule)
                }
                if let location = step.location {
                    w.raw(",\"location\":")
                    w.writeString(location)
                }
                w.raw(",\"note\":")
                w.writeString(step.note)
                w.raw("}")
            }
            w.raw("]")
        }
        w.raw("}")
        return w.string
    }

    private static func optional(_ s: String?, _ w: inout JSONWriter) {
        if let s { w.writeString(OutputBounds.cut(s)) } else { w.writeNull() }
    }

    /// A decision with every optional present (a group comes from the pipeline: it has no
    /// initializer outside HushCore).
    func full() -> Decision {
        let harness = PipelineHarness(Policy())
        harness.decide(#"{"app":"com.example.chat","id":"m0","payload":{"aps":{"alert":"first"}}}"#)
        var d = harness.decide(
            #"{"app":"com.example.chat","id":"m1","payload":{"aps":{"alert":"hi","sound":"default","badge":3}}}"#,
            explain: true)
        XCTAssertNotNil(d.group, "a second notification of the app is grouped")
        d.focus = "Work"
        d.breakthrough = .person
        d.alert = Decision.Alert(
            sound: true, soundName: "ping.caf", volume: 0.25, vibrate: true, wakeScreen: false, banner: true,
            lockScreen: false, bypassRinger: true)
        d.badge = 12
        d.announcement = "Ana: \"hi\"\n"
        d.group?.summary = "3 more messages"
        d.group?.count = 4
        d.placeholder = "A message"
        d.summaryAt = 1_764_000_000.25
        d.summaryAtOffset = 3600
        d.replaces = "key\\1"
        d.reasons = ["one", "two \u{1}"]
        d.rules = ["mute-games"]
        d.errors = ["rule 'x': policy.lua:3: boom"]
        d.trace = [
            TraceStep(step: "rule", rule: "mute-games", location: "policy.lua:7", note: "set level"),
            TraceStep(step: "focus", note: "none"),
        ]
        return d
    }

    func testEveryFieldPresentAndAbsent() {
        let full = full()
        XCTAssertEqual(full.jsonString, Self.reference(full))
        var bare = full
        bare.focus = nil
        bare.breakthrough = nil
        bare.alert = nil
        bare.badge = nil
        bare.announcement = nil
        bare.group = nil
        bare.placeholder = nil
        bare.summaryAt = nil
        bare.replaces = nil
        bare.reasons = []
        bare.rules = []
        bare.errors = []
        bare.trace = nil
        XCTAssertEqual(bare.jsonString, Self.reference(bare))
        var some = full
        some.alert?.soundName = nil
        some.alert?.volume = nil
        some.group?.summary = nil
        some.trace = []
        some.badge = -7
        some.summaryAt = -1e10
        some.summaryAtOffset = -5 * 3600 - 30 * 60
        XCTAssertEqual(some.jsonString, Self.reference(some))
        // Years past 9999 take RFC3339.format's own way.
        some.summaryAt = 4e11
        XCTAssertEqual(some.jsonString, Self.reference(some))
    }

    func testEveryValueOfTheEnums() {
        var d = full()
        for delivery in Decision.Delivery.allCases {
            d.delivery = delivery
            XCTAssertEqual(d.jsonString, Self.reference(d))
        }
        for level in InterruptionLevel.allCases {
            d.level = level
            d.requestedLevel = level
            XCTAssertEqual(d.jsonString, Self.reference(d))
        }
        for breakthrough in Decision.Breakthrough.allCases {
            d.breakthrough = breakthrough
            XCTAssertEqual(d.jsonString, Self.reference(d))
        }
    }

    func testTextsOverTheBoundAreCutAndLongLinesWrittenWhole() {
        var d = full()
        let long = String(repeating: "é\"x", count: 900)
        d.focus = long
        d.alert?.soundName = long
        d.announcement = long
        d.group?.id = long
        d.group?.summary = long
        d.placeholder = long
        d.replaces = long
        d.reasons = Array(repeating: long, count: 5)
        let text = d.jsonString
        XCTAssertEqual(text, Self.reference(d))
        XCTAssertGreaterThan(text.utf8.count, 4 * 4096, "longer than the room a line starts with")

        // Written after other lines in the same writer, as `hush eval` writes a batch.
        var w = JSONWriter(capacity: 16)
        w.raw("x\n")
        d.write(to: &w)
        w.append(10)
        full().write(to: &w)
        XCTAssertEqual(w.string, "x\n" + Self.reference(d) + "\n" + Self.reference(full()))
    }
}
