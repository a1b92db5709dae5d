/// The built-in behaviour of SPEC §5, in its order: background and expiry → rules → authorization →
/// effective level → collapse → summary → focus → delivery style → announcement → group.
/// A pipeline is prepared once per policy and is immutable: evaluate from any thread.
public struct Pipeline: Sendable {
    public let policy: Policy
    public let directory: Directory
    /// The policy's zone, else the machine's.
    public let defaultClock: ZoneClock
    private let resolvedApps: [String: ResolvedAppSettings]
    private let wildcardApp: AppSettings

    public init(policy: Policy) {
        self.policy = policy
        self.directory = Directory(contacts: policy.contacts)
        self.defaultClock = policy.timezone.flatMap(ZoneClock.init(identifier:)) ?? .current
        self.wildcardApp = policy.appDefaults
        self.resolvedApps = policy.apps.reduce(into: [:]) { $0[$1.key] = policy.settings(for: $1.key) }
    }

    public func settings(for app: String) -> ResolvedAppSettings {
        resolvedApps[app] ?? wildcardApp.resolved(bundleID: app)
    }

    /// The group a notification joins: by app and thread (`automatic`), by app, or none (`off`).
    public func groupID(app: String, thread: String?) -> String? {
        switch settings(for: app).grouping {
        case .off: nil
        case .app: app
        case .automatic: thread.map { app + "/" + $0 } ?? app
        }
    }

    /// What delivering a summary records: its notifications join the delivered list and their
    /// groups, in presentation order (the first shown is the newest entry of its group).
    public func deliveryChanges(forSummary notifications: [StoredNotification]) -> [StateChange] {
        notifications.reversed().map { n in
            var n = n
            n.groupID = groupID(app: n.app, thread: n.threadID)
            return .deliver(n)
        }
    }

    /// What one evaluation produced: the decision and what state should remember.
    public struct Outcome: Sendable {
        public var decision: Decision
        public var changes: [StateChange]
    }

    /// The focus in force and why, or nil.
    public func activeFocus(at now: Double, context: EvaluationContext, user: String, state: any StateReading,
                            clock: ZoneClock) -> (focus: FocusSettings, why: String)? {
        switch context.focus {
        case .off:
            return nil
        case .on(let name):
            return (policy.focus(named: name) ?? FocusSettings(name: name), "Focus \(name) is on (context)")
        case .automatic:
            if let manual = state.manualFocus(user: user), manual.isInForce(at: now) {
                guard let name = manual.name else { return nil }
                let until = manual.until.map { " until " + clock.format($0) } ?? ""
                return (policy.focus(named: name) ?? FocusSettings(name: name), "Focus \(name) is on by hand\(until)")
            }
            for focus in policy.focuses where focus.isScheduled(at: now, clock: clock) {
                return (focus, "Focus \(focus.name) is on by its schedule")
            }
            return nil
        }
    }

    /// The first summary time at or after `t`, DST-correct; nil without summary times.
    public func nextSummary(atOrAfter t: Double, clock: ZoneClock) -> Double? {
        guard !policy.summaryTimes.isEmpty else { return nil }
        let today = clock.local(t).dayNumber
        for day in today - 1...today + 2 {
            for minutes in policy.summaryTimes {
                let instant = clock.instant(dayNumber: day, minuteOfDay: minutes)
                if instant >= t { return instant }
            }
        }
        return nil
    }

    /// Decides one notification. `now` is the evaluation instant (the context's, else the
    /// envelope's date); `envelope.date` must be set.
    public func evaluate(_ envelope: Envelope, now: Double, context: EvaluationContext, state: any StateReading,
                         rules: (any RuleRunning)?, clock: ZoneClock, explain: Bool = false) -> Outcome {
        var run = Evaluation(pipeline: self, envelope: envelope, now: now, context: context, state: state,
                             clock: clock, explain: explain)
        run.perform(rules: rules)
        return Outcome(decision: run.decision, changes: run.changes)
    }
}
