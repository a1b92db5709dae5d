import Foundation
import NIOHTTP1
import XCTest

/// `POST /v1/notifications` answers exactly what `hush eval` prints for the same stream.
final class DecisionsOverHTTPTests: XCTestCase {
    let stream = ServerProcess.root.appendingPathComponent("examples/stream.jsonl")

    func testAJSONLinesBatchIsDecidedAsHushEvalDecidesIt() async throws {
        for policy in ["policies/default.lua", "policies/work.lua", "policies/personal.lua"] {
            let arguments = ["--policy", policy, "--context", "examples/context.json", "--ephemeral"]
            let eval = try HushCommandLine.run(["eval"] + arguments + [stream.path])
            XCTAssertEqual(eval.status, 0, eval.stderr)
            let server = try ServerProcess(arguments)
            let answer = try await HTTP.send(
                .POST, server.base + "/v1/notifications", body: try String(contentsOf: stream, encoding: .utf8),
                headers: [("Content-Type", "application/x-ndjson")])
            XCTAssertEqual(answer.status, 200)
            XCTAssertEqual(answer.headers.first(name: "content-type"), "application/x-ndjson")
            XCTAssertEqual(answer.body, eval.stdout, "\(policy): the batch answer is byte for byte hush eval's")
            XCTAssertEqual(server.stop(), 0)
        }
    }

