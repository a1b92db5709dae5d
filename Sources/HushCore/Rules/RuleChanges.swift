/// The changes one rule returned (docs/reference.md, "Rules and their changes"). Every field optional: nil means "no change".
public struct RuleChanges: Sendable, Hashable {
    public var level: InterruptionLevel?
    /// Forces the outcome.
    public var delivery: Decision.Delivery?
    /// true: passes the active focus like an allowed app.
    public var allow: Bool?
    /// false: never held for a summary; true: held.
    public var summary: Bool?
    public var announce: Bool?
    public var relevance: Double?
    public var thread: String?
    public var reason: String?

    public init(level: InterruptionLevel? = nil, delivery: Decision.Delivery? = nil, allow: Bool? = nil,
                summary: Bool? = nil, announce: Bool? = nil, relevance: Double? = nil, thread: String? = nil,
                reason: String? = nil) {
        self.level = level
        self.delivery = delivery
        self.allow = allow
        self.summary = summary
        self.announce = announce
        self.relevance = relevance
        self.thread = thread
        self.reason = reason
    }

    /// Whether the rule changed anything (a reason alone counts as a note, not a change).
    public var changesSomething: Bool {
        level != nil || delivery != nil || allow != nil || summary != nil || announce != nil || relevance != nil
            || thread != nil
    }

    /// Words for the change, for reasons when the rule gave none.
    public var summaryText: String {
        var parts: [String] = []
        if let level { parts.append("level \(level.rawValue)") }
        if let delivery { parts.append("delivery \(delivery.rawValue)") }
        if let allow { parts.append(allow ? "allowed through focus" : "not allowed through focus") }
        if let summary { parts.append(summary ? "held for the summary" : "never held for the summary") }
        if let announce { parts.append(announce ? "announced" : "not announced") }
        if let relevance { parts.append("relevance \(relevance)") }
        if let thread { parts.append("thread \(thread)") }
        return parts.joined(separator: ", ")
    }
}

/// The working copy rules see and change: the envelope plus what earlier rules set.
public struct RuleSubject: Sendable {
    public var envelope: Envelope
    public var level: InterruptionLevel
    public var levelSetByRule = false
    public var relevance: Double?
    public var thread: String?
    public var delivery: Decision.Delivery?
    public var allow: Bool?
    public var summary: Bool?
    public var announce: Bool?

    public init(envelope: consuming Envelope) {
        self.level = envelope.requestedLevel
        self.relevance = envelope.relevance
        self.thread = envelope.threadID
        self.envelope = envelope
    }

    public mutating func apply(_ changes: RuleChanges) {
        if let level = changes.level {
            self.level = level
            levelSetByRule = true
        }
        if let delivery = changes.delivery { self.delivery = delivery }
        if let allow = changes.allow { self.allow = allow }
        if let summary = changes.summary { self.summary = summary }
        if let announce = changes.announce { self.announce = announce }
        if let relevance = changes.relevance { self.relevance = relevance }
        if let thread = changes.thread { self.thread = thread }
    }
}

/// The device state rules see as `ctx`.
public struct RuleContext {
    public var now: Double
    public var local: LocalTime
    public var focus: String?
    public var locked: Bool
    public var ringer: EvaluationContext.Ringer
    public var audio: EvaluationContext.Audio
    public var user: String
    public var state: any StateReading
    public var directory: Directory

    public init(now: Double, local: LocalTime, focus: String?, locked: Bool, ringer: EvaluationContext.Ringer,
                audio: EvaluationContext.Audio, user: String, state: any StateReading, directory: Directory) {
        self.now = now
        self.local = local
        self.focus = focus
        self.locked = locked
        self.ringer = ringer
        self.audio = audio
        self.user = user
        self.state = state
        self.directory = directory
    }
}

/// What one rule did.
public struct RuleReport: Sendable {
    public var rule: Policy.RuleInfo
    public var changes: RuleChanges?
    /// `file:line: message` when the rule failed; its changes are then ignored.
    public var error: String?
    /// hush.note() and print() lines.
    public var notes: [String]

    public init(rule: Policy.RuleInfo, changes: RuleChanges? = nil, error: String? = nil, notes: [String] = []) {
        self.rule = rule
        self.changes = changes
        self.error = error
        self.notes = notes
    }
}

/// Runs a policy's rules. The policy layer implements it with Lua; tests may use plain closures.
public protocol RuleRunning: AnyObject {
    /// Runs the rules in declaration order, applying each one's changes to `subject` before the
    /// next runs, and returns one report per rule that ran. Throws the error of a state read a
    /// rule made (`hush.recent`…) that failed: a rule's own error is a report, a store's is not.
    func runRules(subject: inout RuleSubject, context: RuleContext) throws -> [RuleReport]
    /// A runner confined to one thread may keep a copy of the pipeline it is used with, built from
    /// its own (equal) policy: evaluating with it touches no reference count that another thread's
    /// evaluations touch too. nil (the default): evaluate with `shared`.
    func pipelineCopy(of shared: Pipeline) -> Pipeline?
}

extension RuleRunning {
    public func pipelineCopy(of shared: Pipeline) -> Pipeline? { nil }
}
