import HushCore
import HushJSON
import HushPolicy
import Lua
import XCTest

/// What a policy's rules keep between notifications belongs to one user: each user has their own
/// copy of the policy (its globals, upvalues, library fields) inside the one interpreter.
final class PolicyMemoryTests: XCTestCase {
    /// Every way a rule can keep something: an upvalue, a global, a library field, `_G`, a chunk
    /// `load`ed without an environment, a table reached through `hush`.
    static let rememberingPolicy = """
        local seen = {}
        count = 0
        rule("remember", function(n, ctx)
          seen[#seen + 1] = n.body
          count = count + 1
          string.kept = (string.kept or "") .. n.body .. ";"
          hush.kept = (hush.kept or 0) + 1
          rawset(_G, "viaG", (rawget(_G, "viaG") or 0) + 1)
          local loaded = load("loaded = (loaded or 0) + 1; return loaded")()
          return { level = "passive", reason = table.concat(seen, "|") .. " count=" .. count .. " string=" .. string.kept
            .. " hush=" .. hush.kept .. " G=" .. viaG .. " load=" .. loaded }
        end)
        """

    private func reason(_ policy: PolicyInterpreter, user: String, body: String) throws -> String {
        let json = #"{"app": "a", "user": "\#(user)", "payload": {"aps": {"alert": {"body": "\#(body)"}}}}"#
        var subject = RuleSubject(envelope: try Envelope.decode(try JSONParser.parse(json), fallbackID: "n"))
        let now = 1_700_000_000.0
        let context = RuleContext(
            now: now, local: ZoneClock(identifier: "UTC")!.local(now), focus: nil, locked: false, ringer: .ring,
            audio: .none, user: user, state: EmptyState(), directory: Directory(contacts: []))
        let reports = try policy.runRules(subject: &subject, context: context)
        if let error = reports.compactMap(\.error).first { return "error: \(error)" }
        return reports.first?.changes?.reason ?? ""
    }

    private func load(_ text: String, limits: LuaLimits = LuaLimits()) throws -> PolicyInterpreter {
        try PolicyInterpreter(sources: [PolicySource(name: "policy.lua", text: text)], limits: limits)
    }

    func testEachUserHasTheirOwnMemory() throws {
        let policy = try load(Self.rememberingPolicy)
        XCTAssertEqual(
            try reason(policy, user: "u1", body: "SECRET-U1"),
            "SECRET-U1 count=1 string=SECRET-U1; hush=1 G=1 load=1")
        XCTAssertEqual(try reason(policy, user: "u2", body: "hello"), "hello count=1 string=hello; hush=1 G=1 load=1")
        XCTAssertEqual(
            try reason(policy, user: "u1", body: "again"),
            "SECRET-U1|again count=2 string=SECRET-U1;again; hush=2 G=2 load=2")
        XCTAssertEqual(
            try reason(policy, user: "u2", body: "bye"), "hello|bye count=2 string=hello;bye; hush=2 G=2 load=2")
        XCTAssertEqual(policy.instanceCount, 2)
    }

    /// The same ways to keep something, without `_G` or `load`: a copy then holds only the globals
    /// the files name, and still each user's own.
    func testAPolicyNamingFewGlobalsStillKeepsMemoryPerUser() throws {
        let policy = try load(
            """
            local seen = {}
            count = 0
            rule("remember", function(n, ctx)
              seen[#seen + 1] = n.body
              count = count + 1
              string.kept = (string.kept or "") .. n.body .. ";"
              hush.kept = (hush.kept or 0) + 1
              table.kept = (table.kept or 0) + 1
              made_in_a_rule = (made_in_a_rule or 0) + 1
              return { level = "passive", reason = table.concat(seen, "|") .. " count=" .. count .. " string="
                .. string.kept .. " hush=" .. hush.kept .. " table=" .. table.kept .. " made=" .. made_in_a_rule
                .. " " .. n.body:upper() .. " " .. tostring(math.floor(2.5)) .. " " .. select("#", 1, 2) }
            end)
            """)
        XCTAssertEqual(
            try reason(policy, user: "u1", body: "SECRET-U1"),
            "SECRET-U1 count=1 string=SECRET-U1; hush=1 table=1 made=1 SECRET-U1 2 2")
        XCTAssertEqual(
            try reason(policy, user: "u2", body: "hello"), "hello count=1 string=hello; hush=1 table=1 made=1 HELLO 2 2"
        )
        XCTAssertEqual(
            try reason(policy, user: "u1", body: "again"),
            "SECRET-U1|again count=2 string=SECRET-U1;again; hush=2 table=2 made=2 AGAIN 2 2")
        XCTAssertEqual(
            try reason(policy, user: "u3", body: "x"), "x count=1 string=x; hush=1 table=1 made=1 X 2 2")
    }

