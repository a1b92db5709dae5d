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

    /// A policy whose functions write nothing but tables they just made runs in one copy for all.
    func testAPolicyThatKeepsNothingSharesOneCopy() throws {
        let policy = try load(
            """
            local followed = { ["Tech Talk"] = true, nested = { deep = "yes" } }
            local function label(x) local t = { x = x } t.y = x or "none" return t end
            rule("reads", function(n, ctx)
              local parts = {}
              for i = 1, 2 do local step = { i } step[2] = i parts[#parts + 1] = i end
              local made = label(n.body)
              local result = { level = "passive", reason = (n.body or "none") .. " " .. #parts .. " "
                .. tostring(followed["Tech Talk"]) .. " " .. followed.nested.deep .. " " .. made.y }
              result.relevance = n.body and 0.5 or 0.1
              -- arithmetic on a register below a fresh one's (its metamethod fallback names it)
              local k = #parts
              local tally = {}
              tally.n = k + 1
              return result
            end)
            """)
        for (user, body) in [("u1", "a"), ("u2", "b"), ("u3", "c"), ("u1", "d")] {
            XCTAssertEqual(try reason(policy, user: user, body: body), "\(body) 2 true yes \(body)")
        }
        XCTAssertTrue(policy.sharesOneCopy)
        XCTAssertEqual(policy.instanceCount, 2, "the first user's copy, made at load, and the shared one")
    }

    /// A rule that declares would add to the lists the next user's copy is read from (a copy that
    /// stole the first user's closure, found by review): declaring is for the files as they load.
    func testARuleCannotDeclare() throws {
        let policy = try load(
            """
            local a = app "com.a"; a {}
            local b = app "com.b"; b {}
            local function real(n, ctx)
              local body = tostring(n.body)
              rule("r", function(n2, ctx2) return { level = "passive", reason = "captured=" .. body } end)
              return { level = "passive", reason = "own=" .. body }
            end
            if a ~= b then rule("r", real) else rule("r", function() return { level = "passive", reason = "copy" } end) end
            """)
        let refused =
            "error: policy.lua:5: rule declares the policy: call it at the top level of a policy file, not in a rule"
        XCTAssertEqual(try reason(policy, user: "u1", body: "SECRET-u1"), refused)
        XCTAssertEqual(try reason(policy, user: "u2", body: "x"), "copy")
        XCTAssertEqual(try reason(policy, user: "u1", body: "SECRET-again"), refused)
        XCTAssertEqual(try reason(policy, user: "u3", body: "y"), "copy")
        for declaration in [
            "app \"x\"", "summary {}", "contact { handle = \"a@b\" }", "timezone \"UTC\"", "focus \"F\"",
        ] {
            let policy = try load(
                "rule(\"r\", function(n, ctx) \(declaration) return { level = \"passive\", reason = \"ran\" } end)")
            XCTAssertTrue(
                try reason(policy, user: "u1", body: "b").contains("declares the policy: call it at the top level"),
                declaration)
        }
    }

    /// A copy's files run for no one, as at load: the helpers answer only inside a rule (else the
    /// user whose notification made the copy would be in it, and in everyone's when it is shared:
    /// found by review).
    func testACopysTopLevelSeesNoUser() throws {
        let policy = try load(
            """
            local ok = pcall(hush.recent, { minutes = 100000 })
            local ok2 = pcall(hush.is_favorite, "a@example.com")
            rule("r", function(n, ctx)
              return { level = "passive", reason = tostring(ok) .. " " .. tostring(ok2) .. " " .. hush.recent { minutes = 1 } }
            end)
            """)
        for user in ["u1", "u2", "u3", "u1"] {
            XCTAssertEqual(try reason(policy, user: user, body: "b"), "false false 0", user)
        }
        XCTAssertTrue(policy.sharesOneCopy)
    }

    /// A rule that ran out of its budget right before the second user's first notification does
    /// not keep that user's copy from being shared (found by review: the files' compiled form was
    /// refused by the exhausted budget, and the refusal kept).
    func testAnOverrunBeforeTheSecondUserStillShares() throws {
        let policy = try load(
            """
            rule("r", function(n, ctx)
              if n.body == "LOOP" then while true do end end
              return { level = "passive", reason = "ran" }
            end)
            """, limits: LuaLimits(instructionLimit: 100_000))
        XCTAssertTrue(try reason(policy, user: "u1", body: "LOOP").hasPrefix("error:"))
        XCTAssertEqual(try reason(policy, user: "u2", body: "b"), "ran")
        XCTAssertEqual(try reason(policy, user: "u3", body: "b"), "ran")
        XCTAssertTrue(policy.sharesOneCopy)
    }

    /// Files that draw a random number as they run give each copy its own (the name rule alone
    /// misses a computed name: found by a differential fuzz).
    func testACopyThatDrewRandomNumbersIsNotShared() throws {
        let policy = try load(
            """
            local x = math["ran" .. "dom"](1000000000)
            rule("r", function(n, ctx) return { level = "passive", reason = tostring(x) } end)
            """)
        let drawn = try ["u1", "u2", "u3", "u4"].map { try reason(policy, user: $0, body: "b") }
        XCTAssertEqual(Set(drawn).count, 4, "\(drawn)")
        XCTAssertFalse(policy.sharesOneCopy)
    }

    /// The copy made at load and a user's copy may differ (`app "x"` returns a new function at
    /// load, the same one in a copy): the first user keeps theirs when one copy serves the others.
    func testTheFirstUserKeepsTheCopyMadeAtLoad() throws {
        let policy = try load(
            """
            local a = app "com.a"; a {}
            local b = app "com.b"; b {}
            local loaded = a ~= b
            rule("x", function(n, ctx) return { level = "passive", reason = loaded and "first" or "copy" } end)
            """)
        for (user, expected) in [("u1", "first"), ("u2", "copy"), ("u1", "first"), ("u3", "copy"), ("u1", "first")] {
            XCTAssertEqual(try reason(policy, user: user, body: "b"), expected, user)
        }
        XCTAssertTrue(policy.sharesOneCopy)
        policy.forgetInstance(of: "u1")
        XCTAssertEqual(try reason(policy, user: "u1", body: "b"), "copy", "a forgotten first copy is not made again")
    }

    /// Every way a function can keep something, each alone: the policy gets a copy per user, and
    /// the second user never sees the first one's notification.
    func testEveryWayToKeepSomethingGetsCopies() throws {
        let ways: [(String, String, String)] = [
            ("an upvalue's table", "local kept = {}", "kept[#kept + 1] = n.body; return kept[1]"),
            ("an upvalue", "local kept = ''", "kept = kept .. n.body; return kept"),
            ("a global", "", "kept = (kept or '') .. n.body; return kept"),
            ("a library's field", "", "string.kept = (string.kept or '') .. n.body; return string.kept"),
            ("hush's field", "", "hush.kept = (hush.kept or '') .. n.body; return hush.kept"),
            (
                "a table inside an upvalue's", "local kept = { inner = {} }",
                "kept.inner[#kept.inner + 1] = n.body; return kept.inner[1]"
            ),
            (
                "a helper writing its argument", "local kept = {} local function put(t, v) t[#t + 1] = v end",
                "put(kept, n.body); return kept[1]"
            ),
            ("an alias", "local kept = {}", "local t = kept; t[#t + 1] = n.body; return kept[1]"),
            (
                "a fresh table replaced by a kept one in a loop", "local kept = {}",
                "local t = {} for i = 1, 2 do t[i] = n.body; t = kept end return kept[2]"
            ),
            (
                "a table a call returned", "local kept = {} local function get() return kept end",
                "get()[1] = get()[1] or n.body; return kept[1]"
            ),
            (
                "varargs", "local kept = {} local function put(v, ...) local t = ... t[1] = t[1] or v end",
                "put(n.body, kept); return kept[1]"
            ),
            (
                "a counter closure",
                "local next = (function() local s = '' return function(x) s = s .. x return s end end)()",
                "return next(n.body)"
            ),
            (
                "gsub calling back", "local kept = {}",
                "n.body:gsub('.+', function(c) kept[#kept + 1] = c end); return kept[1]"
            ),
            ("table.insert", "local kept = {}", "table.insert(kept, n.body); return kept[1]"),
            ("rawset", "local kept = {}", "rawset(kept, #kept + 1, n.body); return kept[1]"),
            (
                "setmetatable", "local kept = setmetatable({}, { __index = function(t, k) return rawget(t, 'v') end })",
                "if not kept.v then rawset(kept, 'v', n.body) end return kept.x"
            ),
            ("load", "", "return load('kept = (kept or \"\") .. ...; return kept')(n.body)"),
            ("_G", "", "_G.kept = (_G.kept or '') .. n.body; return _G.kept"),
            ("_ENV", "", "_ENV.kept = (_ENV.kept or '') .. n.body; return _ENV.kept"),
        ]
        for (name, top, body) in ways {
            let policy = try load(
                """
                \(top)
                rule("keep", function(n, ctx)
                  local shown = (function() \(body) end)()
                  return { level = "passive", reason = tostring(shown) }
                end)
                """)
            XCTAssertTrue(try reason(policy, user: "first", body: "SECRET").contains("SECRET"), name)
            let second = try reason(policy, user: "second", body: "x")
            XCTAssertFalse(second.contains("SECRET"), "\(name): \(second)")
            let third = try reason(policy, user: "third", body: "y")
            XCTAssertFalse(third.contains("SECRET") || third.contains("x"), "\(name): \(third)")
            XCTAssertFalse(policy.sharesOneCopy, name)
        }
    }

    /// A `string.gmatch` iterator made at load keeps its place in its own state, where no bytecode
    /// shows a write: each user has their own, so each user's first call reads the first word.
    func testAnIteratorMadeAtLoadIsEachUsersOwn() throws {
        let policy = try load(
            """
            local words = ("alpha beta gamma delta"):gmatch("%a+")
            local function nextWord() return words() end
            rule("iterates", function(n, ctx) return { level = "passive", reason = tostring(nextWord()) } end)
            """)
        XCTAssertEqual(try reason(policy, user: "u1", body: "b"), "alpha")
        XCTAssertEqual(try reason(policy, user: "u2", body: "b"), "alpha")
        XCTAssertEqual(try reason(policy, user: "u3", body: "b"), "alpha")
        XCTAssertEqual(try reason(policy, user: "u1", body: "b"), "beta")
        XCTAssertFalse(policy.sharesOneCopy)
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
    /// Its rules keep nothing: one copy serves every user.
    func testTheStandardPolicySharesOneCopy() throws {
        let (perUser, policy) = try memoryPerUser(of: try standardPolicy())
        print("memory per user of Benchmarks/standard.lua: \(perUser) bytes (one copy for all)")
        XCTAssertTrue(policy.sharesOneCopy)
        XCTAssertEqual(policy.instanceCount, 2, "the first user's copy, made at load, and the shared one")
        XCTAssertLessThan(perUser, 64)
    }

    /// With a rule that keeps something, each user has a copy: the globals the policy names.
    func testACopyOfTheStandardPolicyWithMemoryTakesUnderAKilobyte() throws {
        let (perUser, policy) = try memoryPerUser(of: try standardPolicy() + Self.keeping)
        print("memory per user's copy of Benchmarks/standard.lua with memory: \(perUser) bytes")
        XCTAssertEqual(policy.instanceCount, 501)
        XCTAssertGreaterThan(perUser, 200, "a copy holds the policy's rules and the globals it names")
        XCTAssertLessThan(perUser, 1024)
    }

    /// `_G` (here only in a comment: a name counts wherever it stands) lets code reach every global:
    /// each copy then has them all, libraries copied.
    func testAPolicyNamingGCopiesEveryGlobal() throws {
        let named = try memoryPerUser(of: try standardPolicy() + Self.keeping).bytes
        let all = try memoryPerUser(of: try standardPolicy() + Self.keeping + "\n-- _G\n").bytes
        print("memory per copy, every global: \(all) bytes (\(named) with the globals it names)")
        XCTAssertGreaterThan(all, 3 * named)
    }

    static let keeping = """

        local seen = 0
        rule("counts", function(n, ctx) seen = seen + 1 end)
        """

    private func standardPolicy() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let path = root.appendingPathComponent("Benchmarks/standard.lua").path
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    private func memoryPerUser(of text: String) throws -> (bytes: Int, policy: PolicyInterpreter) {
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
        return ((policy.memoryInUseAfterCollecting() - before) / users, policy)
    }
}
