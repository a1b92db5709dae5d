import Foundation
import NIOHTTP1
import XCTest

/// Status, donated interactions and suggestions over HTTP answer as `hush status --json`,
/// `hush donate` and `hush suggest --json` do.
final class UserStateOverHTTPTests: XCTestCase {
    func testDonatedInteractionsGiveTheSuggestionsHushSuggestGives() async throws {
        let folder = try temporaryFolder("suggest")
        let state = folder.appendingPathComponent("state.sqlite").path
        let interactions = ServerProcess.root.appendingPathComponent("examples/interactions.jsonl")
        let now = "2026-11-24T12:00:00+01:00"
        XCTAssertEqual(try HushCommandLine.run(["donate", "--state", state, interactions.path]).status, 0)
        var expected: [String: String] = [:]
        for focus in ["", "Work"] {
            let run = try HushCommandLine.run(
                ["suggest", "--json", "--policy", "policies/work.lua", "--state", state, "--now", now]
                    + (focus.isEmpty ? [] : ["--focus", focus]))
            XCTAssertEqual(run.status, 0, run.stderr)
            expected[focus] = run.stdout
        }

        // A clock that (almost) stands still: scores decay with time.
        let server = try ServerProcess([
            "--policy", "policies/work.lua", "--ephemeral", "--clock", now, "--speed", "0.000001",
        ])
        let body = try String(contentsOf: interactions, encoding: .utf8)
        let donated = try await HTTP.send(.POST, server.base + "/v1/users/default/interactions", body: body)
        XCTAssertEqual(donated.status, 200, donated.body)
        XCTAssertEqual(donated.json?["donated"] as? Int, body.split(separator: "\n").count)
        let all = try await HTTP.get(server.base + "/v1/users/default/suggestions")
        XCTAssertEqual(all.body, expected[""]!)
        let work = try await HTTP.get(server.base + "/v1/users/default/suggestions?focus=Work")
        XCTAssertEqual(work.body, expected["Work"]!)
        let unknown = try await HTTP.get(server.base + "/v1/users/default/suggestions?focus=Wrok")
        XCTAssertEqual(unknown.status, 400)
        XCTAssertEqual(unknown.json?["field"] as? String, "focus")
        let badLimit = try await HTTP.get(server.base + "/v1/users/default/suggestions?limit=-1")
        XCTAssertEqual(badLimit.status, 400)
        XCTAssertEqual(badLimit.json?["field"] as? String, "limit")

        // A refused line is listed; the good ones are kept (so the request is not to be resent).
        let mixed = """
            {"date":"2026-11-20T10:00:00+01:00","direction":"outgoing","kind":"message","app":"a","people":["x@example.com"]}
            {"date":"2026-11-20T10:00:00+01:00","direction":"sideways","kind":"message","app":"a","people":["x@example.com"]}
            """
        let partly = try await HTTP.send(.POST, server.base + "/v1/users/default/interactions", body: mixed)
        XCTAssertEqual(partly.status, 200, partly.body)
        XCTAssertEqual(partly.json?["donated"] as? Int, 1)
        let errors = partly.json?["errors"] as? [[String: Any]]
        XCTAssertEqual(errors?.first?["line"] as? Int, 2)
        XCTAssertEqual(errors?.first?["field"] as? String, "direction")
        let none = try await HTTP.send(.POST, server.base + "/v1/users/default/interactions", body: "{}")
        XCTAssertEqual(none.status, 400)
        XCTAssertEqual(server.stop(), 0)
    }

    func testStatusFocusAndMethodsAnswerAsDocumented() async throws {
        let folder = try temporaryFolder("status")
        let state = folder.appendingPathComponent("state.sqlite").path
        let now = "2026-11-24T10:00:00+01:00"
        let server = try ServerProcess(["--policy", "policies/work.lua", "--state", state, "--clock", now])
        let status = try await HTTP.get(server.base + "/v1/users/zoe/status")
        XCTAssertEqual(status.status, 200)
        XCTAssertEqual(status.json?["focus"] as? String, "Work", "on by its schedule at 10:00 on a Tuesday")
        let wrongMethod = try await HTTP.send(.POST, server.base + "/v1/users/zoe/status", body: "{}")
        XCTAssertEqual(wrongMethod.status, 405)
        XCTAssertEqual(wrongMethod.headers.first(name: "allow"), "GET")
        let badForce = try await HTTP.send(
            .PUT, server.base + "/v1/users/zoe/focus", body: #"{"focus":"Work","force":"yes"}"#)
        XCTAssertEqual(badForce.status, 400)
        XCTAssertEqual(badForce.json?["field"] as? String, "force")
        let notJSON = try await HTTP.send(.PUT, server.base + "/v1/users/zoe/focus", body: "Work")
        XCTAssertEqual(notJSON.status, 400)
        let off = try await HTTP.send(.PUT, server.base + "/v1/users/zoe/focus", body: #"{"focus":null}"#)
        XCTAssertEqual(off.status, 200, off.body)
        XCTAssertEqual(off.json?["until"] as? String, "2026-11-24T17:30:00+01:00", "off until its window ends")
        XCTAssertEqual(server.stop(), 0)
        // The server's answer is what `hush status --json` says on the same state.
        let cli = try HushCommandLine.run([
            "status", "--json", "--policy", "policies/work.lua", "--state", state, "--user", "zoe", "--now",
            "2026-11-24T10:30:00+01:00",
        ])
        XCTAssertTrue(cli.stdout.contains(#""focus":null"#), cli.stdout + cli.stderr)
    }
}
