/// The changes one rule returned (docs/reference.md, "Rules and their changes"). Every field optional: nil means "no change".
package struct RuleChanges: Sendable, Hashable {
    package var level: InterruptionLevel?
    /// Forces the outcome.
    package var delivery: Decision.Delivery?
    /// true: passes the active focus like an allowed app.
    package var allow: Bool?
    /// false: never held for a summary; true: held.
    package var summary: Bool?
    package var announce: Bool?
    package var relevance: Double?
    package var thread: String?
    package var reason: String?

    package init(
        level: InterruptionLevel? = nil, delivery: Decision.Delivery? = nil, allow: Bool? = nil,
        summary: Bool? = nil, announce: Bool? = nil, relevance: Double? = nil, thread: String? = nil,
        reason: String? = nil
    ) {
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
    package var changesSomething: Bool {
        level != nil || delivery != nil || allow != nil || summary != nil || announce != nil || relevance != nil
            || thread != nil
    }

    /// Words for the change, for reasons when the rule gave none.
    package var summaryText: String {
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
package struct RuleSubject: Sendable {
    package var envelope: Envelope
    package var level: InterruptionLevel
    package var levelSetByRule = false
    package var relevance: Double?
    package var thread: String?
    package var delivery: Decision.Delivery?
    package var allow: Bool?
    package var summary: Bool?
    package var announce: Bool?

    package init(envelope: consuming Envelope) {
        self.level = envelope.requestedLevel
        self.relevance = envelope.relevance
        self.thread = envelope.threadID
        self.envelope = consume envelope
    }

    package mutating func apply(_ changes: RuleChanges) {
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
package struct RuleContext {
    package var now: Double
    package var local: LocalTime
    package var focus: String?
    package var locked: Bool
    package var ringer: EvaluationContext.Ringer
    package var audio: EvaluationContext.Audio
    package var user: String
    package var state: any StateReading
    package var directory: Directory

    package init(
        now: Double, local: LocalTime, focus: String?, locked: Bool, ringer: EvaluationContext.Ringer,
        audio: EvaluationContext.Audio, user: String, state: any StateReading, directory: Directory
    ) {
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
package struct RuleReport: Sendable {
    package var rule: Policy.RuleInfo
    package var changes: RuleChanges?
    /// `file:line: message` when the rule failed; its changes are then ignored.
    package var error: String?
    /// hush.note() and print() lines.
    package var notes: [String]

    package init(rule: Policy.RuleInfo, changes: RuleChanges? = nil, error: String? = nil, notes: [String] = []) {
        self.rule = rule
        self.changes = changes
        self.error = error
        self.notes = notes
    }

    /// The rule ran and returned nothing: no changes, no error, no notes.
    package var isBlank: Bool { Self.isBlank(self) }

    /// `isBlank` of a report read where it is (an array's buffer): as a getter on the element,
    /// the report was copied whole (its strings retained and released) for every rule of every
    /// notification, and `changes == nil` copied the changes too (a pattern does not).
    package static func isBlank(_ report: borrowing RuleReport) -> Bool {
        guard report.error == nil, report.notes.isEmpty, case .none = report.changes else { return false }
        return true
    }
}

/// Runs a policy's rules. The policy layer implements it with Lua; tests may use plain closures.
package protocol RuleRunning: AnyObject {
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
    package func pipelineCopy(of shared: Pipeline) -> Pipeline? { nil }
}
