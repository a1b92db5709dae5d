import Foundation
import NIOHTTP1
import XCTest

/// The state file cannot grow (a full disk, simulated with `ulimit -f`): requests are answered
/// 503 and nothing is acknowledged that was not committed; once there is room again, every
/// decision answered 200 is in state and none answered 503 is.
final class DiskFullTests: XCTestCase {
    func testAFullDiskAnswers503AndAcknowledgesOnlyWhatWasCommitted() async throws {
        let folder = try temporaryFolder("disk-full")
        let state = folder.appendingPathComponent("state.sqlite").path
        let policy = folder.appendingPathComponent("policy.lua").path
        try LimitsTests.policy.write(toFile: policy, atomically: true, encoding: .utf8)
        let arguments = ["--state", state, "--policy", policy]

        // The state's tables, made without a limit.
        var server = try ServerProcess(arguments)
        let warm = try await HTTP.send(.POST, server.base + "/v1/notifications", body: LimitsTests.note("warm"))
        XCTAssertEqual(warm.status, 200, warm.body)
        XCTAssertEqual(server.stop(), 0)
        let sizes = ["", "-wal", "-shm"].map {
            (try? FileManager.default.attributesOfItem(atPath: state + $0))?[.size] as? Int ?? 0
        }

        // Room for a few commits more: the write-ahead log fills up, then every commit fails.
        server = try ServerProcess(arguments, fileSizeLimit: sizes.max()! + (256 << 10))
        // Under APNs' 4 KiB payload limit; a page or so of state each.
        let body = String(repeating: "b", count: 3500)
        var answered: [(id: String, status: Int)] = []
        var refusedInARow = 0
        for i in 0..<1500 where refusedInARow < 5 {
            let id = "full-\(i)"
            let answer = try await HTTP.send(
                .POST, server.base + "/v1/notifications", body: LimitsTests.note(id, body: body))
            answered.append((id, answer.status))
            if answer.status == 503 {
                XCTAssertNotNil(answer.json?["error"] as? String, answer.body)
                refusedInARow += 1
            } else {
                guard answer.status == 200 else { return XCTFail("\(answer.status): \(answer.body)") }
                refusedInARow = 0
            }
        }
        let acknowledged = answered.filter { $0.status == 200 }.map(\.id)
        let refused = answered.filter { $0.status == 503 }.map(\.id)
        XCTAssertGreaterThan(acknowledged.count, 0, "some commits fit")
        XCTAssertEqual(refusedInARow, 5, "the file never filled up: \(answered.count) answered")
        XCTAssertTrue(server.process.isRunning, "a full disk does not stop the server")
        XCTAssertTrue(server.stderr.contains("could not be committed"), server.stderr)
        server.stop()

        // With room again: what was answered 200 is there, what was answered 503 is not.
        server = try ServerProcess(arguments)
        let again = (acknowledged + refused).map { LimitsTests.note($0) }.joined(separator: "\n")
        let replay = try await HTTP.send(
            .POST, server.base + "/v1/notifications", body: again, headers: [("Content-Type", "application/x-ndjson")])
        XCTAssertEqual(replay.status, 200, String(replay.body.prefix(300)))
        let replaces = replay.lines.map { line -> String? in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["replaces"] as? String
        }
        XCTAssertEqual(replaces.count, acknowledged.count + refused.count)
        let lost = zip(acknowledged, replaces).filter { $0.0 != $0.1 }.map(\.0)
        XCTAssertEqual(lost, [], "answered 200 but not in state")
        let kept = zip(refused, replaces.dropFirst(acknowledged.count)).filter { $0.1 != nil }.map(\.0)
        XCTAssertEqual(kept, [], "answered 503 but in state")
        XCTAssertEqual(server.stop(), 0)
    }
}