    func testOneNotificationAtATimeIsDecidedAsHushEvalDecidesIt() async throws {
        let arguments = ["--policy", "policies/work.lua", "--context", "examples/context.json", "--ephemeral"]
        let eval = try HushCommandLine.run(["eval"] + arguments + [stream.path])
        let server = try ServerProcess(arguments)
        var answers: [String] = []
        for line in try String(contentsOf: stream, encoding: .utf8).split(separator: "\n") {
            let answer = try await HTTP.send(.POST, server.base + "/v1/notifications", body: String(line))
            XCTAssertEqual(answer.status, 200, answer.body)
            XCTAssertEqual(answer.headers.first(name: "content-type"), "application/json")
            answers.append(answer.body)
        }
        XCTAssertEqual(answers.joined(), eval.stdout)
        // With ?explain=true each decision carries its trace.
        let explained = try await HTTP.send(
            .POST, server.base + "/v1/notifications?explain=true",
            body: #"{"app":"com.example.chat","id":"x1","payload":{"aps":{"alert":"hi"}}}"#)
        XCTAssertNotNil(explained.json?["trace"])
        XCTAssertEqual(server.stop(), 0)
    }

    /// One notification on one line is read straight from the body (no tree): whatever ends the
    /// line, and spread over several lines instead, it is decided the same; one without an id gets
    /// the next generated id, one each.
    func testOneNotificationIsDecidedTheSameHoweverItsBodyIsLaidOut() async throws {
        let server = try ServerProcess(["--ephemeral", "--clock", "2026-11-24T10:00:00Z"])
        let line =
            #"{"app":"com.example.chat","user":"ann","date":"2026-11-24T09:00:00Z","payload":{"aps":{"alert":{"title":"Bob","body":"hi"},"thread-id":"t"}}}"#
        let spread = line.replacingOccurrences(of: #","payload""#, with: ",\n\"payload\"")
        XCTAssertNotEqual(spread, line)
        var bodies: [String] = []
        for (n, body) in [line, line + "\n", line + "\r\n", " " + line + " ", spread].enumerated() {
            let withID = body.replacingOccurrences(of: #""user":"ann""#, with: #""id":"same","user":"u\#(n)""#)
            let answer = try await HTTP.send(.POST, server.base + "/v1/notifications", body: withID)
            XCTAssertEqual(answer.status, 200, answer.body)
            bodies.append(answer.body.replacingOccurrences(of: #""user":"u\#(n)""#, with: #""user":"u""#))
        }
        XCTAssertEqual(Set(bodies).count, 1, bodies.joined(separator: "\n"))
        var generated: [String] = []
        for body in [line, line + "\r\n", spread] {
            let answer = try await HTTP.send(.POST, server.base + "/v1/notifications", body: body)
            XCTAssertEqual(answer.status, 200, answer.body)
            generated.append(answer.json?["id"] as? String ?? "")
        }
        let prefix = generated[0].dropLast()
        XCTAssertTrue(prefix.hasPrefix("hush-") && generated[0].hasSuffix("-1"), generated[0])
        XCTAssertEqual(generated, ["1", "2", "3"].map { prefix + $0 })
        XCTAssertEqual(server.stop(), 0)
    }

    /// A JSON Lines batch is read into envelopes on the request's thread, except the lines that
    /// need an id made up: those are read on the state thread, so the ids stay in line order and
    /// one each, whichever lines around them have ids or are refused.
    func testLinesWithoutAnIdInABatchGetTheNextIdsInLineOrder() async throws {
        let server = try ServerProcess(["--ephemeral"])
        func line(_ id: String?) -> String {
            let member = id.map { #""id":"\#($0)","# } ?? ""
            return #"{"app":"com.example.chat",\#(member)"user":"ann","payload":{"aps":{"alert":"hi"}}}"#
        }
        let lines = [line("a"), line(nil), "not json", line("b"), line(nil), line(nil)]
        let answer = try await HTTP.send(
            .POST, server.base + "/v1/notifications", body: lines.joined(separator: "\n"),
            headers: [("Content-Type", "application/x-ndjson")])
        XCTAssertEqual(answer.status, 200, answer.body)
        let answers = answer.body.split(separator: "\n").map {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:]
        }
        XCTAssertEqual(answers.count, 6, answer.body)
        XCTAssertEqual(answers[2]["line"] as? Int, 3, answer.body)
        let ids = answers.map { $0["id"] as? String ?? "-" }
        let prefix = ids[1].dropLast()
        XCTAssertTrue(prefix.hasPrefix("hush-") && ids[1].hasSuffix("-1"), ids[1])
        XCTAssertEqual(ids, ["a", prefix + "1", "-", "b", prefix + "2", prefix + "3"])
        XCTAssertEqual(server.stop(), 0)
    }

    /// Dates centuries from the server's clock (fuzz/findings/service-ancient-date): decided, and
    /// the requests after them are answered at once — the user's events are worked out over at most
    /// the retention's span, not every day in between.
    func testNotificationsDatedCenturiesAwayHoldNothingUp() async throws {
        let policy = ServerProcess.root.appendingPathComponent("policies/personal.lua").path
        let server = try ServerProcess(["--ephemeral", "--policy", policy, "--clock", "2026-11-24T10:00:00Z"])
        for (user, date) in [("old", "0001-01-01T00:00:00Z"), ("future", "2999-01-01T00:00:00Z")] {
            let line =
                #"{"app":"com.example.chat","id":"\#(user)","user":"\#(user)","date":"\#(date)","payload":{"aps":{"alert":{"body":"hi"}}}}"#
            let start = Date()
            let decided = try await HTTP.send(.POST, server.base + "/v1/notifications", body: line)
            XCTAssertEqual(decided.status, 200, decided.body)
            let status = try await HTTP.get(server.base + "/v1/users/\(user)/status")
            XCTAssertEqual(status.status, 200, status.body)
            let other = try await HTTP.send(
                .POST, server.base + "/v1/notifications",
                body:
                    #"{"app":"com.example.chat","id":"o-\#(user)","user":"other","payload":{"aps":{"alert":{"body":"hi"}}}}"#
            )
            XCTAssertEqual(other.status, 200, other.body)
            // Loose on purpose (a debug build walked 2,000 years in about 20 s): it catches the walk.
            XCTAssertLessThan(Date().timeIntervalSince(start), 5, user)
        }
        XCTAssertEqual(server.stop(), 0)
    }

    func testBadInputIsRefusedNamingTheFieldAndTheRestIsDecided() async throws {
        let server = try ServerProcess(["--ephemeral"])
        let single = try await HTTP.send(
            .POST, server.base + "/v1/notifications", body: #"{"app":"com.example.chat","id":"n1"}"#)
        XCTAssertEqual(single.status, 400)
        XCTAssertEqual(single.json?["field"] as? String, "payload")
        XCTAssertTrue((single.json?["error"] as? String ?? "").contains("payload"), single.body)

        let notJSON = try await HTTP.send(.POST, server.base + "/v1/notifications", body: "{nope")
        XCTAssertEqual(notJSON.status, 400)
        XCTAssertNotNil(notJSON.json?["error"])

        let empty = try await HTTP.send(.POST, server.base + "/v1/notifications", body: "")
        XCTAssertEqual(empty.status, 400)

        let batch = """
            {"app":"com.example.chat","id":"a","payload":{"aps":{"alert":"one"}}}
            {"app":"com.example.chat","id":"b","payload":{"aps":{"interruption-level":"loud"}}}
            not json
            {"app":"com.example.chat","id":"c","payload":{"aps":{"alert":"three"}}}
            """
        let lines = try await HTTP.send(.POST, server.base + "/v1/notifications", body: batch).lines
        XCTAssertEqual(lines.count, 4)
        XCTAssertTrue(lines[0].hasPrefix(#"{"id":"a""#), lines[0])
        XCTAssertTrue(lines[1].hasPrefix(#"{"line":2,"error":"#) && lines[1].contains("interruption-level"), lines[1])
        XCTAssertTrue(lines[2].hasPrefix(#"{"line":3,"error":"#), lines[2])
        XCTAssertTrue(lines[3].hasPrefix(#"{"id":"c""#), lines[3])

        let unknown = try await HTTP.get(server.base + "/v1/nothing")
        XCTAssertEqual(unknown.status, 404)
        XCTAssertNotNil(unknown.json?["error"])
        XCTAssertEqual(server.stop(), 0)
    }
}
