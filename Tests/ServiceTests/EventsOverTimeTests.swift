import Foundation
import NIOHTTP1
import XCTest

/// Summaries and focus changes arrive on `GET /v1/events` at their time, as `hush simulate`
/// reports them.
final class EventsOverTimeTests: XCTestCase {
    /// RFC 3339 → UNIX seconds.
    static func seconds(_ text: String) -> Double {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date.timeIntervalSince1970 }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)!.timeIntervalSince1970
    }

    /// A day of examples/stream.jsonl replayed against the server's fast clock (an hour a second),
    /// each notification posted as its time comes: the events on the stream are `hush simulate`'s,
    /// one for one, in order.
    func testADayReplayedOnAFastClockGivesSimulatesEvents() async throws {
        let arguments = ["--policy", "policies/personal.lua", "--context", "examples/context.json"]
        let stream = ServerProcess.root.appendingPathComponent("examples/stream.jsonl")
        let simulated = try HushCommandLine.run(["simulate", "--ephemeral", "--json"] + arguments + [stream.path])
        XCTAssertEqual(simulated.status, 0, simulated.stderr)
        let expected = simulated.stdout.split(separator: "\n").map(String.init)
            .filter { !$0.hasPrefix(#"{"event":"notification""#) }
        XCTAssertGreaterThanOrEqual(expected.count, 4, "the day has summaries and focus changes")

        let speed = 3600.0
        let start = Self.seconds("2026-11-24T00:00:00+01:00")
        let server = try ServerProcess(
            arguments + ["--ephemeral", "--clock", "2026-11-24T00:00:00+01:00", "--speed", String(speed)])
        let began = Date()
        let events = try await EventStreamReader(server.base + "/v1/events")
        XCTAssertTrue(events.opened)
        func serverNow() -> Double { start + Date().timeIntervalSince(began) * speed }

        var decisions: [String] = []
        for line in try String(contentsOf: stream, encoding: .utf8).split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            // Posted a little (ten minutes of the server's time) before it is due, never after.
            let due = Self.seconds(object["date"] as! String) - 600
            let wait = (due - serverNow()) / speed
            if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
            let answer = try await HTTP.send(.POST, server.base + "/v1/notifications", body: String(line))
            XCTAssertEqual(answer.status, 200, answer.body)
            decisions.append(answer.body)
        }
        let end = Self.seconds("2026-11-25T00:00:00+01:00")
        let received = await events.wait(timeout: (end - serverNow()) / speed + 10) { $0.count >= expected.count }
        XCTAssertEqual(received.map(\.data), expected, "the stream's events are simulate's, in order")
        // Each at its time: never before the server's clock reached it.
        for event in received {
            let at = Self.seconds(event.json["at"] as! String)
            let arrivedAt = start + event.arrived.timeIntervalSince(began) * speed
            XCTAssertGreaterThanOrEqual(arrivedAt, at - 600 - 60, "\(event.data) arrived early")
        }
        XCTAssertEqual(Set(received.compactMap(\.id)).count, received.count, "every event has its own id")
        XCTAssertEqual(received.compactMap(\.id), received.compactMap(\.id).sorted())
        XCTAssertEqual(server.stop(), 0)
    }

    static let summaryPolicy = """
        timezone "Europe/Berlin"
        app "*" { grouping = "automatic" }
        app "com.example.news" { summary = true, previews = "never", name = "News" }
        app "com.example.shop" { summary = true }
        category "STORY" { hidden_preview = "%u stories" }
        summary { at = { "08:00" } }
        """

    static func news(_ id: String, _ time: String, user: String, relevance: Double?, media: Bool = false) -> String {
        let relevancePart = relevance.map { #","relevance-score":\#($0)"# } ?? ""
        let attachments = media ? #","attachments":[{"type":"image"}]"# : ""
        return #"{"app":"com.example.news","id":"\#(id)","user":"\#(user)","date":"2026-11-24T\#(time):00+01:00","#
            + #""payload":{"aps":{"alert":{"title":"T \#(id)","body":"B \#(id)"},"category":"STORY","thread-id":"t"\#(relevancePart)}}\#(attachments)}"#
    }

    /// Held notifications wait, then arrive as one summary event when the server's clock reaches
    /// 08:00, in summary order, with hidden previews hidden; each user gets their own.
    func testASummaryArrivesAtItsTimeInSummaryOrderWithPreviewsHidden() async throws {
        let folder = try temporaryFolder("summary")
        let policy = folder.appendingPathComponent("policy.lua")
        try Self.summaryPolicy.write(to: policy, atomically: true, encoding: .utf8)
        let speed = 600.0
        let start = Self.seconds("2026-11-24T07:30:00+01:00")
        let server = try ServerProcess([
            "--policy", policy.path, "--ephemeral", "--clock", "2026-11-24T07:30:00+01:00", "--speed", String(speed),
        ])
        let began = Date()
        let all = try await EventStreamReader(server.base + "/v1/events")
        let onlyU1 = try await EventStreamReader(server.base + "/v1/events?user=u1")
        let batch = [
            Self.news("n1", "07:31", user: "u1", relevance: 0.2),
            Self.news("n2", "07:32", user: "u1", relevance: 0.9),
            Self.news("n3", "07:33", user: "u1", relevance: nil, media: true),
            Self.news("n4", "07:34", user: "u1", relevance: nil),
            Self.news("m1", "07:35", user: "u2", relevance: nil),
        ].joined(separator: "\n")
        let decided = try await HTTP.send(.POST, server.base + "/v1/notifications", body: batch)
        XCTAssertEqual(decided.lines.count, 5)
        for line in decided.lines { XCTAssertTrue(line.contains(#""delivery":"summary""#), line) }
        XCTAssertTrue(decided.lines[0].contains(#""summary_at":"2026-11-24T08:00:00+01:00""#), decided.lines[0])

        // Before 08:00 (by the server's clock) nothing has arrived.
        let early = await all.wait(timeout: 1) { !$0.isEmpty }
        XCTAssertTrue(early.isEmpty, "nothing is due before 08:00: \(early.map(\.data))")
        let received = await all.wait(timeout: 15) { $0.count >= 2 }
        XCTAssertEqual(received.count, 2, server.stderr)
        let eight = Self.seconds("2026-11-24T08:00:00+01:00")
        for event in received {
            XCTAssertEqual(event.name, "summary")
            XCTAssertEqual(event.json["at"] as? String, "2026-11-24T08:00:00+01:00")
            let arrivedAt = start + event.arrived.timeIntervalSince(began) * speed
            XCTAssertGreaterThanOrEqual(arrivedAt, eight - 30, "not before its time")
            XCTAssertLessThan(arrivedAt, eight + 15 * 60, "at its time, not at some later notification")
        }
        let u1 = try XCTUnwrap(received.first { $0.json["user"] as? String == "u1" })
        let items = try XCTUnwrap(u1.json["notifications"] as? [[String: Any]])
        // Relevance first, then media, then newest first.
        XCTAssertEqual(items.map { $0["id"] as? String }, ["n2", "n1", "n3", "n4"])
        for item in items {
            XCTAssertTrue(item["title"] is NSNull, "previews never: no title")
            XCTAssertTrue(item["body"] is NSNull, "previews never: no body")
            XCTAssertEqual(item["placeholder"] as? String, "4 stories")
        }
        let u1Only = await onlyU1.wait(timeout: 5) { !$0.isEmpty }
        XCTAssertEqual(u1Only.map(\.data), [u1.data], "?user= gets that user's events only")

        // Delivered once: status no longer lists them, and nothing more arrives.
        let status = try await HTTP.get(server.base + "/v1/users/u1/status")
        XCTAssertEqual(status.json?["pending_summary"] as? Int, 0, status.body)
        try await Task.sleep(for: .seconds(1))
        XCTAssertEqual(all.events.count, 2)

        // Resuming with Last-Event-ID replays what came after that id.
        let resumed = try await EventStreamReader(
            server.base + "/v1/events", headers: [("Last-Event-ID", String(received[0].id! - 1))])
        let replayed = await resumed.wait(timeout: 5) { $0.count >= 2 }
        XCTAssertEqual(replayed.map(\.data), received.map(\.data))
        XCTAssertEqual(server.stop(), 0)
    }

    /// A focus turned on by hand with an end: announced when set, and again when it ends, at
    /// the instant it ends.
    func testAFocusSetByHandIsAnnouncedAndItsEndIsAnnouncedAtItsTime() async throws {
        let server = try ServerProcess([
            "--policy", "policies/work.lua", "--ephemeral", "--clock", "2026-11-24T18:00:00+01:00", "--speed", "600",
        ])
        let events = try await EventStreamReader(server.base + "/v1/events?user=ann")
        let set = try await HTTP.send(
            .PUT, server.base + "/v1/users/ann/focus",
            body: #"{"focus":"Work","until":"2026-11-24T18:10:00+01:00"}"#)
        XCTAssertEqual(set.status, 200, set.body)
        XCTAssertEqual(set.json?["until"] as? String, "2026-11-24T18:10:00+01:00")
        let received = await events.wait(timeout: 10) { $0.count >= 2 }
        XCTAssertEqual(received.count, 2, server.stderr)
        XCTAssertEqual(received.first?.json["focus"] as? String, "Work")
        XCTAssertEqual(received.last?.json["focus"] as? NSNull, NSNull())
        XCTAssertEqual(received.last?.json["at"] as? String, "2026-11-24T18:10:00+01:00")
        XCTAssertEqual(received.last?.json["reason"] as? String, "Focus Work is off")
        let past = try await HTTP.send(
            .PUT, server.base + "/v1/users/ann/focus", body: #"{"focus":"Work","until":"2026-11-24T11:00:00+01:00"}"#)
        XCTAssertEqual(past.status, 400)
        XCTAssertEqual(past.json?["field"] as? String, "until")
        XCTAssertEqual(server.stop(), 0)
    }
}
