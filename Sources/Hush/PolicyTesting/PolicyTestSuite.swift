import Foundation
package import HushCore
package import HushJSON
package import HushPolicy
import HushState
import Lua

/// Policy tests written in Lua beside the policy (`policies/work_test.lua` tests `policies/work.lua`),
/// in the spirit of `opa test`: each `test(name, { context, before, notification, expect })` decides a
/// notification with a fresh in-memory state and compares the decision fields it lists.
package struct PolicyTestSuite: Sendable {
    package struct TestCase: Sendable {
        package var name: String
        package var file: String
        package var line: Int
        /// The test table as JSON (`null` sentinel already turned into JSON null).
        package var spec: JSONObject
        /// What is wrong with the test itself, found before it runs: such a test fails without
        /// running, and the others still run.
        package var problems: [String]
    }

    package struct Failure: Sendable, CustomStringConvertible {
        package var file: String
        package var line: Int
        package var test: String
        package var messages: [String]

        package var description: String {
            "\(file):\(line): FAIL \"\(test)\"\n" + messages.map { "    " + $0 }.joined(separator: "\n")
        }
    }

    package struct Result: Sendable {
        package var passed = 0
        package var failures: [Failure] = []
        package var failed: Int { failures.count }
        /// `N passed, N failed`
        package var summaryLine: String { "\(passed) passed, \(failed) failed" }
    }

    package let testFile: String
    package let policyPaths: [String]
    package let cases: [TestCase]
    /// An error outside any test that stopped the file part way; the tests declared before it
    /// still run.
    package let stopped: PolicyProblem?

    /// Test files under the paths: files as given, directories searched for `*_test.lua`.
    package static func testFiles(in paths: [String]) -> [String] {
        var out: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                let enumerator = FileManager.default.enumerator(atPath: path)
                var found: [String] = []
                while let name = enumerator?.nextObject() as? String {
                    if name.hasSuffix("_test.lua") { found.append((path as NSString).appendingPathComponent(name)) }
                }
                out += found.sorted()
            } else {
                out.append(path)
            }
        }
        return out
    }

    /// Loads a test file in its own sandbox. Its policy is the file of the same name without
    /// `_test`, unless the file says `policy "other.lua"` (paths relative to the test file).
    package init(testFile: String) throws(PolicyLoadError) {
        self.testFile = testFile
        guard let data = FileManager.default.contents(atPath: testFile), let text = String(data: data, encoding: .utf8)
        else {
            throw PolicyLoadError(problems: [PolicyProblem(file: testFile, line: 0, message: "cannot be read")])
        }
        let lua: LuaState
        do { lua = try LuaState() } catch {
            throw PolicyLoadError(problems: [PolicyProblem(file: testFile, line: 0, message: error.message)])
        }
        let registry: Int32
        do {
            try lua.load(Self.prelude, chunkName: "=hush-test")
            lua.pushCallsiteFunction()
            lua.beginBudget()
            try lua.call(arguments: 1, results: 1)
            lua.endBudget()
            registry = lua.reference()
        } catch {
            throw PolicyLoadError(problems: [
                PolicyProblem(file: error.file ?? testFile, line: error.line ?? 0, message: error.message)
            ])
        }
        var stopped: PolicyProblem?
        do {
            try lua.run(text, chunkName: testFile)
        } catch {
            // A syntax error means nothing ran. Any other error stops the file where it is raised,
            // and the tests declared before it are still worth running.
            let problem = PolicyProblem(file: error.file ?? testFile, line: error.line ?? 0, message: error.message)
            if error.kind == .syntax { throw PolicyLoadError(problems: [problem]) }
            stopped = PolicyProblem(
                file: problem.file, line: problem.line, message: problem.message + "; the tests after it did not run")
        }
        lua.pushReference(registry)
        let recorded = lua.value(at: -1, depth: 24)
        lua.pop()
        let directory = (testFile as NSString).deletingLastPathComponent
        var policies: [String] = []
        var cases: [TestCase] = []
        for item in recorded.tableValue?.array ?? [] {
            guard let entry = item.tableValue else { continue }
            let line = entry["line"]?.intValue ?? 0
            switch entry["kind"]?.stringValue {
            case "policy":
                for p in entry["paths"]?.tableValue?.array.compactMap(\.stringValue) ?? [] {
                    policies.append(p.hasPrefix("/") ? p : (directory as NSString).appendingPathComponent(p))
                }
            case "test":
                let name = entry["name"]?.stringValue ?? "(unnamed)"
                if let raw = entry["error"]?.stringValue {
                    // The test's function raised an error: that test fails, the others run.
                    var error = LuaError(kind: .runtime, raw: raw)
                    if let file = error.file, file.hasPrefix("..."), testFile.hasSuffix(file.dropFirst(3)) {
                        error.file = testFile
                    }
                    cases.append(
                        TestCase(
                            name: name, file: testFile, line: line, spec: JSONObject(), problems: [error.description]))
                    continue
                }
                guard case .object(let spec) = Self.json(from: entry["spec"] ?? .nil) else {
                    cases.append(
                        TestCase(
                            name: name, file: testFile, line: line, spec: JSONObject(),
                            problems: ["needs a table { notification = …, expect = … }, or a function returning one"]))
                    continue
                }
                cases.append(
                    TestCase(name: name, file: testFile, line: line, spec: spec, problems: Self.problems(in: spec)))
            default:
                break
            }
        }
        if policies.isEmpty {
            let base = (testFile as NSString).lastPathComponent
            let policyName = String(base.dropLast("_test.lua".count)) + ".lua"
            policies = [(directory as NSString).appendingPathComponent(policyName)]
        }
        self.policyPaths = policies
        self.cases = cases
        self.stopped = stopped
    }

    // MARK: checking

    static let specKeys = ["context", "interactions", "before", "notification", "expect"]

    /// The decision's fields in the order it prints them (docs/reference.md, "Decision"), and the fields of the ones that
    /// are objects. `expect` may list only these; failures name them in this order.
    package static let decisionFields = [
        "id", "app", "user", "delivery", "level", "requested_level", "focus", "breakthrough",
        "alert", "badge", "announcement", "group", "placeholder", "summary_at", "replaces",
        "reasons", "rules", "errors", "trace",
    ]
    package static let objectFields = [
        "alert": ["sound", "sound_name", "volume", "vibrate", "wake_screen", "banner", "lock_screen", "bypass_ringer"],
        "group": ["id", "count", "summary"],
    ]

    /// What `run` would refuse in a test table, without a policy: its keys, the expected fields, the
    /// context and the notifications. In a stable order, whatever order Lua's table traversal gave.
    static func problems(in spec: JSONObject) -> [String] {
        var out: [String] = []
        for key in ordered(spec.keys, by: specKeys) where !specKeys.contains(key) {
            out.append("unknown key '\(key)'\(Spelling.hint(for: key, in: specKeys))")
        }
        if spec["notification"] == nil || spec["expect"] == nil {
            out.append("needs notification = { … } and expect = { … }")
        }
        if let context = spec["context"] {
            do { _ = try EvaluationContext.decode(context) } catch { out.append(describe(error, in: "context")) }
        }
        if let donated = spec["interactions"] {
            if case .array(let items) = donated {
                for (i, item) in items.enumerated() {
                    do { _ = try Interaction.decode(item) } catch {
                        out.append(describe(error, in: "interactions[\(i + 1)]"))
                    }
                }
            } else {
                out.append("interactions: must be a list of interactions")
            }
        }
        if let before = spec["before"] {
            if case .array(let items) = before {
                for (i, item) in items.enumerated() {
                    do { _ = try Envelope.decode(item, fallbackID: "check") } catch {
                        out.append(describe(error, in: "before[\(i + 1)]"))
                    }
                }
            } else {
                out.append("before: must be a list of notifications")
            }
        }
        if let notification = spec["notification"] {
            do { _ = try Envelope.decode(notification, fallbackID: "check") } catch {
                out.append(describe(error, in: "notification"))
            }
        }
        switch spec["expect"] {
        case .object(let expect)?:
            for key in ordered(expect.keys, by: decisionFields) {
                guard decisionFields.contains(key) else {
                    out.append("expect.\(key): not a decision field\(Spelling.hint(for: key, in: decisionFields))")
                    continue
                }
                guard let fields = objectFields[key], case .object(let inner)? = expect[key] else { continue }
                for field in ordered(inner.keys, by: fields) where !fields.contains(field) {
                    out.append("expect.\(key).\(field): not a field of \(key)\(Spelling.hint(for: field, in: fields))")
                }
            }
        case nil:
            break
        default:
            out.append("expect: must be a table of decision fields")
        }
        return out
    }

    /// Everything wrong with `test` before it runs, the focus its context names included.
    package func problems(of test: TestCase, policy: Policy) -> [String] {
        var out = test.problems
        if let json = test.spec["context"], let context = try? EvaluationContext.decode(json) {
            do { try context.checkFocus(declaredBy: policy) } catch { out.append(Self.describe(error, in: "context")) }
        }
        return out
    }

    static func describe(_ error: InputError, in part: String) -> String {
        error.field.map { "\(part).\($0): \(error.message)" } ?? "\(part): \(error.message)"
    }

    static let prelude = #"""
        local callsite = ...
        local recorded = {}
        null = "\0hush-null\0"
        function test(name, spec)
          local file, line = callsite(2)
          local entry = { kind = "test", name = name, spec = spec, line = line }
          if type(spec) == "function" then
            -- Built now, but an error fails only this test.
            local ok, result = pcall(spec)
            if ok then entry.spec = result else entry.spec, entry.error = nil, tostring(result) end
          end
          recorded[#recorded + 1] = entry
        end
        function policy(...)
          local file, line = callsite(2)
          local paths = { ... }
          if type(paths[1]) == "table" then paths = paths[1] end
          recorded[#recorded + 1] = { kind = "policy", paths = paths, line = line }
        end
        return recorded
        """#

    /// Lua table → JSON: a table with only 1…n keys is an array, `{}` an empty object, and the
    /// global `null` (a string no JSON input would hold) JSON null.
    static func json(from value: LuaValue) -> JSONValue {
        switch value {
        case .nil, .function, .other: return .null
        case .boolean(let b): return .bool(b)
        case .integer(let i): return .number(Double(i))
        case .number(let d): return .number(d)
        case .string(let s): return s == nullMarker ? .null : .string(s)
        case .table(let t):
            if t.entries.isEmpty && !t.array.isEmpty { return .array(t.array.map(json(from:))) }
            var object = JSONObject()
            for entry in t.entries {
                let key: String
                switch entry.key {
                case .string(let s): key = s
                case .integer(let i): key = String(i)
                default: continue
                }
                object[key] = json(from: entry.value)
            }
            for (i, element) in t.array.enumerated() { object[String(i + 1)] = json(from: element) }
            return .object(object)
        }
    }

    static let nullMarker = "\u{0}hush-null\u{0}"

    // MARK: running

    /// Runs every test with a fresh state; `engine` is the policy under test.
    package func run(engine: Engine) -> Result {
        var result = Result()
        for test in cases {
            let problems = problems(of: test, policy: engine.policy)
            let messages = problems.isEmpty ? run(test, engine: engine) : problems
            if messages.isEmpty {
                result.passed += 1
            } else {
                result.failures.append(Failure(file: test.file, line: test.line, test: test.name, messages: messages))
            }
        }
        return result
    }

    func run(_ test: TestCase, engine: Engine) -> [String] {
        let session: Session
        do { session = try engine.makeSession() } catch { return ["the policy could not be loaded: \(error)"] }
        var context = EvaluationContext()
        if let c = test.spec["context"] {
            do { context = try EvaluationContext.decode(c) } catch { return ["context: \(error)"] }
        }
        // A fixed clock makes tests repeatable when neither the context nor the notification has a time.
        let wallClock = RFC3339.parse("2026-01-05T12:00:00Z")!
        var generated = 0
        func envelope(_ json: JSONValue, _ what: String) throws(InputError) -> Envelope {
            generated += 1
            do { return try Envelope.decode(json, fallbackID: "test-\(generated)") } catch {
                throw InputError(field: error.field.map { "\(what).\($0)" } ?? what, error.message)
            }
        }
        do {
            if let donated = test.spec["interactions"] {
                guard case .array(let items) = donated else { return ["interactions: must be a list of interactions"] }
                var list: [Interaction] = []
                for (i, item) in items.enumerated() {
                    do { list.append(try Interaction.decode(item)) } catch {
                        return ["interactions[\(i + 1)].\(error.description)"]
                    }
                }
                try session.store.addInteractions(list)
            }
            if let before = test.spec["before"] {
                guard case .array(let items) = before else { return ["before: must be a list of notifications"] }
                for (i, item) in items.enumerated() {
                    try session.evaluate(try envelope(item, "before[\(i + 1)]"), context: context, wallClock: wallClock)
                }
            }
            let decision = try session.evaluate(
                try envelope(test.spec["notification"] ?? .null, "notification"),
                context: context, explain: true, wallClock: wallClock)
            let got = try JSONParser.parse(decision.jsonString)
            var messages: [String] = []
            compare(expected: test.spec["expect"] ?? .object(JSONObject()), got: got, path: "", into: &messages)
            if !messages.isEmpty {
                messages.append("reasons: " + decision.reasons.joined(separator: "; "))
                if !decision.errors.isEmpty { messages.append("errors: " + decision.errors.joined(separator: "; ")) }
            }
            return messages
        } catch {
            return ["\(error)"]
        }
    }

    /// Listed fields only: objects are compared key by key, arrays exactly, numbers by value.
    func compare(expected: JSONValue, got: JSONValue?, path: String, into messages: inout [String]) {
        let got = got ?? .null
        // `{}` in Lua is both an empty list and an empty table.
        if case .object(let e) = expected, e.isEmpty, case .array(let g) = got {
            if !g.isEmpty { messages.append("\(path): expected [], got \(got.jsonString())") }
            return
        }
        if case .object(let e) = expected {
            guard case .object(let g) = got else {
                messages.append("\(path.isEmpty ? "decision" : path): expected an object, got \(got.jsonString())")
                return
            }
            // In the decision's order: the same every run, and the order people read decisions in.
            for key in Self.ordered(e.keys, by: g.keys) {
                let value = e[key]!
                let child = path.isEmpty ? key : path + "." + key
                if path.isEmpty && g[key] == nil && key != "trace" {
                    messages.append("\(child): not a decision field\(Spelling.hint(for: key, in: g.keys))")
                    continue
                }
                compare(expected: value, got: g[key], path: child, into: &messages)
            }
            return
        }
        if expected != got {
            messages.append("\(path): expected \(expected.jsonString()), got \(got.jsonString())")
        }
    }

    /// `keys` in the order of `order`, then the others sorted.
    static func ordered(_ keys: [String], by order: [String]) -> [String] {
        order.filter(keys.contains) + keys.filter { !order.contains($0) }.sorted()
    }
}
