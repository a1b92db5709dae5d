import Foundation
import XCTest

/// Revision 2 as a user meets it: withdraw lines across runs with a state file, simulate with
/// hidden previews, status after a summary fell due.
final class RevisionTwoCommandTests: XCTestCase {
    var dir: URL!
    var state: String { dir.appendingPathComponent("state.sqlite").path }
    var policy: String { dir.appendingPathComponent("policy.lua").path }

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("hush-r2-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try """
        timezone "Europe/Berlin"
        app "com.example.news" { summary = true, name = "News" }
        app "com.example.bank" { summary = true, previews = "never", name = "Bank" }
        category "MESSAGE" { summary_format = { one = "%u more message from %@", other = "%u more messages from %@" } }
        summary { at = { "08:00", "18:00" } }
        """.write(toFile: policy, atomically: true, encoding: .utf8)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: dir)
    }

    func eval(_ lines: String, expectStatus: Int32 = 0) throws -> [[String: Any]] {
        let run = try HushBinary.run(["eval", "--policy", policy, "--state", state], stdin: lines)
        XCTAssertEqual(run.status, expectStatus, run.stderr)
        return run.objects
    }

    func chat(_ id: String, _ minute: Int, _ who: String) -> String {
        "{\"app\":\"chat\",\"id\":\"\(id)\",\"date\":\"2026-11-28T10:0\(minute):00+01:00\",\"payload\":{\"aps\":{\"alert\":{\"body\":\"hi\",\"summary-arg\":\"\(who)\"},\"thread-id\":\"t\",\"category\":\"MESSAGE\"}}}"
    }

    func testWithdrawAcrossRunsShrinksTheGroup() throws {
        _ = try eval(chat("a", 0, "Ana") + "\n" + chat("b", 1, "Ben"))
        let withdrawn = try XCTUnwrap(
            try eval("{\"app\":\"chat\",\"id\":\"a\",\"withdraw\":true,\"date\":\"2026-11-28T10:02:00+01:00\"}").first)
        XCTAssertEqual(withdrawn["delivery"] as? String, "withdrawn")
        XCTAssertEqual(withdrawn["replaces"] as? String, "a")
        let group = try XCTUnwrap(withdrawn["group"] as? [String: Any])
        XCTAssertEqual(group["count"] as? Int, 1)
        XCTAssertTrue(group["summary"] is NSNull)
        XCTAssertTrue(withdrawn["alert"] is NSNull)
        // The next message joins a group that holds Ben's alone.
        let next = try XCTUnwrap(try eval(chat("c", 3, "Cy")).first)
        XCTAssertEqual((next["group"] as? [String: Any])?["count"] as? Int, 2)
        XCTAssertEqual((next["group"] as? [String: Any])?["summary"] as? String, "1 more message from Ben")

        // A withdraw line names what it removes: without an id it is an error in its place.
        let bad = try eval(
            "{\"app\":\"chat\",\"withdraw\":true}\n{\"app\":\"chat\",\"withdraw\":\"yes\",\"id\":\"x\"}",
            expectStatus: 1)
        XCTAssertEqual(bad.count, 2)
        XCTAssertTrue((bad[0]["error"] as? String)?.contains("id") == true, "\(bad[0])")
        XCTAssertTrue((bad[1]["error"] as? String)?.contains("withdraw") == true, "\(bad[1])")
    }

    func testRecentCountsAReplacementOnceAndTakesAPersonAsSender() throws {
        let counting = dir.appendingPathComponent("counting.lua").path
        try """
        rule("count", function(n, ctx)
          return { relevance = 0.5, reason = "person " .. hush.recent { sender = n.communication.sender }
                   .. ", handle " .. hush.recent { sender = n.communication.sender.handle }
                   .. ", all " .. hush.recent {} }
        end)
        """.write(toFile: counting, atomically: true, encoding: .utf8)
        func message(_ id: String, _ minute: Int, _ from: String) -> String {
            "{\"app\":\"chat\",\"id\":\"\(id)\",\"date\":\"2026-11-28T10:0\(minute):00+01:00\",\"payload\":{\"aps\":{\"alert\":\"hi\"}},\"communication\":{\"kind\":\"message\",\"sender\":{\"handle\":\"\(from)\"}}}"
        }
        let stream = [
            message("a", 0, "dan@example.com"), message("a", 1, "dan@example.com"), message("b", 2, "eve@example.com"),
            message("c", 3, "DAN@example.com"),
        ].joined(separator: "\n")
        let run = try HushBinary.run(["eval", "--ephemeral", "--policy", counting], stdin: stream)
        XCTAssertEqual(run.status, 0, run.stderr)
        let last = try XCTUnwrap(run.objects.last)
        XCTAssertEqual(last["errors"] as? [String], [])
        XCTAssertEqual(
            (last["reasons"] as? [String])?.first, "rule 'count': person 1, handle 1, all 2",
            "the replaced message counts once; a person table filters like its handle")
    }

    func testStatusDeliversTheSummaryThatFellDue() throws {
        let held = try XCTUnwrap(
            try eval(
                "{\"app\":\"com.example.news\",\"id\":\"n1\",\"date\":\"2026-11-28T07:00:00+01:00\",\"payload\":{\"aps\":{\"alert\":\"Headline\"}}}"
            ).first)
        XCTAssertEqual(held["delivery"] as? String, "summary")
        let before = try HushBinary.run([
            "status", "--json", "--policy", policy, "--state", state, "--now", "2026-11-28T07:30:00+01:00",
        ])
        XCTAssertEqual(before.objects.first?["pending_summary"] as? Int, 1, before.stderr)
        let after = try HushBinary.run([
            "status", "--json", "--policy", policy, "--state", state, "--now", "2026-11-28T09:00:00+01:00",
        ])
        XCTAssertEqual(after.status, 0, after.stderr)
        XCTAssertEqual(
            after.objects.first?["pending_summary"] as? Int, 0, "the 08:00 summary was delivered, not still waiting")
    }

    func testSimulateReplaysAStreamWithoutDates() throws {
        let stream = """
            {"app":"chat","id":"m","payload":{"aps":{"alert":"hi","sound":"default"}}}
            {"app":"chat","id":"m","withdraw":true}
            """
        let run = try HushBinary.run(["simulate", "--json", "--ephemeral", "--policy", policy], stdin: stream)
        XCTAssertEqual(run.status, 0, run.stderr)
        let deliveries = run.objects.compactMap { ($0["decision"] as? [String: Any])?["delivery"] as? String }
        XCTAssertEqual(deliveries, ["alert", "withdrawn"], run.stdout)
    }

    func testSimulateRespectsHiddenPreviews() throws {
        let stream = """
            {"app":"com.example.bank","id":"b1","date":"2026-11-28T07:00:00+01:00","payload":{"aps":{"alert":{"title":"Payment","body":"SECRET 420 EUR to Dana"}}}}
            {"app":"com.example.news","id":"n1","date":"2026-11-28T07:05:00+01:00","payload":{"aps":{"alert":{"title":"Headline","body":"Open news"}}}}
            {"app":"com.example.news","id":"n2","date":"2026-11-28T07:06:00+01:00","payload":{"aps":{"alert":{"title":"Gone","body":"Withdrawn news"}}}}
            {"app":"com.example.news","id":"n2","withdraw":true,"date":"2026-11-28T07:07:00+01:00"}
            """
        let run = try HushBinary.run(["simulate", "--json", "--ephemeral", "--policy", policy], stdin: stream)
        XCTAssertEqual(run.status, 0, run.stderr)
        let summary = try XCTUnwrap(run.objects.first { $0["event"] as? String == "summary" })
        XCTAssertEqual(summary["user"] as? String, "default")
        XCTAssertEqual(summary["at"] as? String, "2026-11-28T08:00:00+01:00")
        let items = try XCTUnwrap(summary["notifications"] as? [[String: Any]])
        XCTAssertEqual(
            items.compactMap { $0["id"] as? String }, ["n1", "b1"], "the withdrawn one is not in its summary")
        let bank = try XCTUnwrap(items.first { $0["id"] as? String == "b1" })
        XCTAssertTrue(bank["title"] is NSNull)
        XCTAssertTrue(bank["body"] is NSNull)
        XCTAssertEqual(bank["placeholder"] as? String, "Notification")
        XCTAssertEqual(bank["group"] as? String, "com.example.bank")
        let news = try XCTUnwrap(items.first { $0["id"] as? String == "n1" })
        XCTAssertEqual(news["body"] as? String, "Open news")
        XCTAssertTrue(news["placeholder"] is NSNull)
        XCTAssertFalse(run.stdout.contains("SECRET"), "hidden previews show no body anywhere")

        let readable = try HushBinary.run(["simulate", "--ephemeral", "--policy", policy], stdin: stream)
        XCTAssertEqual(readable.status, 0, readable.stderr)
        XCTAssertFalse(readable.stdout.contains("SECRET"), readable.stdout)
        XCTAssertFalse(readable.stdout.contains("Payment"), readable.stdout)
        XCTAssertTrue(readable.stdout.contains("Open news"), readable.stdout)
        XCTAssertTrue(readable.stdout.contains("withdraws n2"), readable.stdout)
    }
}