    /// A global the files never name is not in a copy; reaching for one by name (which the files
    /// would then name) reads it as before, and a name that is no global errs as before.
    func testAGlobalTheFilesNeverNameIsNotMissed() throws {
        let policy = try load(
            """
            rule("uses", function(n, ctx)
              local ok, message = pcall(function() return no_such_global() end)
              return { level = "passive", reason = type(ipairs) .. " " .. tostring(ok) .. " " .. message }
            end)
            """)
        for user in ["first", "second", "third"] {
            XCTAssertEqual(
                try reason(policy, user: user, body: "b"),
                "function false policy.lua:2: attempt to call a nil value (global 'no_such_global')", user)
        }
    }

    func testEveryNameLikeRunCounts() {
        let names = PolicyInterpreter.identifiers(in: [
            PolicySource(name: "a.lua", text: "n.payload.x -- _Gx, see \"string\"\nlocal s = 3 + 0x1F _ENV2"),
            PolicySource(name: "b.lua", text: "z=[[math]]"),
        ])
        XCTAssertEqual(names, ["n", "payload", "x", "_Gx", "see", "string", "local", "s", "_ENV2", "z", "math"])
        XCTAssertFalse(names.contains("load"), "payload is one name")
    }

    func testTheLeastRecentlyUsedCopyIsForgottenBeyondTheBound() throws {
        let policy = try load(Self.rememberingPolicy)
        policy.maxInstances = 2
        XCTAssertTrue(try reason(policy, user: "u1", body: "a").hasPrefix("a count=1"))
        XCTAssertTrue(try reason(policy, user: "u2", body: "b").hasPrefix("b count=1"))
        XCTAssertTrue(try reason(policy, user: "u2", body: "c").hasPrefix("b|c count=2"))
        // A third user: u1 (used least recently) is forgotten, u2 is kept.
        XCTAssertTrue(try reason(policy, user: "u3", body: "d").hasPrefix("d count=1"))
        XCTAssertLessThanOrEqual(policy.instanceCount, 2)
        XCTAssertTrue(try reason(policy, user: "u2", body: "e").hasPrefix("b|c|e count=3"))
        XCTAssertTrue(try reason(policy, user: "u1", body: "f").hasPrefix("f count=1"), "u1 starts over")
    }

    func testCopiesAreForgottenWhenTheyFillHalfTheMemoryCap() throws {
        // Each user keeps about 1 MB; the cap is 16 MB: without forgetting, the 17th user's rule
        // would run out of memory.
        let policy = try load(
            """
            local kept = {}
            rule("keep", function(n, ctx)
              kept[#kept + 1] = string.rep("x", 1000000)
              return { level = "passive", reason = "kept " .. #kept }
            end)
            """, limits: LuaLimits(memoryBytes: 16 << 20))
        for i in 0..<40 {
            XCTAssertEqual(try reason(policy, user: "u\(i)", body: "b"), "kept 1", "user \(i)")
        }
        XCTAssertLessThan(policy.instanceCount, 16)
    }

