import Foundation
import XCTest

/// Whatever a policy or an input line does, a decision line stays bounded (docs/security.md,
/// "Output bounds"): texts are cut to 1 KiB at a character boundary with "…", lists to a count.
final class OutputBoundsTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("hush-bounds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: dir)
    }

    private func eval(policy: String, line: String, explain: Bool = false) throws -> (HushBinary.Run, [String: Any]) {
        let path = dir.appendingPathComponent("policy.lua").path
        try policy.write(toFile: path, atomically: true, encoding: .utf8)
        let run = try HushBinary.run(
            ["eval", "--ephemeral", "--policy", path] + (explain ? ["--explain"] : []), stdin: line + "\n")
        return (run, run.objects.first ?? [:])
    }

    static let line = #"{"app":"a","id":"n1","date":"2026-11-24T10:00:00Z","payload":{"aps":{"alert":{"body":"hi"}}}}"#

    func testAHugeReasonIsCutAtACharacterBoundary() throws {
        // 16 MB of "é" (2 bytes each) after one ASCII byte: the cut must not split a character.
        let (run, decision) = try eval(
            policy:
                #"rule("big", function(n, ctx) return { level = "passive", reason = "x" .. string.rep("é", 8000000) } end)"#,
            line: Self.line)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertLessThan(run.stdout.utf8.count, 8 << 10, "the whole line")
        let reason = try XCTUnwrap((decision["reasons"] as? [String])?.first)
        XCTAssertTrue(reason.hasPrefix("rule 'big': xé"), reason)
        XCTAssertTrue(reason.hasSuffix("é…"), String(reason.suffix(10)))
        XCTAssertLessThanOrEqual(reason.utf8.count, 1024)
    }

    func testHugeErrorsAndNotesAreCutAndCounted() throws {
        // 40 rules that each fail with a 100 KB message (a hundred times what is kept) after printing
        // 10 long lines; lighter than 1 MB, which a loaded machine could not finish in a rule's 1 s.
        let rules = (1...40).map {
            #"rule("r\#($0)", function(n, ctx) for i = 1, 10 do print(string.rep("p", 5000)) end error(string.rep("e", 100000)) end)"#
        }.joined(separator: "\n")
        let (run, decision) = try eval(policy: rules, line: Self.line, explain: true)
        XCTAssertEqual(run.status, 0, run.stderr)
        let errors = try XCTUnwrap(decision["errors"] as? [String])
        XCTAssertEqual(errors.count, 17, "16 errors and a count of the rest")
        XCTAssertTrue(errors.dropLast().allSatisfy { $0.utf8.count <= 1024 && $0.hasSuffix("…") }, "\(errors)")
        XCTAssertEqual(errors.last, "… 24 more rule errors left out (a decision lists 16)")
        let trace = try XCTUnwrap(decision["trace"] as? [[String: Any]])
        XCTAssertEqual(trace.count, 257, "256 steps and a count of the rest")
        XCTAssertTrue(trace.allSatisfy { (($0["note"] as? String)?.utf8.count ?? 0) <= 1024 })
        XCTAssertTrue((trace.last?["note"] as? String)?.hasSuffix("more steps left out (a trace keeps 256)") == true)
        // The built-in outcome is still given its reason.
        XCTAssertEqual(
            (decision["reasons"] as? [String])?.last, "alert: active, no sound (the notification asks for none)")
        XCTAssertLessThan(run.stdout.utf8.count, 1 << 20)
    }

    func testManyRulesThatChangeSomethingKeepTheBuiltInReason() throws {
        let rules = (1...50).map {
            #"rule("r\#($0)", function(n, ctx) return { relevance = 0.5, reason = "because \#($0)" } end)"#
        }.joined(separator: "\n")
        let (run, decision) = try eval(policy: rules, line: Self.line)
        XCTAssertEqual(run.status, 0, run.stderr)
        let reasons = try XCTUnwrap(decision["reasons"] as? [String])
        XCTAssertEqual(reasons.prefix(16), ArraySlice((1...16).map { "rule 'r\($0)': because \($0)" }))
        XCTAssertEqual(reasons[16], "… 34 more rules changed something (a decision lists 16)")
        XCTAssertEqual(reasons.last, "alert: active, no sound (the notification asks for none)")
        XCTAssertEqual((decision["rules"] as? [String])?.count, 32)
    }

    func testOverlongIdentifiersAreRefusedNamingTheField() throws {
        let long = String(repeating: "x", count: 1025)
        for field in ["id", "app", "user"] {
            var object = try XCTUnwrap(
                JSONSerialization.jsonObject(with: Data(Self.line.utf8)) as? [String: Any])
            object[field] = long
            let line = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            let (run, decision) = try eval(policy: "", line: line)
            XCTAssertEqual(run.status, 1, field)
            XCTAssertEqual(decision["error"] as? String, "\(field): is 1025 bytes; at most 1024 are allowed")
        }
    }
}
