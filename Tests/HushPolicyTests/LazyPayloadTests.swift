import HushCore
import HushJSON
import HushPolicy
import Lua
import XCTest

/// `n.payload` and `n.headers` are built as far as a rule reads them; everything a rule can do
/// with them must behave as with the full copies they stand for.
class LazyPayloadTests: XCTestCase {
    /// Whether the envelope is read as `hush eval` reads a line (payload kept as text) rather than
    /// decoded from a tree: the subclass at the end runs every test that way.
    var readsText: Bool { false }

    private let payload = #"""
        {"app":"a","id":"p1","headers":{"apns-priority":5},
         "payload":{"aps":{"alert":{"title":"T","body":"B"},"badge":2},"list":[10,20,30],
                    "holes":[1,null,null,null,5],"z":null,"deep":{"a":{"b":{"c":"bottom"}}},
                    "change":{"reason":"from the payload","relevance":0.5},"empty":{},"none":[]}}
        """#

    private func context() -> RuleContext {
        let now = 1_795_000_000.0
        return RuleContext(
            now: now, local: ZoneClock(identifier: "UTC")!.local(now), focus: nil, locked: true,
            ringer: .ring, audio: .none, user: "default", state: EmptyState(), directory: Directory(contacts: []))
    }

    /// The line's envelope, read from its text when `readsText` and the fast reader takes it (a
    /// payload with escaped keys is left to decode).
    private func envelope(_ line: String) throws -> Envelope {
        let bytes = Array(line.utf8)
        if readsText, let read = bytes.withUnsafeBytes({ Envelope.read(line: $0, fallbackID: { "x" }) }) {
            XCTAssertTrue(read.payloadSource.isText)
            return read
        }
        return try Envelope.decode(JSONParser.parse(bytes), fallbackID: "x")
    }

    private func run(_ policy: PolicyInterpreter, _ line: String? = nil) throws -> (RuleSubject, [RuleReport]) {
        var subject = RuleSubject(
            envelope: try envelope(line ?? payload))
        let reports = try policy.runRules(subject: &subject, context: context())
        return (subject, reports)
    }

    private func reasons(_ rules: String, _ line: String? = nil) throws -> [String?] {
        let policy = try PolicyInterpreter(sources: [PolicySource(name: "lazy.lua", text: rules)])
        let (_, reports) = try run(policy, line)
        for report in reports { XCTAssertNil(report.error) }
        return reports.map { $0.changes?.reason }
    }

    func testTheLineIsReadWithItsPayloadAsText() throws {
        let read = Array(payload.utf8).withUnsafeBytes { Envelope.read(line: $0, fallbackID: { "x" }) }
        XCTAssertEqual(read?.payloadSource.isText, true, "the other tests' second run reads text")
    }

    func testNestedReadsAreCachedAndShared() throws {
        XCTAssertEqual(
            try reasons(
                """
                rule("read", function(n, ctx)
                  local p = n.payload
                  local same = p == n.payload and p.aps == n.payload.aps and p.aps.alert == p.aps.alert
                  return { reason = p.aps.alert.title .. p.aps.alert.body .. p.aps.badge .. tostring(same)
                    .. tostring(p.missing) .. tostring(p.z) .. p.deep.a.b.c .. tostring(p[1]) .. tostring(p.list.x)
                    .. p.list[2] .. p.list[3.0] .. tostring(p.list["1"]) .. tostring(p.list[4]) .. type(p.aps) .. n.headers["apns-priority"] }
                end)
                rule("again", function(n, ctx) return { reason = tostring(n.payload.aps.alert.title) } end)
                """), ["TB2truenilnilbottomnilnil2030nilniltable5", "T"])
    }

    func testIterationLengthAndRawAccessSeeTheWholeTable() throws {
        XCTAssertEqual(
            try reasons(
                """
                local function keys(t)
                  local k = {}
                  for key in pairs(t) do k[#k + 1] = tostring(key) end
                  table.sort(k)
                  return table.concat(k, ",")
                end
                rule("pairs", function(n, ctx)
                  local p = n.payload
                  local alert = p.aps.alert -- read before iterating: the same table comes back
                  local seen
                  for k, v in pairs(p.aps) do if k == "alert" then seen = (v == alert) end end
                  return { reason = keys(p) .. "|" .. keys(p.aps) .. "|" .. tostring(seen) }
                end)
                rule("length", function(n, ctx)
                  local p = n.payload
                  local sum = 0
                  for _, v in ipairs(p.list) do sum = sum + v end
                  return { reason = #p.list .. " " .. sum .. " " .. #p.holes .. " " .. #p.empty .. " " .. #p.none .. " " .. #p.aps
                    .. " " .. table.concat(n.payload.list, "+") .. " " .. select("#", table.unpack(p.holes)) }
                end)
                rule("raw", function(n, ctx)
                  local p = n.payload
                  return { reason = tostring(next(p.deep)) .. " " .. tostring(rawget(p.aps, "badge")) .. " " .. rawlen(p.list)
                    .. " " .. tostring(getmetatable(p.deep.a)) .. " " .. tostring(rawget(p.deep.a, "b") ~= nil)
                    .. " " .. tostring(next(n.payload.empty)) }
                end)
                """),
            ["aps,change,deep,empty,holes,list,none|alert,badge|true", "3 60 5 0 0 0 10+20+30 5", "a 2 3 nil true nil"])
    }

    func testWritesChangeOnlyTheCopy() throws {
        let policy = try PolicyInterpreter(sources: [
            PolicySource(
                name: "lazy.lua",
                text: """
                    rule("write", function(n, ctx)
                      local p = n.payload
                      local before = p.aps.badge
                      p.extra = "x"
                      p.aps.badge = 7
                      local alert = p.aps.alert
                      p.aps.alert = nil
                      p.list[2] = nil
                      rawset(p.deep, "new", 1)
                      setmetatable(p.deep.a, { __index = function(t, k) return "meta " .. k end })
                      return { reason = before .. p.extra .. p.aps.badge .. tostring(p.aps.alert) .. tostring(p.list[2])
                        .. p.deep.new .. p.deep.a.other .. p.deep.a.b.c }
                    end)
                    rule("sees the same copy", function(n, ctx)
                      return { reason = n.payload.extra .. n.payload.aps.badge .. tostring(n.payload.aps.alert) }
                    end)
                    """)
        ])
        let (subject, reports) = try run(policy)
        XCTAssertEqual(reports.map(\.error), [nil, nil])
        XCTAssertEqual(reports.map { $0.changes?.reason }, ["2x7nilnil1meta otherbottom", "x7nil"])
        XCTAssertEqual(subject.envelope.payload["aps"]?["badge"], .number(2), "the envelope itself never changes")
        // The next notification starts from its own payload.
        let (_, next) = try run(policy)
        XCTAssertEqual(next.map { $0.changes?.reason }, ["2x7nilnil1meta otherbottom", "x7nil"])
    }

    func testAKeptTableOutlivesItsNotification() throws {
        let policy = try PolicyInterpreter(sources: [
            PolicySource(
                name: "lazy.lua",
                text: """
                    local kept
                    rule("keep", function(n, ctx)
                      local first = kept == nil
                      kept = kept or n.payload
                      local garbage = {}
                      for i = 1, 20000 do garbage[i] = { i } end -- collections happen in between
                      return { reason = tostring(first) .. " " .. kept.aps.alert.title .. " " .. kept.deep.a.b.c }
                    end)
                    """)
        ])
        let (_, first) = try run(policy)
        XCTAssertEqual(first.first?.changes?.reason, "true T bottom")
        for i in 0..<5 {
            let other = #"{"app":"a","id":"o\#(i)","payload":{"aps":{"alert":{"title":"other"}}}}"#
            let (_, reports) = try run(policy, other)
            XCTAssertEqual(reports.first?.changes?.reason, "false T bottom")
        }
    }

    func testATableReturnedOrPassedIsReadWhole() throws {
        let policy = try PolicyInterpreter(sources: [
            PolicySource(
                name: "lazy.lua",
                text: """
                    rule("return it", function(n, ctx) return n.payload.change end)
                    rule("return the payload", function(n, ctx) return n.payload end)
                    """)
        ])
        let (subject, reports) = try run(policy)
        XCTAssertNil(reports[0].error)
        XCTAssertEqual(reports[0].changes?.reason, "from the payload")
        XCTAssertEqual(subject.relevance, 0.5)
        XCTAssertNotNil(reports[1].error, "the payload's keys are not changes")
    }

    func testABadKeyFailsAtTheRulesLine() throws {
        let policy = try PolicyInterpreter(sources: [
            PolicySource(
                name: "lazy.lua",
                text: """
                    rule("nil key", function(n, ctx)
                      local p = n.payload
                      p[nil] = 1
                    end)
                    rule("NaN key", function(n, ctx)
                      local p = n.payload.aps

                      p[0/0] = 1
                    end)
                    """)
        ])
        let (_, reports) = try run(policy)
        XCTAssertEqual(reports.map(\.error), ["lazy.lua:3: table index is nil", "lazy.lua:8: table index is NaN"])
    }

    func testWritesToTheViewsStillFail() throws {
        let policy = try PolicyInterpreter(sources: [
            PolicySource(
                name: "lazy.lua",
                text: """
                    rule("write", function(n, ctx) n.payload = {} end)
                    """)
        ])
        let (_, reports) = try run(policy)
        XCTAssertTrue(reports[0].error?.contains("read-only") == true, reports[0].error ?? "")
    }

    /// A policy keeping every payload's lazy table keeps the payloads alive outside Lua: they count
    /// against the memory cap as the tables would have, so it still runs out of memory.
    func testKeptPayloadsCountAgainstTheMemoryCap() throws {
        let text = String(repeating: "x", count: 200)
        let items = (0..<18).map { #""\#(text)\#($0)""# }.joined(separator: ",")
        let line = #"{"app":"a","id":"big","payload":{"aps":{},"items":[\#(items)]}}"#
        func errors(keeping: Bool) throws -> Int {
            let policy = try PolicyInterpreter(
                sources: [
                    PolicySource(
                        name: "keep.lua",
                        text: """
                            local kept = {}
                            rule("keep", function(n, ctx)
                              local p = n.payload
                              if \(keeping) then kept[#kept + 1] = p end
                              local garbage = {}
                              for i = 1, 200 do garbage[i] = { i } end -- collections happen
                            end)
                            """)
                ], limits: LuaLimits(memoryBytes: 4 << 20))
            var errors = 0
            for _ in 0..<3000 {
                let (_, reports) = try run(policy, line)
                if reports.first?.error != nil { errors += 1 }
            }
            return errors
        }
        XCTAssertEqual(try errors(keeping: false), 0)
        XCTAssertGreaterThan(try errors(keeping: true), 0, "3000 payloads of nearly 4 KiB do not fit in 4 MiB")
    }
}

/// Every test above with the envelope read from the line, its payload kept as text (test
/// discovery on Linux lists only the methods a class declares itself).
final class LazyPayloadFromTextTests: LazyPayloadTests {
    override var readsText: Bool { true }
    override func testTheLineIsReadWithItsPayloadAsText() throws { try super.testTheLineIsReadWithItsPayloadAsText() }
    override func testNestedReadsAreCachedAndShared() throws { try super.testNestedReadsAreCachedAndShared() }
    override func testIterationLengthAndRawAccessSeeTheWholeTable() throws {
        try super.testIterationLengthAndRawAccessSeeTheWholeTable()
    }
    override func testWritesChangeOnlyTheCopy() throws { try super.testWritesChangeOnlyTheCopy() }
    override func testAKeptTableOutlivesItsNotification() throws { try super.testAKeptTableOutlivesItsNotification() }
    override func testATableReturnedOrPassedIsReadWhole() throws { try super.testATableReturnedOrPassedIsReadWhole() }
    override func testABadKeyFailsAtTheRulesLine() throws { try super.testABadKeyFailsAtTheRulesLine() }
    override func testWritesToTheViewsStillFail() throws { try super.testWritesToTheViewsStillFail() }
    override func testKeptPayloadsCountAgainstTheMemoryCap() throws {
        try super.testKeptPayloadsCountAgainstTheMemoryCap()
    }
}
