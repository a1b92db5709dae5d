import Synchronization

/// The built-in behaviour (docs/reference.md, "The pipeline, in order"): background and expiry → rules → authorization →
/// effective level → collapse → summary → focus → delivery style → announcement → group.
/// A pipeline is prepared once per policy and is immutable: evaluate from any thread.
package struct Pipeline: Sendable {
    /// Everything prepared, behind one reference: a pipeline is copied with each evaluation.
    final class Storage: Sendable {
        let policy: Policy
        let directory: Directory
        let defaultClock: ZoneClock
        let resolvedApps: [String: ResolvedAppSettings]
        let wildcardApp: AppSettings
        /// The focuses' `people` lists, each prepared for matching senders against it (those not empty).
        let peopleLists: [Directory.PeopleList]
        /// Per focus of the policy: the sentence saying it is on by its schedule.
        let scheduledWhy: [String]
        /// Every focus's schedules with the focus's index, in the policy's order: which focus is
        /// on by its schedule is asked of every notification, and plain values are read without
        /// copying a focus (its arrays and strings retained and released) for each.
        let schedules: [(focus: Int, schedule: Schedule)]
        /// The policy's focuses, each behind one reference (`HeldFocus`).
        let heldFocuses: [HeldFocus]
        /// This storage among those built in the process (never given twice): what a thread's
        /// cached app settings are keyed by (`settings(for:)`).
        let id = Storage.lastID.add(1, ordering: .relaxed).newValue
        private static let lastID = Atomic<Int>(0)

        init(policy: Policy) {
            self.policy = policy
            let directory = Directory(contacts: policy.contacts, listed: policy.focuses.flatMap(\.people))
            self.directory = directory
            var peopleLists: [Directory.PeopleList] = []
            for focus in policy.focuses
            where !focus.people.isEmpty && !peopleLists.contains(where: { $0.entries == focus.people }) {
                peopleLists.append(directory.peopleList(focus.people))
            }
            self.peopleLists = peopleLists
            let defaultClock = policy.timezone.flatMap(ZoneClock.init(identifier:)) ?? .current
            self.defaultClock = defaultClock
            self.scheduledWhy = policy.focuses.enumerated().map {
                FocusWhy.schedule($0).text(focus: $1, clock: defaultClock)
            }
            self.heldFocuses = policy.focuses.map(HeldFocus.init)
            self.schedules = policy.focuses.indices.flatMap { index in
                policy.focuses[index].schedules.map { (index, $0) }
            }
            self.wildcardApp = policy.appDefaults
            self.resolvedApps = policy.apps.reduce(into: [:]) { $0[$1.key] = policy.settings(for: $1.key) }
        }
    }

    let storage: Storage

    package var policy: Policy { storage.policy }
    package var directory: Directory { storage.directory }
    /// The policy's zone, else the machine's.
    package var defaultClock: ZoneClock { storage.defaultClock }

    package init(policy: Policy) {
        storage = Storage(policy: policy)
    }

    package func settings(for app: String) -> ResolvedAppSettings {
        guard let slots = Self.settingsByApp.slots() else { return resolvedSettings(for: app) }
        // The slot holds its app, so equal words are the same text (`TextWords`): the JSON reader
        // makes one text per repeated value.
        let words = TextWords(app)
        let id = storage.id
        let slot = slots + words.slot(owner: id, bits: Self.settingsSlotBits)
        if slot.pointee.pipeline == id, TextWords(slot.pointee.app) == words, let settings = slot.pointee.settings {
            return settings
        }
        let settings = resolvedSettings(for: app)
        slot.pointee = AppSlot(pipeline: id, app: app, settings: settings)
        return settings
    }

    private func resolvedSettings(for app: String) -> ResolvedAppSettings {
        storage.resolvedApps[app] ?? storage.wildcardApp.resolved(bundleID: app)
    }

    /// An app's settings as a pipeline resolved them.
    private struct AppSlot: Sendable {
        var pipeline: Int
        var app: String
        var settings: ResolvedAppSettings?
    }

    /// Each thread's last settings by app, 64 slots (direct-mapped by app and pipeline): asked for
    /// every notification, where the lookup hashed the app's id each time.
    private static let settingsSlotBits = 6
    private static let settingsByApp = ThreadSlots(
        count: 1 << settingsSlotBits, empty: AppSlot(pipeline: 0, app: "", settings: nil))

    /// The group a notification joins: by app and thread (`automatic`), by app, or none (`off`).
    package func groupID(app: String, thread: String?) -> String? {
        switch settings(for: app).grouping {
        case .off: nil
        case .app: app
        case .automatic: thread.map { Self.threadGroupID(app: app, thread: $0) } ?? app
        }
    }

    /// `app/thread` (`GroupIDs`: the same text for every notification of a thread).
    static func threadGroupID(app: String, thread: String) -> String { GroupIDs.id(app: app, thread: thread) }

    /// What delivering a summary records: its notifications join the delivered list and their
    /// groups, in presentation order (the first shown is the newest entry of its group).
    package func deliveryChanges(forSummary notifications: [StoredNotification]) -> [StateChange] {
        notifications.reversed().map { n in
            var n = n
            n.groupID = groupID(app: n.app, thread: n.threadID)
            return .deliver(n)
        }
    }

    /// What one evaluation produced: the decision and what state should remember.
    package struct Outcome: Sendable {
        package var decision: Decision
        package var changes: [StateChange]
    }

    /// The focus in force and why, or nil. Throws when the focus set by hand cannot be read.
    package func activeFocus(
        at now: Double, context: EvaluationContext, user: String, state: any StateReading,
        clock: ZoneClock
    ) throws -> (focus: FocusSettings, why: String)? {
        guard let (held, why) = try focusInForce(at: now, context: context, user: user, state: state, clock: clock)
        else { return nil }
        return (held.settings, why.text(focus: held.settings, clock: clock))
    }

    /// A focus's settings behind one reference: every evaluation keeps the focus in force, and a
    /// copy of the settings retained and released each of their arrays and texts.
    final class HeldFocus: Sendable {
        let settings: FocusSettings
        init(_ settings: FocusSettings) { self.settings = settings }
    }

    /// The policy's focus of this name (as `Policy.focus(named:)` finds it), else one with only
    /// the name.
    private func heldFocus(named name: String) -> HeldFocus {
        storage.policy.focusIndex(named: name).map { storage.heldFocuses[$0] } ?? HeldFocus(FocusSettings(name: name))
    }

    /// Why a focus is in force; the sentence is made only when it is needed.
    enum FocusWhy {
        /// Turned on by the context, by this name.
        case context(String)
        /// Turned on by hand, by this name.
        case byHand(String, until: Double?)
        /// On by its schedule: the policy's focus at this index.
        case schedule(Int)

        func text(focus: FocusSettings, clock: ZoneClock) -> String {
            var text = ""
            text.reserveCapacity(48)
            write(focus: focus, clock: clock, to: &text)
            return text
        }

        /// Appends the sentence to `text`.
        func write(focus: FocusSettings, clock: ZoneClock, to text: inout String) {
            text += "Focus "
            switch self {
            case .context(let name):
                text += name
                text += " is on (context)"
            case .byHand(let name, let until):
                text += name
                text += " is on by hand"
                if let until {
                    text += " until "
                    text += clock.format(until)
                }
            case .schedule:
                text += focus.name
                text += " is on by its schedule"
            }
        }
    }

    func focusInForce(
        at now: Double, context: EvaluationContext, user: String, state: any StateReading,
        clock: ZoneClock
    ) throws -> (focus: HeldFocus, why: FocusWhy)? {
        switch context.focus {
        case .off:
            return nil
        case .on(let name):
            return (heldFocus(named: name), .context(name))
        case .automatic:
            if let manual = try state.manualFocus(user: user), manual.isInForce(at: now) {
                guard let name = manual.name else { return nil }
                return (heldFocus(named: name), .byHand(name, until: manual.until))
            }
            // The first focus with a schedule that contains `now` (FocusSettings.isScheduled).
            for (index, schedule) in storage.schedules where schedule.contains(now, clock: clock) {
                return (storage.heldFocuses[index], .schedule(index))
            }
            return nil
        }
    }

    /// The sentence saying why the focus is on, in a String with room for `capacity` bytes (for
    /// the reason it begins); a schedule's sentence is the one prepared with the policy.
    func whyText(_ why: FocusWhy, focus: FocusSettings, clock: ZoneClock, capacity: Int) -> String {
        if case .schedule(let index) = why {
            var text = storage.scheduledWhy[index]
            text.reserveCapacity(capacity)
            return text
        }
        var text = ""
        text.reserveCapacity(capacity)
        why.write(focus: focus, clock: clock, to: &text)
        return text
    }

    /// The prepared list for a focus's `people`, when the policy has a focus with this list (found
    /// at once for the policy's own focus: its array shares the prepared list's storage).
    func peopleList(for people: [String]) -> Directory.PeopleList? {
        for list in storage.peopleLists where list.entries == people { return list }
        return nil
    }

    /// The first summary time at or after `t`, DST-correct; nil without summary times.
    package func nextSummary(atOrAfter t: Double, clock: ZoneClock) -> Double? {
        let summaryTimes = storage.policy.summaryTimes
        guard !summaryTimes.isEmpty else { return nil }
        let today = clock.local(t).dayNumber
        for day in today - 1...today + 2 {
            for minutes in summaryTimes {
                let instant = clock.instant(dayNumber: day, minuteOfDay: minutes)
                if instant >= t { return instant }
            }
        }
        return nil
    }

    /// Decides one notification. `now` is the evaluation instant (the context's, else the
    /// envelope's date); `envelope.date` must be set. Throws the error of a state read that failed
    /// (the store's, saying what it could not read): no decision is made from unread state.
    package func evaluate(
        _ envelope: consuming Envelope, now: Double, context: EvaluationContext, state: any StateReading,
        rules: (any RuleRunning)?, clock: ZoneClock, explain: Bool = false
    ) throws -> Outcome {
        // A rule runner confined to one thread may hold a copy of this pipeline built from its own
        // (equal) policy: evaluating with it touches no reference count another thread touches too.
        // The envelope is handed on with `consume` down to the evaluation, so that nothing else
        // holds its fields there and its last step moves them (`Envelope.takeStoredTexts`).
        if let copy = rules?.pipelineCopy(of: self) {
            return try copy.evaluateHere(
                consume envelope, now: now, context: context, state: state, rules: rules, clock: clock, explain: explain
            )
        }
        return try evaluateHere(
            consume envelope, now: now, context: context, state: state, rules: rules, clock: clock, explain: explain)
    }

    private func evaluateHere(
        _ envelope: consuming Envelope, now: Double, context: EvaluationContext, state: any StateReading,
        rules: (any RuleRunning)?, clock: ZoneClock, explain: Bool
    ) throws -> Outcome {
        var run = Evaluation(
            pipeline: self, envelope: consume envelope, now: now, context: context, state: state,
            clock: clock, explain: explain)
        try run.perform(rules: rules)
        return run.takeOutcome()
    }
}

/// The copy a rule runner keeps of the last pipeline it was used with (see
/// `RuleRunning.pipelineCopy(of:)`), built from the runner's own policy. Not thread-safe.
package final class PipelineCopies {
    /// The shared pipeline's storage (kept alive, so its identity stays its own) and the copy.
    private var original: Pipeline.Storage?
    private var copy: Pipeline?

    package init() {}

    /// The copy for `shared`, or nil when the policies differ (then `shared` is to be used).
    /// `policy` is read only when `shared` is not the pipeline seen last.
    package func copy(of shared: Pipeline, policy: () -> Policy) -> Pipeline? {
        if let copy, copy.storage === shared.storage { return copy }  // asked with the copy itself
        if let original, original === shared.storage { return copy }
        original = shared.storage
        // Only an equal policy makes an equal pipeline.
        let own = policy()
        copy = own == shared.policy ? Pipeline(policy: own) : nil
        return copy
    }
}
