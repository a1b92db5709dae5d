import HushCore
import HushJSON
import HushState
import XCTest

/// Drives the pipeline the way the engine does, with an in-memory store and no Lua.
final class PipelineHarness {
    let pipeline: Pipeline
    let store = InMemoryStateStore()
    var context: EvaluationContext
    var rules: (any RuleRunning)?
    private var counter = 0

    init(_ policy: Policy, context: EvaluationContext = EvaluationContext(), rules: (any RuleRunning)? = nil) {
        var policy = policy
        if policy.timezone == nil { policy.timezone = "Europe/Berlin" }
        self.pipeline = Pipeline(policy: policy)
        self.context = context
        self.rules = rules
    }

    /// Decides a notification given as JSON; its `date` (else `at`) is the evaluation instant.
    @discardableResult
    func decide(
        _ json: String, at time: String? = nil, explain: Bool = false,
        file: StaticString = #filePath, line: UInt = #line
    ) -> Decision {
        let value: JSONValue
        do { value = try JSONParser.parse(json) } catch {
            XCTFail("bad test JSON: \(error)", file: file, line: line)
            fatalError()
        }
        counter += 1
        var envelope: Envelope
        do { envelope = try Envelope.decode(value, fallbackID: "gen-\(counter)") } catch {
            XCTFail("bad envelope: \(error)", file: file, line: line)
            fatalError()
        }
        if envelope.date == nil {
            envelope.date = time.flatMap(RFC3339.parse) ?? context.now ?? RFC3339.parse("2026-11-23T10:00:00+01:00")!
        }
        let now = context.now ?? envelope.date!
        let clock = context.timezone.flatMap(ZoneClock.init(identifier:)) ?? pipeline.defaultClock
        for batch in store.takeDueSummaries(user: envelope.user, upTo: now) {
            store.apply(pipeline.deliveryChanges(forSummary: batch.notifications))
        }
        let outcome: Pipeline.Outcome
        do {
            outcome = try pipeline.evaluate(
                envelope, now: now, context: context, state: store, rules: rules, clock: clock,
                explain: explain)
        } catch {
            XCTFail("state in memory cannot fail to be read: \(error)", file: file, line: line)
            fatalError()
        }
        store.apply(outcome.changes)
        return outcome.decision
    }
}

/// A notification as JSON, built from the few fields a test cares about.
func note(
    _ app: String = "com.example.app", id: String? = nil, date: String? = nil, title: String? = nil,
    body: String? = "Hello", level: String? = nil, thread: String? = nil, category: String? = nil,
    summaryArg: String? = nil, summaryArgCount: Int? = nil, relevance: Double? = nil, badge: Int? = nil,
    sound: String? = nil, extraAPS: String = "", headers: String? = nil, communication: String? = nil,
    attachments: String? = nil, user: String? = nil
) -> String {
    var alert: [String] = []
    if let title { alert.append("\"title\":\"\(title)\"") }
    if let body { alert.append("\"body\":\"\(body)\"") }
    if let summaryArg { alert.append("\"summary-arg\":\"\(summaryArg)\"") }
    if let summaryArgCount { alert.append("\"summary-arg-count\":\(summaryArgCount)") }
    var aps: [String] = ["\"alert\":{\(alert.joined(separator: ","))}"]
    if let level { aps.append("\"interruption-level\":\"\(level)\"") }
    if let thread { aps.append("\"thread-id\":\"\(thread)\"") }
    if let category { aps.append("\"category\":\"\(category)\"") }
    if let relevance { aps.append("\"relevance-score\":\(relevance)") }
    if let badge { aps.append("\"badge\":\(badge)") }
    if let sound { aps.append("\"sound\":\(sound)") }
    if !extraAPS.isEmpty { aps.append(extraAPS) }
    var root = ["\"app\":\"\(app)\"", "\"payload\":{\"aps\":{\(aps.joined(separator: ","))}}"]
    if let id { root.append("\"id\":\"\(id)\"") }
    if let date { root.append("\"date\":\"\(date)\"") }
    if let headers { root.append("\"headers\":\(headers)") }
    if let communication { root.append("\"communication\":\(communication)") }
    if let attachments { root.append("\"attachments\":\(attachments)") }
    if let user { root.append("\"user\":\"\(user)\"") }
    return "{" + root.joined(separator: ",") + "}"
}

func message(from handle: String, name: String? = nil, group: String? = nil) -> String {
    var sender = "\"handle\":\"\(handle)\""
    if let name { sender += ",\"name\":\"\(name)\"" }
    return "{\"kind\":\"message\",\"sender\":{\(sender)}" + (group.map { ",\"group\":\"\($0)\"" } ?? "") + "}"
}

func call(from handle: String, name: String? = nil) -> String {
    var sender = "\"handle\":\"\(handle)\""
    if let name { sender += ",\"name\":\"\(name)\"" }
    return "{\"kind\":\"call\",\"sender\":{\(sender)}}"
}

func context(_ json: String) -> EvaluationContext {
    try! EvaluationContext.decode(try! JSONParser.parse(json))
}

/// Rules as Swift closures, for testing the rules step without Lua.
final class ClosureRules: RuleRunning {
    let body: (RuleSubject, RuleContext) -> RuleChanges?
    init(_ body: @escaping (RuleSubject, RuleContext) -> RuleChanges?) { self.body = body }
    func runRules(subject: inout RuleSubject, context: RuleContext) -> [RuleReport] {
        let changes = body(subject, context)
        if let changes { subject.apply(changes) }
        return [RuleReport(rule: Policy.RuleInfo(name: "test rule", file: "test.lua", line: 1), changes: changes)]
    }
}
