import Foundation
import HushCore
import HushJSON
import HushPolicy
import Lua
import XCTest

/// Inputs found while fuzzing (fuzz/README.md), kept as they were found: each must be handled
/// without a crash, and with the right outcome.
final class PolicyFuzzRegressionTests: XCTestCase {
    private func context() -> RuleContext {
        let now = 1_795_000_000.0
        return RuleContext(
            now: now, local: ZoneClock(identifier: "UTC")!.local(now), focus: nil, locked: true,
            ringer: .ring, audio: .none, user: "default", state: EmptyState(), directory: Directory(contacts: []))
    }

    /// A rule that walks `n.payload.d.a.a…` and says how deep it got and what it found there.
    private let walker = """
        rule("walk", function(n, ctx)
          local t, d = n.payload.d, 0
          while type(t) == "table" do t = t.a; d = d + 1 end
          return { reason = d .. ":" .. tostring(t) }
        end)
        """

    private func walk(_ line: [UInt8], with policy: PolicyInterpreter) throws -> String? {
        var subject = RuleSubject(envelope: try Envelope.decode(JSONParser.parse(line), fallbackID: "x"))
        let reports = try policy.runRules(subject: &subject, context: context())
        XCTAssertNil(reports.first?.error)
        return reports.first?.changes?.reason
    }

    /// A 454-byte notification (well inside APNs' 4096) whose payload nests 64 objects deep. Building
    /// `n.payload` pushed one table and one key per level inside a host function, where Lua only
    /// guarantees 20 free stack slots and lua_push* never grow the stack: the pushes wrote past the
    /// end of Lua's stack and corrupted the heap (`hush eval` died with "malloc(): unaligned tcache
    /// chunk detected"). ASan could not see it: the writes happen inside the uninstrumented liblua.
    func testDeeplyNestedPayloadDoesNotOverflowTheLuaStack() throws {
        let crasher = Array(
            Data(
                base64Encoded: """
                    eyJhcHAiOiJjb20uZXhhbXBsZS5jaGF0IiwiaWQiOiJkZWVwIiwicGF5bG9hZCI6eyJhcHMiOnsiYWxlcnQiOiJ4In0sImQiOnsiYSI6eyJhIjp7\
                    ImEiOnsiYSI6eyJhIjp7ImEiOnsiYSI6eyJhIjp7ImEiOnsiYSI6eyJhIjp7ImEiOnsiYSI6eyJhIjp7ImEiOnsiYSI6eyJhIjp7ImEiOnsiYSI6\
                    eyJhIjp7ImEiOnsiYSI6eyJhIjp7ImEiOnsiYSI6eyJhIjp7ImEiOnsiYSI6eyJhIjp7ImEiOnsiYSI6eyJhIjp7ImEiOnsiYSI6eyJhIjp7ImEi\
                    OnsiYSI6eyJhIjp7ImEiOnsiYSI6eyJhIjp7ImEiOnsiYSI6eyJhIjp7ImEiOnsiYSI6eyJhIjp7ImEiOnsiYSI6eyJhIjp7ImEiOnsiYSI6eyJh\
                    Ijp7ImEiOnsiYSI6eyJhIjp7ImEiOnsiYSI6eyJhIjp7ImEiOnsiYSI6eyJhIjp7ImEiOjF9fX19fX19fX19fX19fX19fX19fX19fX19fX19fX19\
                    fX19fX19fX19fX19fX19fX19fX19fX19fX19fX19fX19fQ==
                    """)!)
        XCTAssertEqual(crasher.count, 454)
        let policy = try PolicyInterpreter(sources: [PolicySource(name: "walk.lua", text: walker)])
        // Many times over, in one interpreter: a corrupted heap shows up sooner or later.
        for _ in 0..<50 {
            // payload is level 0; the 63 objects under "d" are levels 1…63: all of them are there.
            XCTAssertEqual(try walk(crasher, with: policy), "63:1")
        }
    }

    /// Found by the hostile review that went with the fuzzing: print() and hush.note() copied the
    /// whole string into Swift on every call, and print() lines piled up without a cap. A loop
    /// costs a few instructions per call, so the budget let a rule copy gigabytes between two
    /// checks: printing an 8 MiB string 300 times took 15 s and 2.1 GB in `hush eval`.
    func testPrintAndNoteOfHugeStringsAreBounded() throws {
        // 1 MiB strings and a roomy time limit: print still builds each line in C (bounded by the
        // string and memory caps), and a slow machine (or ASan) must not turn this into a timeout.
        let policy = try PolicyInterpreter(
            sources: [
                PolicySource(
                    name: "print.lua",
                    text: """
                        rule("prints", function(n, ctx)
                          local s = string.rep("x", 1024 * 1024)
                          for i = 1, 300 do print(s) end
                          for i = 1, 300 do hush.note(s) end
                          for i = 1, 300 do print("é" .. i) end
                        end)
                        rule("after", function(n, ctx) print("still runs") return { relevance = 1 } end)
                        """)
            ], limits: LuaLimits(timeLimitMilliseconds: 30_000))
        var subject = RuleSubject(
            envelope: try Envelope.decode(JSONParser.parse(#"{"app":"a","payload":{"aps":{}}}"#), fallbackID: "x"))
        let start = DispatchTime.now().uptimeNanoseconds
        let reports = try policy.runRules(subject: &subject, context: context())
        XCTAssertLessThan(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, 20)
        XCTAssertEqual(reports.map(\.error), [nil, nil])
        let notes = reports.flatMap(\.notes)
        XCTAssertEqual(notes.count, 101, "100 lines per rule, like hush.note; the next rule has its own")
        XCTAssertTrue(notes.allSatisfy { $0.count <= 1000 })
        XCTAssertEqual(notes.last, "still runs")
        XCTAssertEqual(subject.relevance, 1)
    }

    func testPayloadDepthIsCappedAt64Levels() throws {
        let policy = try PolicyInterpreter(sources: [PolicySource(name: "walk.lua", text: walker)])
        for (depth, expected) in [
            (1, "1:1"), (19, "19:1"), (40, "40:1"), (63, "63:1"), (64, "63:nil"), (500, "63:nil"),
        ] {
            let line =
                #"{"app":"a","payload":{"aps":{},"d":"# + String(repeating: #"{"a":"#, count: depth) + "1"
                + String(repeating: "}", count: depth) + "}}"
            for _ in 0..<10 { XCTAssertEqual(try walk(Array(line.utf8), with: policy), expected, "depth \(depth)") }
        }
        // Arrays too (one slot per level, not two).
        let arrays =
            #"{"app":"a","payload":{"aps":{},"d":"# + String(repeating: "[", count: 200)
            + String(repeating: "]", count: 200) + "}}"
        let counter = try PolicyInterpreter(sources: [
            PolicySource(
                name: "count.lua",
                text: """
                    rule("count", function(n, ctx)
                      local t, d = n.payload.d, 0
                      while type(t) == "table" do t = t[1]; d = d + 1 end
                      return { reason = tostring(d) }
                    end)
                    """)
        ])
        var subject = RuleSubject(envelope: try Envelope.decode(JSONParser.parse(arrays), fallbackID: "x"))
        XCTAssertEqual(try counter.runRules(subject: &subject, context: context()).first?.changes?.reason, "63")
    }
}
