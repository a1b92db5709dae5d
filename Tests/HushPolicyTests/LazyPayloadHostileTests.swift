import HushCore
import HushPolicy
import Lua
import XCTest

private struct NoState: StateReading {
    func delivered(user: String, app: String, id: String) -> StoredNotification? { nil }
    func queued(user: String, app: String, id: String) -> StoredNotification? { nil }
    func groupMembers(user: String, groupID: String) -> [StoredNotification] { [] }
    func calls(user: String, since: Double) -> [CallRecord] { [] }
    func manualFocus(user: String) -> ManualFocus? { nil }
    func recent(user: String, since: Double) -> [StoredNotification] { [] }
    func interactions(user: String, since: Double) -> [Interaction] { [] }
}

/// Rules that try to tell a lazy `n.payload` from the plain table it stands for, or to break it.
/// Most rules run a probe twice, on the lazy table and on the same table written as a Lua
/// constructor (built as the eager copy was: arrays presized to their length, objects to their
/// keys), and return both results: they must be the same.
final class LazyPayloadHostileTests: XCTestCase {
    private let payload = #"""
        {"app":"a","id":"h1","headers":{"apns-priority":5,"K":"header"},
         "payload":{"K":"kelvin","\u00e9":"precomposed","\ufffd":"replacement","n":1,
                    "holes":[1,null,null,null,5],"list":[10,20,30],
                    "meta":{"__index":{"x":5}},"gc":{"__gc":1},"locked":{"__metatable":"locked"},
                    "objs":[{"name":"a"},{"name":"b"},null,{"name":"d"}],
                    "aps":{"alert":{"title":"T","body":"B"},"badge":2},
                    "person":{"handle":"+15550001","aliases":["x@example.com"]},"opts":{"minutes":5}}}
        """#

    private func context() -> RuleContext {
        let now = 1_795_000_000.0
        return RuleContext(now: now, local: ZoneClock(identifier: "UTC")!.local(now), focus: nil, locked: true,
                           ringer: .ring, audio: .none, user: "default", state: NoState(), directory: Directory(contacts: []))
    }

    private func run(_ policy: PolicyInterpreter, _ line: String? = nil) throws -> [RuleReport] {
        var subject = RuleSubject(envelope: try Envelope.decode(JSONParser.parse(Array((line ?? payload).utf8)), fallbackID: "x"))
        return policy.runRules(subject: &subject, context: context())
    }

    private func policy(_ rules: String, limits: LuaLimits = LuaLimits()) throws -> PolicyInterpreter {
        try PolicyInterpreter(sources: [PolicySource(name: "lazy.lua", text: rules)], limits: limits)
    }

    /// Each rule's reason, "lazy|plain", split: the two halves must match.
    private func assertSameAsPlain(_ rules: String, line input: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        let reports = try run(try policy(rules), input)
        XCTAssertFalse(reports.isEmpty, file: file, line: line)
        for report in reports {
            XCTAssertNil(report.error, report.rule.name, file: file, line: line)
            let halves = (report.changes?.reason ?? "").split(separator: "|", omittingEmptySubsequences: false)
            XCTAssertEqual(halves.count, 2, report.rule.name, file: file, line: line)
            XCTAssertEqual(halves.first, halves.last, "\(report.rule.name): lazy | plain", file: file, line: line)
        }
    }

    /// A key is looked up by its bytes, as a Lua table does: not by Unicode canonical equivalence
    /// (U+212A KELVIN SIGN is "K"; "e" + U+0301 is "é"), and bytes that are not UTF-8 are no
    /// key of the payload (they do not stand for U+FFFD). Nor may such a read hide the real key.
    func testKeysAreMatchedByteForByte() throws {
        let line = #"{"app":"a","id":"k","headers":{"K":"header"},"payload":{"K":"kelvin","\u00e9":"precomposed","\ufffd":"replacement"}}"#
        try assertSameAsPlain(#"""
            local function probe(t)
              local r = {}
              for _, k in ipairs({ "\u{212A}", "e\u{301}", "\xff", "\xF0\x90\x80", "\xEF\xBF", "K", "\u{E9}", "\u{FFFD}" }) do
                r[#r + 1] = tostring(t[k])
              end
              local keys = {}
              for k in pairs(t) do keys[#keys + 1] = k end
              table.sort(keys)
              return table.concat(r, ",") .. " " .. table.concat(keys, ",")
            end
            rule("keys", function(n, ctx)
              local plain = { K = "kelvin", ["\u{E9}"] = "precomposed", ["\u{FFFD}"] = "replacement" }
              return { reason = probe(n.payload) .. "|" .. probe(plain) }
            end)
            rule("headers", function(n, ctx)
              return { reason = tostring(n.headers["\u{212A}"]) .. tostring(n.headers.K) .. "|nilheader" }
            end)
            """#, line: line)
    }
}
