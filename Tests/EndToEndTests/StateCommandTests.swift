import Foundation
import XCTest

final class StateCommandTests: XCTestCase {
    var dir: URL!
    var state: String { dir.appendingPathComponent("state.sqlite").path }
    var policy: String { dir.appendingPathComponent("policy.lua").path }

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("hush-state-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try """
        timezone "Europe/Berlin"
        app "com.example.news" { summary = true, name = "News" }
        summary { at = { "08:00", "18:00" } }
        contact { handle = "alice@example.com", name = "Alice", aliases = { "+49 170 1111111" } }
        focus "Work" {
          schedule = { days = "mon-fri", from = "09:00", to = "17:30" },
          people = { "boss@example.com", suggested = 1 },
        }
        focus "Sleep" { }
        """.write(toFile: policy, atomically: true, encoding: .utf8)
    }

    func eval(_ line: String) throws -> [String: Any] {
        let run = try HushBinary.run(["eval", "--policy", policy, "--state", state], stdin: line)
        XCTAssertEqual(run.status, 0, run.stderr)
        return try XCTUnwrap(run.objects.first)
    }

    func testFocusOnAndOffAcrossRuns() throws {
        let saturday =
            "{\"app\":\"chat\",\"date\":\"2026-11-28T10:00:00+01:00\",\"payload\":{\"aps\":{\"alert\":\"hi\"}}}"
        XCTAssertTrue(try eval(saturday)["focus"] is NSNull)
        let on = try HushBinary.run([
            "focus", "on", "Sleep", "--policy", policy, "--state", state,
            "--now", "2026-11-28T09:00:00+01:00", "--until", "2026-11-28T12:00:00+01:00",
        ])
        XCTAssertEqual(on.status, 0, on.stderr)
        let during = try eval(saturday)
        XCTAssertEqual(during["focus"] as? String, "Sleep")
        XCTAssertEqual(during["delivery"] as? String, "silenced")
        let later = try eval(saturday.replacingOccurrences(of: "10:00:00", with: "12:30:00"))
        XCTAssertTrue(later["focus"] is NSNull)
        let status = try HushBinary.run([
            "status", "--json", "--policy", policy, "--state", state, "--now", "2026-11-28T10:00:00+01:00",
        ])
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertEqual(status.objects.first?["focus"] as? String, "Sleep")

        // Off by hand during a scheduled window: off until the window ends.
        let monday =
            "{\"app\":\"chat\",\"date\":\"2026-11-30T10:00:00+01:00\",\"payload\":{\"aps\":{\"alert\":\"hi\"}}}"
        XCTAssertEqual(try eval(monday)["focus"] as? String, "Work")
        let off = try HushBinary.run([
            "focus", "off", "--policy", policy, "--state", state, "--now", "2026-11-30T09:30:00+01:00",
        ])
        XCTAssertEqual(off.status, 0, off.stderr)
        XCTAssertTrue(off.stdout.contains("17:30"), off.stdout)
        XCTAssertTrue(try eval(monday)["focus"] is NSNull)
        XCTAssertEqual(
            try eval(monday.replacingOccurrences(of: "2026-11-30T10", with: "2026-12-01T10"))["focus"] as? String,
            "Work")
    }

    func testStatePersistsGroupsAndSummaryQueueAcrossRuns() throws {
        _ = try eval(
            "{\"app\":\"chat\",\"id\":\"a\",\"date\":\"2026-11-28T10:00:00+01:00\",\"payload\":{\"aps\":{\"alert\":\"1\",\"thread-id\":\"t\"}}}"
        )
        let second = try eval(
            "{\"app\":\"chat\",\"id\":\"b\",\"date\":\"2026-11-28T10:01:00+01:00\",\"payload\":{\"aps\":{\"alert\":\"2\",\"thread-id\":\"t\"}}}"
        )
        XCTAssertEqual((second["group"] as? [String: Any])?["count"] as? Int, 2)
        let replaced = try eval(
            "{\"app\":\"chat\",\"id\":\"a\",\"date\":\"2026-11-28T10:02:00+01:00\",\"payload\":{\"aps\":{\"alert\":\"1b\",\"thread-id\":\"t\"}}}"
        )
        XCTAssertEqual(replaced["replaces"] as? String, "a")
        let held = try eval(
            "{\"app\":\"com.example.news\",\"id\":\"n1\",\"date\":\"2026-11-28T10:05:00+01:00\",\"payload\":{\"aps\":{\"alert\":\"story\"}}}"
        )
        XCTAssertEqual(held["delivery"] as? String, "summary")
        XCTAssertEqual(held["summary_at"] as? String, "2026-11-28T18:00:00+01:00")
        let status = try HushBinary.run([
            "status", "--json", "--policy", policy, "--state", state, "--now", "2026-11-28T11:00:00+01:00",
        ])
        XCTAssertEqual(status.objects.first?["pending_summary"] as? Int, 1)
        XCTAssertEqual(status.objects.first?["next_summary"] as? String, "2026-11-28T18:00:00+01:00")
    }

    /// Runs SQL on the state file with Python's sqlite3 (scripts/setup.sh installs python3).
    func sql(_ script: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.close()",
            state, script,
        ]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, script)
    }

    /// A summary due that cannot be delivered (the file refuses the write) stops `status` and
    /// `suggest` with exit status 2 and the state file's error, as a failed read does, and the
    /// summary stays queued.
    func testSummaryThatCannotBeDeliveredExitsTwo() throws {
        let held = try eval(
            "{\"app\":\"com.example.news\",\"id\":\"n1\",\"date\":\"2026-11-28T10:05:00+01:00\",\"payload\":{\"aps\":{\"alert\":\"story\"}}}"
        )
        XCTAssertEqual(held["delivery"] as? String, "summary")
        try sql("CREATE TRIGGER refuse BEFORE DELETE ON queue BEGIN SELECT RAISE(ABORT, 'refused'); END;")
        for command in [["status"], ["suggest", "--focus", "Work"]] {
            let run = try HushBinary.run(
                command + ["--policy", policy, "--state", state, "--now", "2026-11-28T19:00:00+01:00"])
            XCTAssertEqual(run.status, 2, "\(command): \(run.stdout) \(run.stderr)")
            XCTAssertTrue(run.stderr.contains(state) && run.stderr.contains("refused"), run.stderr)
        }
        try sql("DROP TRIGGER refuse;")
        let status = try HushBinary.run([
            "status", "--json", "--policy", policy, "--state", state, "--now", "2026-11-28T11:00:00+01:00",
        ])
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertEqual(status.objects.first?["pending_summary"] as? Int, 1)
    }

    func testDonateAndSuggest() throws {
        let lines = [
            // Alice: three outgoing messages, by two handles (aliases merge).
            "{\"date\":\"2026-11-20T20:00:00+01:00\",\"direction\":\"outgoing\",\"kind\":\"message\",\"people\":[{\"handle\":\"alice@example.com\"}]}",
            "{\"date\":\"2026-11-21T10:00:00+01:00\",\"direction\":\"outgoing\",\"kind\":\"call\",\"people\":[{\"handle\":\"+49 170 1111111\"}]}",
            "{\"date\":\"2026-11-22T20:00:00+01:00\",\"direction\":\"outgoing\",\"kind\":\"message\",\"people\":[\"alice@example.com\"]}",
            // Spam: only incoming.
            "{\"date\":\"2026-11-22T10:00:00+01:00\",\"direction\":\"incoming\",\"kind\":\"call\",\"people\":[\"+1 900 555 0000\"]}",
            "{\"date\":\"2026-11-22T11:00:00+01:00\",\"direction\":\"incoming\",\"kind\":\"call\",\"people\":[\"+1 900 555 0000\"]}",
            "{\"date\":\"2026-11-22T12:00:00+01:00\",\"direction\":\"incoming\",\"kind\":\"call\",\"people\":[\"+1 900 555 0000\"]}",
            // Carol: once only.
            "{\"date\":\"2026-11-22T10:00:00+01:00\",\"direction\":\"outgoing\",\"kind\":\"message\",\"people\":[\"carol@example.com\"]}",
            // Dave: twice, but one is older than 90 days.
            "{\"date\":\"2026-07-01T10:00:00+01:00\",\"direction\":\"outgoing\",\"kind\":\"message\",\"people\":[\"dave@example.com\"]}",
            "{\"date\":\"2026-11-22T10:00:00+01:00\",\"direction\":\"outgoing\",\"kind\":\"message\",\"people\":[\"dave@example.com\"]}",
            // Erin, three times in work hours (Mon 23 and Tue 24 Nov); Frank with her in a group once.
            "{\"date\":\"2026-11-23T10:00:00+01:00\",\"direction\":\"outgoing\",\"kind\":\"message\",\"people\":[\"erin@example.com\"]}",
            "{\"date\":\"2026-11-24T10:00:00+01:00\",\"direction\":\"outgoing\",\"kind\":\"call\",\"people\":[\"erin@example.com\"]}",
            "{\"date\":\"2026-11-24T11:00:00+01:00\",\"direction\":\"outgoing\",\"kind\":\"message\",\"group\":\"Team\",\"people\":[\"erin@example.com\",\"frank@example.com\"]}",
            "not json",
            "{\"date\":\"2026-11-24T10:00:00+01:00\",\"direction\":\"sideways\",\"people\":[\"x@example.com\"]}",
        ].joined(separator: "\n")
        let donate = try HushBinary.run(["donate", "--state", state], stdin: lines)
        XCTAssertEqual(donate.status, 1)
        XCTAssertEqual(donate.objects.compactMap { $0["line"] as? Int }, [13, 14])
        XCTAssertTrue(donate.stderr.contains("donated 12"), donate.stderr)

        let all = try HushBinary.run([
            "suggest", "--json", "--policy", policy, "--state", state, "--now", "2026-11-25T12:00:00+01:00",
        ])
        XCTAssertEqual(all.status, 0, all.stderr)
        let array = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(array.first?["name"] as? String, "Alice")
        XCTAssertEqual(array.first?["messages"] as? Int, 2)
        XCTAssertEqual(array.first?["calls"] as? Int, 1)
        for key in ["handle", "name", "score", "messages", "calls", "last", "why"] {
            XCTAssertNotNil(array.first?[key], key)
        }
        let handles = array.compactMap { $0["handle"] as? String }
        XCTAssertFalse(handles.contains("+1 900 555 0000"))
        XCTAssertFalse(handles.contains("carol@example.com"))
        XCTAssertFalse(handles.contains("dave@example.com"))
        XCTAssertTrue(handles.contains("erin@example.com"))
        XCTAssertEqual(handles.first, "alice@example.com")

        // For Work, in-hours interactions count double: the team outranks Alice.
        let work = try HushBinary.run([
            "suggest", "--focus", "Work", "--json", "--policy", policy, "--state", state, "--now",
            "2026-11-25T12:00:00+01:00",
        ])
        let workArray = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(work.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(workArray.first?["handle"] as? String, "erin@example.com", work.stdout)
        XCTAssertFalse(workArray.contains { $0["handle"] as? String == "frank@example.com" })  // one interaction only

        // people = { suggested = 1 } lets the top suggestion through Work.
        let msg = try eval(
            "{\"app\":\"chat\",\"date\":\"2026-11-25T11:00:00+01:00\",\"payload\":{\"aps\":{\"alert\":\"hi\"}},\"communication\":{\"kind\":\"message\",\"sender\":{\"handle\":\"\(workArray.first?["handle"] as? String ?? "")\"}}}"
        )
        XCTAssertEqual(msg["breakthrough"] as? String, "person")
    }

    /// "today" and "yesterday" are calendar days in the policy's time zone, not 24-hour periods.
    func testSuggestNamesCalendarDays() throws {
        let lines = [
            // Bob: last reached at 23:30 on Tuesday 24 November (Berlin).
            "{\"date\":\"2026-11-24T20:00:00+01:00\",\"direction\":\"outgoing\",\"kind\":\"message\",\"people\":[\"bob@example.com\"]}",
            "{\"date\":\"2026-11-24T23:30:00+01:00\",\"direction\":\"outgoing\",\"kind\":\"message\",\"people\":[\"bob@example.com\"]}",
            // Carol: last reached at 01:00 on Wednesday 25 November.
            "{\"date\":\"2026-11-24T20:00:00+01:00\",\"direction\":\"outgoing\",\"kind\":\"message\",\"people\":[\"carol@example.com\"]}",
            "{\"date\":\"2026-11-25T01:00:00+01:00\",\"direction\":\"outgoing\",\"kind\":\"message\",\"people\":[\"carol@example.com\"]}",
            // Dan: last reached at 23:30 on Monday 23 November.
            "{\"date\":\"2026-11-23T20:00:00+01:00\",\"direction\":\"outgoing\",\"kind\":\"message\",\"people\":[\"dan@example.com\"]}",
            "{\"date\":\"2026-11-23T23:30:00+01:00\",\"direction\":\"outgoing\",\"kind\":\"message\",\"people\":[\"dan@example.com\"]}",
        ].joined(separator: "\n")
        let donate = try HushBinary.run(["donate", "--state", state], stdin: lines)
        XCTAssertEqual(donate.status, 0, donate.stderr)
        func why(at now: String) throws -> [String: String] {
            let run = try HushBinary.run(["suggest", "--json", "--policy", policy, "--state", state, "--now", now])
            XCTAssertEqual(run.status, 0, run.stderr)
            let array = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
            var out: [String: String] = [:]
            for s in array { if let h = s["handle"] as? String { out[h] = s["why"] as? String } }
            return out
        }
        // 00:30 on Wednesday: an hour after Bob, but the day before; Dan 25 hours and two days ago.
        let justAfterMidnight = try why(at: "2026-11-25T00:30:00+01:00")
        XCTAssertTrue(
            justAfterMidnight["bob@example.com"]?.hasSuffix("most recently yesterday.") == true, "\(justAfterMidnight)")
        XCTAssertTrue(
            justAfterMidnight["dan@example.com"]?.hasSuffix("most recently 2 days ago.") == true, "\(justAfterMidnight)"
        )
        // 23:00 on Wednesday: 22 hours after Carol, the same day.
        let lateEvening = try why(at: "2026-11-25T23:00:00+01:00")
        XCTAssertTrue(lateEvening["carol@example.com"]?.hasSuffix("most recently today.") == true, "\(lateEvening)")
        XCTAssertTrue(lateEvening["bob@example.com"]?.hasSuffix("most recently yesterday.") == true, "\(lateEvening)")
    }

    func testSimulateJSONEvents() throws {
        let stream = """
            {"app":"com.example.news","id":"n1","date":"2026-11-27T07:00:00+01:00","payload":{"aps":{"alert":"low","relevance-score":0.1}}}
            {"app":"com.example.news","id":"n2","date":"2026-11-27T07:10:00+01:00","payload":{"aps":{"alert":"high","relevance-score":0.9}}}
            {"app":"com.example.news","id":"n3","date":"2026-11-27T07:20:00+01:00","headers":{"apns-expiration":"1795761000"},"payload":{"aps":{"alert":"stale"}}}
            {"app":"chat","id":"c1","date":"2026-11-27T10:00:00+01:00","payload":{"aps":{"alert":"at work"}}}
            {"app":"com.example.news","id":"n4","date":"2026-11-27T12:00:00+01:00","payload":{"aps":{"alert":"noon"}}}
            """
        let run = try HushBinary.run(["simulate", "--json", "--ephemeral", "--policy", policy], stdin: stream)
        XCTAssertEqual(run.status, 0, run.stderr)
        let events = run.objects
        let kinds = events.compactMap { $0["event"] as? String }
        XCTAssertEqual(
            kinds,
            [
                "notification", "notification", "notification", "summary", "focus", "notification", "notification",
                "focus", "summary",
            ])
        let morning = events[3]
        XCTAssertEqual(morning["at"] as? String, "2026-11-27T08:00:00+01:00")
        XCTAssertEqual(
            (morning["notifications"] as? [[String: Any]])?.compactMap { $0["id"] as? String }, ["n2", "n1"])
        XCTAssertEqual(morning["dropped"] as? [String], ["n3"])
        XCTAssertEqual(events[4]["focus"] as? String, "Work")
        XCTAssertEqual(events[4]["at"] as? String, "2026-11-27T09:00:00+01:00")
        XCTAssertTrue(events[7]["focus"] is NSNull)
        XCTAssertEqual(events[7]["at"] as? String, "2026-11-27T17:30:00+01:00")
        XCTAssertEqual(events[8]["at"] as? String, "2026-11-27T18:00:00+01:00")
        let readable = try HushBinary.run(["simulate", "--ephemeral", "--policy", policy], stdin: stream)
        XCTAssertTrue(readable.stdout.contains("Scheduled Summary"), readable.stdout)
        XCTAssertTrue(readable.stdout.contains("Focus Work on"), readable.stdout)
    }
}
