/// One run of the pipeline over one notification: the working copy every step reads and shapes.
struct Evaluation {
    let pipeline: Pipeline
    let now: Double
    let context: EvaluationContext
    let state: any StateReading
    let clock: ZoneClock
    let explain: Bool
    let settings: ResolvedAppSettings

    var subject: RuleSubject
    var decision: Decision
    var changes: [StateChange] = []
    var activeFocus: (focus: Pipeline.HeldFocus, why: Pipeline.FocusWhy)?
    var quietOnly = false
    var replacedQueued = false
    /// The delivered notification with this app and collapse key, once looked up.
    var deliveredEntry: StoredNotification??
    /// Whether a delivered or queued notification has this app and collapse key, once looked up:
    /// then this one is an update of it, not a new arrival.
    var replacing: Bool?
    /// The steps, only when explaining: sentences for the trace alone are never made otherwise.
    let trace: TraceLog?

    final class TraceLog {
        @exclusivity(unchecked) var steps: [TraceStep] = []
        /// Steps not kept beyond `OutputBounds.traceSteps`.
        var leftOut = 0

        /// Keeps the step (its texts cut to `OutputBounds.textBytes`) while there is room.
        func append(_ step: TraceStep) {
            guard steps.count < OutputBounds.traceSteps else {
                leftOut += 1
                return
            }
            var step = step
            step.note = OutputBounds.cut(step.note)
            if let rule = step.rule { step.rule = OutputBounds.cut(rule) }
            if let location = step.location { step.location = OutputBounds.cut(location) }
            steps.append(step)
        }
    }

    var envelope: Envelope { subject.envelope }
    var policy: Policy { pipeline.storage.policy }
    var directory: Directory { pipeline.storage.directory }

    init(
        pipeline: Pipeline, envelope: consuming Envelope, now: Double, context: EvaluationContext,
        state: any StateReading,
        clock: ZoneClock, explain: Bool
    ) {
        self.pipeline = pipeline
        self.now = now
        self.context = context
        self.state = state
        self.clock = clock
        self.explain = explain
        self.settings = pipeline.settings(for: envelope.app)
        self.decision = Decision(
            id: envelope.id, app: envelope.app, user: envelope.user, delivery: .alert,
            level: envelope.requestedLevel, requestedLevel: envelope.requestedLevel)
        // A decision gives two or three reasons: room for four at once, not a buffer for one,
        // then two, then four.
        decision.reasons.reserveCapacity(4)
        self.trace = explain ? TraceLog() : nil
        self.subject = RuleSubject(envelope: consume envelope)
    }

    /// What the run produced, moved out of it (swapped for blanks, not copied) as it ends.
    mutating func takeOutcome() -> Pipeline.Outcome {
        var taken = Pipeline.Outcome(
            decision: Decision(id: "", app: "", user: "", delivery: .alert, level: .active, requestedLevel: .active),
            changes: [])
        swap(&taken.decision, &decision)
        swap(&taken.changes, &changes)
        return taken
    }

    /// A reason (always) and a trace step (when explaining).
    mutating func note(_ step: String, _ text: String, rule: String? = nil, location: String? = nil) {
        let text = OutputBounds.cut(text)
        decision.reasons.append(text)
        trace?.append(TraceStep(step: step, rule: rule, location: location, note: text))
    }

    /// A trace step only: the text is made only when explaining.
    func traceOnly(_ step: String, _ text: @autoclosure () -> String, rule: String? = nil, location: String? = nil) {
        guard let trace else { return }
        trace.append(TraceStep(step: step, rule: rule, location: location, note: text()))
    }

    /// Why the active focus is on, in words.
    var focusWhy: String {
        guard let (focus, why) = activeFocus else { return "" }
        return why.text(focus: focus.settings, clock: clock)
    }

    /// The steps in order; each is in `Steps/Evaluation+<Step>.swift`. A step that ends the
    /// evaluation says so by what it returns. A state read that fails throws: no decision is made
    /// from state that was not read.
    mutating func perform(rules: (any RuleRunning)?) throws {
        defer {
            if let trace {
                decision.trace = trace.steps
                if trace.leftOut > 0 {
                    decision.trace!.append(
                        TraceStep(
                            step: "trace",
                            note: "… \(trace.leftOut) more steps left out (a trace keeps \(OutputBounds.traceSteps))"))
                }
            }
        }
        // Every decision names the focus in force, whatever becomes of the notification.
        activeFocus = try pipeline.focusInForce(
            at: now, context: context, user: envelope.user, state: state, clock: clock)
        decision.focus = activeFocus?.focus.settings.name
        if envelope.withdraw {
            try withdraw()
            return
        }
        if backgroundOrExpired() { return }
        try recordCall()
        try runRules(rules)
        if subject.delivery == .dropped {
            decision.delivery = .dropped
            return
        }
        if subject.delivery == .background {
            decision.delivery = .background
            setBadge()
            return
        }
        if !authorize() { return }
        effectiveLevel()
        try collapse()
        if holdForSummary() { return }
        try applyFocus()
        deliveryStyle()
        announce()
        try group()
    }

    // MARK: shared by several steps

    /// Whether a delivered or queued notification has this app and collapse key (looked up once).
    mutating func isReplacing() throws -> Bool {
        if let replacing { return replacing }
        guard !envelope.idIsGenerated else {
            replacing = false
            return false
        }
        let (delivered, queued) = try state.deliveredOrQueued(
            user: envelope.user, app: envelope.app, id: envelope.collapseKey)
        deliveredEntry = .some(delivered)
        let found = delivered != nil || queued
        replacing = found
        return found
    }

    /// Read by withdraw, announcement and grouping.
    var previewsHidden: Bool {
        settings.hidesPreviews(locked: context.locked)
    }

    /// This notification as state keeps it: held by the summary step, delivered by the grouping
    /// step, each as its last use of the envelope, whose texts are moved into it (see
    /// `Envelope.takeStoredTexts`): the envelope is not to be read after.
    mutating func takeStored(summaryAt: Double?, groupID: String?) -> StoredNotification {
        let date = envelope.date ?? now
        let summaryArgumentCount = envelope.summaryArgumentCount
        let hasMedia = envelope.hasMedia
        let expiration = envelope.expiration.map { $0 == 0 ? now : $0 }
        let texts = subject.envelope.takeStoredTexts()
        return StoredNotification(
            user: texts.user, app: texts.app, id: texts.collapseKey, date: date, title: texts.title,
            body: texts.body, category: texts.category, threadID: subject.thread, groupID: groupID,
            summaryArgument: texts.summaryArgument, summaryArgumentCount: summaryArgumentCount,
            relevance: subject.relevance, hasMedia: hasMedia, expiration: expiration, summaryAt: summaryAt,
            sender: texts.sender)
    }
}
