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
    var activeFocus: (focus: FocusSettings, why: Pipeline.FocusWhy)?
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
    }

    var envelope: Envelope { subject.envelope }
    var policy: Policy { pipeline.storage.policy }
    var directory: Directory { pipeline.storage.directory }

    init(pipeline: Pipeline, envelope: consuming Envelope, now: Double, context: EvaluationContext, state: any StateReading,
         clock: ZoneClock, explain: Bool) {
        self.pipeline = pipeline
        self.now = now
        self.context = context
        self.state = state
        self.clock = clock
        self.explain = explain
        self.settings = pipeline.settings(for: envelope.app)
        self.decision = Decision(id: envelope.id, app: envelope.app, user: envelope.user, delivery: .alert,
                                 level: envelope.requestedLevel, requestedLevel: envelope.requestedLevel)
        self.trace = explain ? TraceLog() : nil
        self.subject = RuleSubject(envelope: envelope)
    }

    /// A reason (always) and a trace step (when explaining).
    mutating func note(_ step: String, _ text: String, rule: String? = nil, location: String? = nil) {
        decision.reasons.append(text)
        trace?.steps.append(TraceStep(step: step, rule: rule, location: location, note: text))
    }

    /// A trace step only: the text is made only when explaining.
    func traceOnly(_ step: String, _ text: @autoclosure () -> String, rule: String? = nil, location: String? = nil) {
        guard let trace else { return }
        trace.steps.append(TraceStep(step: step, rule: rule, location: location, note: text()))
    }

    /// Why the active focus is on, in words.
    var focusWhy: String {
        guard let (focus, why) = activeFocus else { return "" }
        return why.text(focus: focus, clock: clock)
    }

    mutating func perform(rules: (any RuleRunning)?) {
        defer { if let trace { decision.trace = trace.steps } }
        // Every decision names the focus in force, whatever becomes of the notification.
        activeFocus = pipeline.focusInForce(at: now, context: context, user: envelope.user, state: state, clock: clock)
        decision.focus = activeFocus?.focus.name
        if envelope.withdraw {
            withdraw()
            return
        }
        if backgroundOrExpired() { return }
        recordCall()
        runRules(rules)
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
        collapse()
        if holdForSummary() { return }
        applyFocus()
        deliveryStyle()
        announce()
        group()
    }

    // MARK: 1. background and expiry

    mutating func backgroundOrExpired() -> Bool {
        if envelope.pushType == "background" || (envelope.contentAvailable && !envelope.hasVisibleContent) {
            decision.delivery = .background
            setBadge()
            note("background", envelope.pushType == "background"
                 ? "background push (apns-push-type: background): no user-visible notification"
                 : "content-available with no alert, sound or badge: a background push")
            return true
        }
        if !envelope.hasSomethingToShow {
            decision.delivery = .background
            setBadge()
            note("background", decision.badge != nil
                 ? "nothing to show (no title, body, sound or sender): only the badge is updated"
                 : "nothing to show (no title, body, sound or sender): no user-visible notification")
            return true
        }
        if let expiration = envelope.expiration, expiration != 0, expiration < now {
            decision.delivery = .dropped
            note("expiry", "expired at \(clock.format(expiration)), before it could be delivered")
            return true
        }
        traceOnly("expiry", "not a background push; not expired")
        return false
    }

    // MARK: calls are remembered whatever happens to them

    /// A call is remembered once: one that replaces an earlier call (the same collapse key) is an
    /// update of that call, not a second one, so it never counts as a repeated call.
    mutating func recordCall() {
        guard let communication = envelope.communication, communication.kind == .call,
              let caller = communication.sender else { return }
        if isReplacing() {
            traceOnly("calls", "updates the call \(envelope.collapseKey): not a second call")
            return
        }
        changes.append(.recordCall(CallRecord(user: envelope.user, date: now, app: envelope.app, caller: caller)))
    }

    /// Whether a delivered or queued notification has this app and collapse key (looked up once).
    mutating func isReplacing() -> Bool {
        if let replacing { return replacing }
        guard !envelope.idIsGenerated else {
            replacing = false
            return false
        }
        let delivered = state.delivered(user: envelope.user, app: envelope.app, id: envelope.collapseKey)
        deliveredEntry = .some(delivered)
        let found = delivered != nil
            || state.queued(user: envelope.user, app: envelope.app, id: envelope.collapseKey) != nil
        replacing = found
        return found
    }

    // MARK: withdraw

    /// A withdraw line: removes the delivered or queued notification with this app and collapse
    /// key; nothing else of the pipeline runs.
    mutating func withdraw() {
        decision.delivery = .withdrawn
        let user = envelope.user, app = envelope.app, key = envelope.collapseKey
        if let delivered = state.delivered(user: user, app: app, id: key) {
            decision.replaces = key
            changes.append(.withdraw(user: user, app: app, id: key))
            var text = "withdrawn by \(settings.name): the delivered notification \(key) is removed"
            if let groupID = delivered.groupID {
                let remaining = state.groupMembers(user: user, groupID: groupID).filter { $0.id != key || $0.app != app }
                // The line under the group now speaks of all but its newest notification.
                let line = GroupSummary.line(others: Array(remaining.dropLast()), categories: policy.categories,
                                             previewsHidden: previewsHidden)
                decision.group = Decision.Group(id: groupID, count: remaining.count, summary: line)
                text += "; its group \(groupID) now holds \(remaining.count)"
            }
            note("withdraw", text)
        } else if let queued = state.queued(user: user, app: app, id: key) {
            decision.replaces = key
            changes.append(.withdraw(user: user, app: app, id: key))
            let at = queued.summaryAt.map { " at " + Schedule.formatTime(clock.local($0).minuteOfDay) } ?? ""
            note("withdraw", "withdrawn by \(settings.name): \(key) is taken out of the Scheduled Summary\(at)")
        } else {
            note("withdraw", "nothing to withdraw: no delivered or waiting notification \(key) from \(settings.name)")
        }
    }

    // MARK: rules

    mutating func runRules(_ runner: (any RuleRunning)?) {
        guard let runner, !policy.rules.isEmpty else {
            traceOnly("rules", "the policy has no rules")
            return
        }
        let ruleContext = RuleContext(
            now: now, local: clock.local(now), focus: activeFocus?.focus.name, locked: context.locked,
            ringer: context.ringer, audio: context.audio, user: envelope.user, state: state, directory: directory)
        let reports = runner.runRules(subject: &subject, context: ruleContext)
        for report in reports {
            if report.error == nil && report.changes == nil && report.notes.isEmpty && trace == nil { continue }
            for line in report.notes {
                traceOnly("rules", "note from '\(report.rule.name)': \(line)", rule: report.rule.name, location: report.rule.location)
            }
            if let error = report.error {
                decision.errors.append("rule '\(report.rule.name)': \(error)")
                traceOnly("rules", "rule '\(report.rule.name)' failed and was ignored: \(error)",
                          rule: report.rule.name, location: report.rule.location)
            } else if let changes = report.changes, changes.changesSomething {
                decision.rules.append(report.rule.name)
                let text = changes.reason.map { "rule '\(report.rule.name)': \($0)" }
                    ?? "rule '\(report.rule.name)' set \(changes.summaryText)"
                note("rules", text, rule: report.rule.name, location: report.rule.location)
            } else {
                traceOnly("rules", "rule '\(report.rule.name)' made no change",
                          rule: report.rule.name, location: report.rule.location)
            }
        }
    }

    // MARK: 2. authorization

    /// A critical notification the app may send (its critical-alerts permission, or the user's own rule).
    var isEntitledCritical: Bool {
        subject.level == .critical && (settings.criticalAlerts || subject.levelSetByRule)
    }

    mutating func authorize() -> Bool {
        switch settings.authorization {
        case .authorized:
            traceOnly("authorization", "\(settings.name) is authorized")
            return true
        case .denied:
            if isEntitledCritical {
                note("authorization", "\(settings.name) is not authorized to notify, but critical alerts are allowed separately")
                return true
            }
            decision.delivery = .dropped
            decision.level = subject.level
            note("authorization", "\(settings.name) is not authorized to notify (authorization denied)")
            return false
        case .provisional:
            if isEntitledCritical {
                note("authorization", "provisional authorization, but critical alerts are allowed separately")
            } else {
                quietOnly = true
                note("authorization", "provisional authorization: delivered quietly to the notification list")
            }
            return true
        }
    }

    // MARK: 3. effective level

    mutating func effectiveLevel() {
        var level = subject.level
        if subject.levelSetByRule {
            traceOnly("level", "level \(level.rawValue) set by a rule (no entitlement needed)")
        } else if level == .critical && !settings.criticalAlerts {
            level = .active
            note("level", "critical needs \(settings.name)'s critical-alerts permission: downgraded to active")
        } else if level == .timeSensitive && !settings.timeSensitive {
            level = .active
            note("level", "time-sensitive notifications are turned off for \(settings.name): downgraded to active")
        } else {
            traceOnly("level", "level \(level.rawValue)")
        }
        subject.level = level
        decision.level = level
    }

    // MARK: 4. collapse

    mutating func collapse() {
        guard !envelope.idIsGenerated else {
            traceOnly("collapse", "no request id: nothing to replace")
            return
        }
        let key = envelope.collapseKey
        guard isReplacing() else {
            traceOnly("collapse", "no earlier notification \(key) from \(settings.name)")
            return
        }
        decision.replaces = key
        if case .some(.some) = deliveredEntry {
            note("collapse", "replaces the delivered notification \(key) in place")
        } else {
            replacedQueued = true
            note("collapse", "replaces the notification \(key) waiting for the summary")
        }
    }

    // MARK: 5. scheduled summary

    mutating func holdForSummary() -> Bool {
        let wanted = subject.delivery == .summary || subject.summary ?? settings.summary
        guard wanted else {
            traceOnly("summary", subject.summary == false ? "a rule keeps it out of the summary" : "\(settings.name) is not in the Scheduled Summary")
            return false
        }
        guard let at = pipeline.nextSummary(atOrAfter: now, clock: clock) else {
            if subject.delivery == .summary { decision.errors.append("delivery \"summary\" asked for, but the policy has no summary times") }
            traceOnly("summary", "no summary times: nothing is held")
            return false
        }
        let forced = subject.delivery == .summary || subject.summary == true
        if subject.level == .critical {
            decision.breakthrough = .critical
            note("summary", "critical: passes the Scheduled Summary")
            return false
        }
        if !forced {
            if subject.level == .timeSensitive {
                decision.breakthrough = .timeSensitive
                note("summary", "time-sensitive: passes the Scheduled Summary")
                return false
            }
            if envelope.isCommunicationFromSender {
                decision.breakthrough = .communication
                let who = envelope.communication?.kind == .call ? "a call" : "a message"
                note("summary", "\(who) from a person: passes the Scheduled Summary")
                return false
            }
        }
        decision.delivery = .summary
        decision.summaryAt = at
        decision.summaryAtOffset = clock.offset(at: at)
        decision.badge = nil
        let local = clock.local(at)
        note("summary", "held for the Scheduled Summary at \(Schedule.formatTime(local.minuteOfDay))")
        if let expiration = envelope.expiration, (expiration == 0 ? now : expiration) < at {
            note("summary", "expires before that summary: it will be dropped then, not shown stale")
        }
        let held = stored(summaryAt: at, groupID: nil)
        changes.append(replacing == true ? .replace(held, queued: true) : .enqueue(held))
        return true
    }

    // MARK: 6. focus

    mutating func applyFocus() {
        guard let (focus, why) = activeFocus else {
            traceOnly("focus", "no focus is on")
            return
        }
        if subject.delivery == .silenced {
            decision.delivery = .silenced
            decision.breakthrough = nil
            note("focus", "silenced by a rule")
            return
        }
        // The reason is one sentence, written once into one buffer: why the focus is on, then what it did.
        var text = pipeline.whyText(why, focus: focus, clock: clock, capacity: 128)
        if focus.silence == .locked && !context.locked {
            text += ", but it silences only while the device is locked"
            note("focus", text)
            return
        }
        let directory = self.directory
        let sender = envelope.communication?.sender.map { directory.resolve($0) }
        let filtered = filteredOut(focus)
        if let breakthrough = focusBreakthrough(focus, sender: sender, filtered: filtered, why: &text) {
            decision.breakthrough = breakthrough
        } else if let forced = subject.delivery, forced == .alert || forced == .quiet {
            decision.breakthrough = .rule
            text += "; a rule forced delivery "
            text += forced.rawValue
        } else {
            decision.delivery = .silenced
            decision.breakthrough = nil
            text += "; silenced: "
            writeSilencedWhy(focus, sender: sender, filtered: filtered, to: &text)
        }
        note("focus", text)
    }

    /// The focus filter for the app when it keeps this notification out: what it lets through and
    /// the notification's criteria.
    func filteredOut(_ focus: FocusSettings) -> (allowed: [String], criteria: String)? {
        guard !focus.filters.isEmpty, let allowed = focus.filters[envelope.app], let criteria = envelope.filterCriteria,
              !allowed.contains(criteria) else { return nil }
        return (allowed, criteria)
    }

    /// How the notification passes the focus, if it does; then "; " and why are appended to `text`.
    func focusBreakthrough(_ focus: FocusSettings, sender: Directory.Resolved?,
                           filtered: (allowed: [String], criteria: String)?, why text: inout String) -> Decision.Breakthrough? {
        let level = subject.level
        if filtered != nil {
            if level == .critical {
                text += "; critical: breaks through everything"
                return .critical
            }
            return nil
        }
        if level == .critical {
            text += "; critical: breaks through everything"
            return .critical
        }
        if level == .timeSensitive && focus.timeSensitive {
            text += "; time-sensitive notifications are allowed"
            return .timeSensitive
        }
        let communication = envelope.communication
        if focus.mode == .silence {
            let appListed = focus.apps.contains(envelope.app)
            let personListed = sender.map { isListed($0, focus) } ?? false
            if let sender, communication?.kind == .call {
                if !appListed && callerPasses(sender, focus) {
                    text += "; calls from "
                    text += directory.displayName(of: sender)
                    text += " are allowed"
                    return .call
                }
                if focus.repeatedCalls, replacing != true, isRepeatedCall(sender) {
                    text += "; "
                    text += directory.displayName(of: sender)
                    text += " called again within 3 minutes"
                    return .repeatedCall
                }
            }
            if appListed || personListed {
                guard subject.allow == true else { return nil }
                text += "; allowed by a rule"
                return .rule
            }
            text += "; "
            if let sender {
                text += directory.displayName(of: sender)
                text += " is not silenced"
                return .person
            }
            text += settings.name
            text += " is not silenced"
            return .app
        }
        if let sender, communication?.kind == .call {
            if callerPasses(sender, focus) {
                text += "; calls from "
                text += directory.displayName(of: sender)
                text += " are allowed ("
                text += focus.calls.rawValue
                text += ")"
                return .call
            }
            if focus.repeatedCalls, replacing != true, isRepeatedCall(sender) {
                text += "; "
                text += directory.displayName(of: sender)
                text += " called again within 3 minutes"
                return .repeatedCall
            }
        }
        if let sender, communication?.kind == .message, let how = allowedPerson(sender, focus) {
            text += "; "
            text += directory.displayName(of: sender)
            text += how == .suggested
                ? " is an allowed person (among the \(focus.suggested) people suggested for this focus)"
                : " is an allowed person"
            return .person
        }
        if focus.apps.contains(envelope.app) {
            text += "; "
            text += settings.name
            text += " is an allowed app"
            return .app
        }
        if subject.allow == true {
            text += "; allowed by a rule"
            return .rule
        }
        return nil
    }

    /// Why the focus silences the notification, appended to `text`.
    func writeSilencedWhy(_ focus: FocusSettings, sender: Directory.Resolved?,
                          filtered: (allowed: [String], criteria: String)?, to text: inout String) {
        if let (allowed, criteria) = filtered {
            text += "the focus filter for "
            text += settings.name
            text += " lets through only "
            text += GroupSummary.joinList(allowed.map { "\"\($0)\"" })
            text += ", not \""
            text += criteria
            text += "\""
            return
        }
        if focus.mode == .silence {
            text += settings.name
            text += " or its sender is silenced in Focus "
            text += focus.name
            return
        }
        if let sender {
            text += envelope.communication?.kind == .call ? "calls from " : "messages from "
            text += directory.displayName(of: sender)
            text += " are not allowed in Focus "
            text += focus.name
            return
        }
        text += settings.name
        text += " is not an allowed app in Focus "
        text += focus.name
    }

    /// Whether the person is among the focus's `people`: through the list prepared with the
    /// pipeline for the policy's own focuses, else by matching the entries one by one.
    func isListed(_ person: Directory.Resolved, _ focus: FocusSettings) -> Bool {
        if focus.people.isEmpty { return false }
        if let list = pipeline.peopleList(for: focus.people) { return directory.person(person, isIn: list) }
        return directory.person(person, isAmong: focus.people)
    }

    /// How a person is allowed through the focus: listed (or a favorite), or suggested.
    enum AllowedPerson { case listed, suggested }

    func isAllowedPerson(_ person: Directory.Resolved, _ focus: FocusSettings) -> Bool {
        allowedPerson(person, focus) != nil
    }

    func allowedPerson(_ person: Directory.Resolved, _ focus: FocusSettings) -> AllowedPerson? {
        if focus.mode == .silence { return isListed(person, focus) ? nil : .listed }
        if isListed(person, focus) { return .listed }
        if focus.favorites && directory.isFavorite(person) { return .listed }
        if focus.suggested > 0 {
            let top = Suggestions.rank(interactions: state.interactions(user: envelope.user, since: now - Suggestions.windowSeconds),
                                       now: now, focus: focus, clock: clock, directory: directory,
                                       excludeAllowed: false).prefix(focus.suggested)
            if top.contains(where: { directory.samePerson(directory.resolve($0.person), person) }) { return .suggested }
        }
        return nil
    }

    func callerPasses(_ caller: Directory.Resolved, _ focus: FocusSettings) -> Bool {
        switch focus.calls {
        case .everyone: true
        case .allowed: isAllowedPerson(caller, focus)
        case .favorites: directory.isFavorite(caller)
        case .contacts: directory.contact(for: caller) != nil
        case .nobody: false
        }
    }

    /// An earlier call from the same person within 3 minutes, inclusive.
    func isRepeatedCall(_ caller: Directory.Resolved) -> Bool {
        state.calls(user: envelope.user, since: now - 180).contains { call in
            call.date <= now && now - call.date <= 180 && directory.samePerson(directory.resolve(call.caller), caller)
        }
    }

    // MARK: 7. delivery style and alert

    /// Badges (seen on the app icon): for an alert, a silenced notification, a passive quiet one and
    /// a background push, when the payload has one and the app shows badges. An app delivered
    /// quietly (or provisionally) lands in Notification Center only: no badge.
    var appShowsBadges: Bool {
        settings.badges && settings.authorization == .authorized && settings.delivery != .quiet
    }

    mutating func setBadge() {
        guard let badge = envelope.badge, appShowsBadges else { return }
        switch decision.delivery {
        case .alert, .silenced, .background: decision.badge = badge
        case .quiet: if subject.level == .passive { decision.badge = badge }
        case .summary, .dropped, .withdrawn: break
        }
    }

    mutating func deliveryStyle() {
        defer { setBadge() }
        if decision.delivery == .silenced { return }
        let level = subject.level
        if let forced = subject.delivery, forced == .quiet || forced == .silenced {
            decision.delivery = forced
            note("delivery", "a rule forced delivery \(forced.rawValue)")
            return
        }
        let forcedAlert = subject.delivery == .alert
        if !forcedAlert {
            if level == .passive {
                decision.delivery = .quiet
                note("delivery", "passive: delivered quietly (no sound, banner or screen wake)")
                return
            }
            if quietOnly {
                decision.delivery = .quiet
                return
            }
            if settings.delivery == .quiet && level != .critical {
                decision.delivery = .quiet
                note("delivery", "\(settings.name) delivers quietly")
                return
            }
        }
        decision.delivery = .alert
        let critical = level == .critical
        // A sound only when the payload asks for one (APNs plays none otherwise); critical always.
        let asked = envelope.sound != nil
        let sound = critical || (asked && settings.sounds && context.ringer == .ring)
        // The style follows the level even when a rule forces the alert: passive stays silent.
        let audible = level >= .active
        decision.alert = Decision.Alert(
            sound: sound && audible,
            soundName: sound && audible ? (envelope.sound?.name ?? "default") : nil,
            volume: critical ? (envelope.sound?.volume ?? 1.0) : nil,
            vibrate: audible,
            wakeScreen: audible,
            banner: !context.locked && settings.banners,
            lockScreen: context.locked && settings.lockScreen,
            bypassRinger: critical)
        let words: String
        if critical { words = "alert: critical: sounds through the ringer switch at volume \(decision.alert!.volume!)" }
        else if !audible { words = "alert: passive, so no sound, vibration or screen wake" }
        else if !asked { words = "alert: " + level.rawValue + ", no sound (the notification asks for none)" }
        else if !sound { words = context.ringer == .silent ? "alert: no sound (ringer is silent)" : "alert: no sound (" + settings.name + " has sounds off)" }
        else { words = "alert: " + level.rawValue + ", with sound" }
        note("delivery", words)
        if forcedAlert { decision.reasons.append("a rule forced delivery alert") }
    }

    // MARK: 8. announcement

    var previewsHidden: Bool {
        settings.hidesPreviews(locked: context.locked)
    }

    mutating func announce() {
        guard decision.delivery == .alert else {
            traceOnly("announcement", "only alerts are announced")
            return
        }
        let communication = envelope.communication
        let wanted: Bool
        switch context.audio {
        case .none:
            traceOnly("announcement", "no headphones or CarPlay: nothing is announced")
            return
        case .headphones:
            guard policy.announce.headphones else {
                traceOnly("announcement", "announcements on headphones are off (announce { headphones = true } turns them on)")
                return
            }
            if settings.announce == false { wanted = false } // never, whatever a rule says
            else if let override = subject.announce { wanted = override }
            else if settings.announce == true { wanted = true }
            else { wanted = communication?.sender != nil || subject.level >= .timeSensitive }
        case .carplay:
            guard policy.announce.carplay else {
                traceOnly("announcement", "announcements in CarPlay are off (announce { carplay = true } turns them on)")
                return
            }
            if settings.announce == false { wanted = false }
            else if let override = subject.announce { wanted = override }
            else { wanted = communication?.kind == .message && communication?.sender != nil }
        }
        guard wanted else {
            traceOnly("announcement", "not announced on \(context.audio.rawValue)")
            return
        }
        let text = Announcement.text(envelope: envelope, appName: settings.name, previewsHidden: previewsHidden,
                                     directory: directory)
        decision.announcement = text
        note("announcement", "announced on \(context.audio.rawValue): \"\(text)\"")
    }

    // MARK: 9. group

    /// As `Pipeline.groupID`, with the settings already resolved.
    var groupID: String? {
        switch settings.grouping {
        case .off: nil
        case .app: envelope.app
        case .automatic: subject.thread.map { envelope.app + "/" + $0 } ?? envelope.app
        }
    }

    mutating func group() {
        let id = groupID
        var count = 1
        if let id {
            let line: String?
            // A store that keeps digests gives the group's at once, when this notification is not
            // itself in the group already (replacing one in place).
            let key = envelope.collapseKey
            let existing = deliveredEntry ?? state.delivered(user: envelope.user, app: envelope.app, id: key)
            if existing?.groupID != id, let digest = state.groupDigest(user: envelope.user, groupID: id) {
                count = digest.memberCount + 1
                line = GroupSummary.line(digest, categories: policy.categories, previewsHidden: previewsHidden)
            } else {
                let others = state.groupMembers(user: envelope.user, groupID: id).filter { $0.id != key || $0.app != envelope.app }
                count = others.count + 1
                line = GroupSummary.line(others: others, categories: policy.categories, previewsHidden: previewsHidden)
            }
            decision.group = Decision.Group(id: id, count: count, summary: line)
            traceOnly("group", "group \(id) holds \(count)" + (line.map { ": \"\($0)\"" } ?? ""))
        } else {
            traceOnly("group", "grouping is off for \(settings.name)")
        }
        if previewsHidden {
            let format = envelope.category.flatMap { policy.categories[$0]?.hiddenPreview } ?? .defaultPlaceholder
            decision.placeholder = format.render(count: count)
        }
        if replacedQueued { changes.append(.dequeue(user: envelope.user, app: envelope.app, id: envelope.collapseKey)) }
        let delivered = stored(summaryAt: nil, groupID: id)
        changes.append(replacing == true ? .replace(delivered, queued: false) : .deliver(delivered))
    }

    func stored(summaryAt: Double?, groupID: String?) -> StoredNotification {
        StoredNotification(
            user: envelope.user, app: envelope.app, id: envelope.collapseKey, date: envelope.date ?? now, title: envelope.title,
            body: envelope.body, category: envelope.category, threadID: subject.thread, groupID: groupID,
            summaryArgument: envelope.summaryArgument, summaryArgumentCount: envelope.summaryArgumentCount,
            relevance: subject.relevance, hasMedia: envelope.hasMedia,
            expiration: envelope.expiration.map { $0 == 0 ? now : $0 }, summaryAt: summaryAt,
            sender: envelope.communication?.sender?.handle)
    }
}
