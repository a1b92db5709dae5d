import Foundation
import HushCore
import HushPolicy
import Lua

/// Policy tests written in Lua beside the policy (`policies/work_test.lua` tests `policies/work.lua`),
/// in the spirit of `opa test`: each `test(name, { context, before, notification, expect })` decides a
/// notification with a fresh in-memory state and compares the decision fields it lists.
public struct PolicyTestSuite: Sendable {
    public struct TestCase: Sendable {
        public var name: String
        public var file: String
        public var line: Int
        /// The test table as JSON (`null` sentinel already turned into JSON null).
        public var spec: JSONObject
    }

    public struct Failure: Sendable, CustomStringConvertible {
        public var file: String
        public var line: Int
        public var test: String
        public var messages: [String]

        public var description: String {
            "\(file):\(line): FAIL \"\(test)\"\n" + messages.map { "    " + $0 }.joined(separator: "\n")
        }
    }

    public struct Result: Sendable {
        public var passed = 0
        public var failures: [Failure] = []
        public var failed: Int { failures.count }
        /// `N passed, N failed`
        public var summaryLine: String { "\(passed) passed, \(failed) failed" }
    }

    public let testFile: String
    public let policyPaths: [String]
    public let cases: [TestCase]

    /// Test files under the paths: files as given, directories searched for `*_test.lua`.
    public static func testFiles(in paths: [String]) -> [String] {
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
    public init(testFile: String) throws(PolicyLoadError) {
        self.testFile = testFile
        guard let data = FileManager.default.contents(atPath: testFile), let text = String(data: data, encoding: .utf8) else {
            throw PolicyLoadError(problems: [PolicyProblem(file: testFile, line: 0, message: "cannot be read")])
        }
        let lua: LuaState
        do { lua = try LuaState() } catch {
            throw PolicyLoadError(problems: [PolicyProblem(file: testFile, line: 0, message: error.message)])
        }
        let recorded: LuaValue
        do {
            try lua.load(Self.prelude, chunkName: "=hush-test")
            lua.pushCallsiteFunction()
            lua.beginBudget()
            try lua.call(arguments: 1, results: 1)
            lua.endBudget()
            let registry = lua.reference()
            try lua.run(text, chunkName: testFile)
            lua.pushReference(registry)
            recorded = lua.value(at: -1, depth: 24)
            lua.pop()
        } catch {
            throw PolicyLoadError(problems: [PolicyProblem(file: error.file ?? testFile, line: error.line ?? 0, message: error.message)])
        }
        let directory = (testFile as NSString).deletingLastPathComponent
        var policies: [String] = []
        var cases: [TestCase] = []
        var problems: [PolicyProblem] = []
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
                guard case .object(let spec) = Self.json(from: entry["spec"] ?? .nil) else {
                    problems.append(PolicyProblem(file: testFile, line: line, message: "test \"\(name)\" needs a table { notification = …, expect = … }"))
                    continue
                }
                let known = ["context", "interactions", "before", "notification", "expect"]
                for key in spec.keys where !known.contains(key) {
                    problems.append(PolicyProblem(file: testFile, line: line, message: "test \"\(name)\": unknown key '\(key)'\(Spelling.hint(for: key, in: known))"))
                }
                if spec["notification"] == nil || spec["expect"] == nil {
                    problems.append(PolicyProblem(file: testFile, line: line, message: "test \"\(name)\" needs notification = { … } and expect = { … }"))
                }
                cases.append(TestCase(name: name, file: testFile, line: line, spec: spec))
            default:
                break
            }
        }
        if !problems.isEmpty { throw PolicyLoadError(problems: problems) }
        if policies.isEmpty {
            let base = (testFile as NSString).lastPathComponent
            let policyName = String(base.dropLast("_test.lua".count)) + ".lua"
            policies = [(directory as NSString).appendingPathComponent(policyName)]
        }
        self.policyPaths = policies
        self.cases = cases
    }

    static let prelude = #"""
local callsite = ...
local recorded = {}
null = "\0hush-null\0"
function test(name, spec)
  local file, line = callsite(2)
  recorded[#recorded + 1] = { kind = "test", name = name, spec = spec, line = line }
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
    public func run(engine: Engine) -> Result {
        var result = Result()
        for test in cases {
            let messages = run(test, engine: engine)
            if messages.isEmpty { result.passed += 1 } else {
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
            let decision = try session.evaluate(try envelope(test.spec["notification"] ?? .null, "notification"),
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