    func testACopyThatDeclaresOtherRulesIsNotRun() throws {
        // The rule's name is drawn at random when the file runs: another user's copy declares another.
        let policy = try load(
            """
            rule("r" .. math.random(1, 1000000000), function(n, ctx) return { level = "passive", reason = "ran" } end)
            """)
        XCTAssertEqual(try reason(policy, user: "first", body: "b"), "ran")
        let second = try reason(policy, user: "second", body: "b")
        XCTAssertTrue(second.contains("not run: this user's copy of the policy declared other rules"), second)
    }

    func testAFileOfTwoHundredLocalsStillGetsCopies() throws {
        // A chunk at Lua's limit of locals cannot be wrapped in a function of _ENV: it is compiled
        // again for each user instead.
        let locals = (1...199).map { "local v\($0) = \($0)" }.joined(separator: "\n")
        let policy = try load(
            locals
                + "\nlocal count = 0\nrule(\"r\", function(n, ctx) count = count + v1 return { level = \"passive\", reason = tostring(count) } end)"
        )
        XCTAssertEqual(try reason(policy, user: "a", body: "b"), "1")
        XCTAssertEqual(try reason(policy, user: "a", body: "b"), "2")
        XCTAssertEqual(try reason(policy, user: "b", body: "b"), "1")
    }

    func testErrorsInACopyNameTheFileAndLine() throws {
        let policy = try load(
            """
            count = 0
            rule("fails", function(n, ctx)
              count = count + 1
              if count == 2 then error("second") end
              return nil
            end)
            """)
        XCTAssertEqual(try reason(policy, user: "a", body: "b"), "")
        XCTAssertEqual(try reason(policy, user: "b", body: "b"), "")
        XCTAssertEqual(try reason(policy, user: "b", body: "b"), "error: policy.lua:4: second")
    }
}

/// What a user's copy of a realistic policy costs in memory (printed; docs/security.md quotes it).
final class PolicyCopyCostTests: XCTestCase {
    func testACopyOfTheStandardPolicyTakesUnderAKilobyte() throws {
        let perUser = try memoryPerCopy(of: try standardPolicy())
        print("memory per user's copy of Benchmarks/standard.lua: \(perUser) bytes")
        XCTAssertGreaterThan(perUser, 200, "a copy holds the policy's rules and the globals it names")
        XCTAssertLessThan(perUser, 1024)
    }

    /// `_G` (here only in a comment: a name counts wherever it stands) lets code reach every global:
    /// each copy then has them all, libraries copied.
    func testAPolicyNamingGCopiesEveryGlobal() throws {
        let named = try memoryPerCopy(of: try standardPolicy())
        let all = try memoryPerCopy(of: try standardPolicy() + "\n-- _G\n")
        print("memory per copy, every global: \(all) bytes (\(named) with the globals it names)")
        XCTAssertGreaterThan(all, 3 * named)
    }

    private func standardPolicy() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let path = root.appendingPathComponent("Benchmarks/standard.lua").path
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    private func memoryPerCopy(of text: String) throws -> Int {
        let policy = try PolicyInterpreter(sources: [PolicySource(name: "standard.lua", text: text)])
        let now = 1_700_000_000.0
        func decide(_ user: String) throws {
            let json =
                #"{"app": "com.example.chat", "user": "\#(user)", "payload": {"aps": {"alert": {"body": "hi"}}}}"#
            var subject = RuleSubject(envelope: try Envelope.decode(try JSONParser.parse(json), fallbackID: "n"))
            let context = RuleContext(
                now: now, local: ZoneClock(identifier: "UTC")!.local(now), focus: nil, locked: false, ringer: .ring,
                audio: .none, user: user, state: EmptyState(), directory: Directory(contacts: []))
            _ = try policy.runRules(subject: &subject, context: context)
        }
        try decide("warm-up")
        let before = policy.memoryInUseAfterCollecting()
        let users = 500
        for i in 0..<users { try decide("user-\(i)") }
        XCTAssertEqual(policy.instanceCount, users + 1)
        return (policy.memoryInUseAfterCollecting() - before) / users
    }
}
