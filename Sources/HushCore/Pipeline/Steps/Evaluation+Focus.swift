/// Silenced by the focus in force, unless it breaks through (docs/reference.md, "Focus and breakthrough").
extension Evaluation {
    mutating func applyFocus() throws {
        // Moved out while this step runs, and back after; its settings are read where they are held.
        guard let active = activeFocus.take() else {
            traceOnly("focus", "no focus is on")
            return
        }
        defer { activeFocus = active }
        try apply(active.focus, why: active.why)
    }

    /// Takes the focus as it is held: its settings (a `let` of the holder) are read in place, where
    /// passing them copied them (a retain and a release of each of their texts and lists).
    private mutating func apply(_ held: Pipeline.HeldFocus, why: Pipeline.FocusWhy) throws {
        let focus = held.settings
        if subject.delivery == .silenced {
            decision.delivery = .silenced
            decision.breakthrough = nil
            note("focus", "silenced by a rule")
            return
        }
        // The reason is one sentence, written once into one buffer: why the focus is on, then what it did.
        var text = TextBuffer(capacity: 192)
        text += pipeline.whyText(why, focus: focus, clock: clock, capacity: 0)
        if focus.silence == .locked && !context.locked {
            text += ", but it silences only while the device is locked"
            note("focus", text.string)
            return
        }
        let directory = self.directory
        let sender = envelope.sender.map { directory.resolve($0) }
        let filtered = filteredOut(focus)
        if let breakthrough = try focusBreakthrough(focus, sender: sender, filtered: filtered, why: &text) {
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
        note("focus", text.string)
    }

    /// The focus filter for the app when it keeps this notification out: what it lets through and
    /// the notification's criteria.
    func filteredOut(_ focus: FocusSettings) -> (allowed: [String], criteria: String)? {
        // Few notifications carry criteria: checked before the lookup by app.
        guard !focus.filters.isEmpty, let criteria = envelope.filterCriteria, let allowed = focus.filters[envelope.app],
            !allowed.contains(criteria)
        else { return nil }
        return (allowed, criteria)
    }

    /// How the notification passes the focus, if it does; then "; " and why are appended to `text`.
    func focusBreakthrough(
        _ focus: FocusSettings, sender: Directory.Resolved?,
        filtered: (allowed: [String], criteria: String)?, why text: inout TextBuffer
    ) throws -> Decision.Breakthrough? {
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
        let kind = envelope.communicationKind
        if focus.mode == .silence {
            let appListed = focus.apps.contains(envelope.app)
            let personListed = sender.map { isListed($0, focus) } ?? false
            if let sender, kind == .call {
                if try !appListed && callerPasses(sender, focus) {
                    text += "; calls from "
                    text += directory.displayName(of: sender)
                    text += " are allowed"
                    return .call
                }
                if focus.repeatedCalls, replacing != true, try isRepeatedCall(sender) {
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
        if let sender, kind == .call {
            if try callerPasses(sender, focus) {
                text += "; calls from "
                text += directory.displayName(of: sender)
                text += " are allowed ("
                text += focus.calls.rawValue
                text += ")"
                return .call
            }
            if focus.repeatedCalls, replacing != true, try isRepeatedCall(sender) {
                text += "; "
                text += directory.displayName(of: sender)
                text += " called again within 3 minutes"
                return .repeatedCall
            }
        }
        if let sender, kind == .message, let how = try allowedPerson(sender, focus) {
            text += "; "
            text += directory.displayName(of: sender)
            text +=
                how == .suggested
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
    func writeSilencedWhy(
        _ focus: FocusSettings, sender: Directory.Resolved?,
        filtered: (allowed: [String], criteria: String)?, to text: inout TextBuffer
    ) {
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
            text += envelope.communicationKind == .call ? "calls from " : "messages from "
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

    func isAllowedPerson(_ person: Directory.Resolved, _ focus: FocusSettings) throws -> Bool {
        try allowedPerson(person, focus) != nil
    }

    func allowedPerson(_ person: Directory.Resolved, _ focus: FocusSettings) throws -> AllowedPerson? {
        if focus.mode == .silence { return isListed(person, focus) ? nil : .listed }
        if isListed(person, focus) { return .listed }
        if focus.favorites && directory.isFavorite(person) { return .listed }
        if focus.suggested > 0 {
            let top = try Suggestions.rank(
                interactions: state.interactions(user: envelope.user, since: now - Suggestions.windowSeconds),
                now: now, focus: focus, clock: clock, directory: directory,
                excludeAllowed: false
            ).prefix(focus.suggested)
            if top.contains(where: { directory.samePerson(directory.resolve($0.person), person) }) { return .suggested }
        }
        return nil
    }

    func callerPasses(_ caller: Directory.Resolved, _ focus: FocusSettings) throws -> Bool {
        switch focus.calls {
        case .everyone: true
        case .allowed: try isAllowedPerson(caller, focus)
        case .favorites: directory.isFavorite(caller)
        case .contacts: directory.contact(for: caller) != nil
        case .nobody: false
        }
    }

    /// An earlier call from the same person within 3 minutes, inclusive.
    func isRepeatedCall(_ caller: Directory.Resolved) throws -> Bool {
        try state.calls(user: envelope.user, since: now - 180).contains { call in
            call.date <= now && now - call.date <= 180 && directory.samePerson(directory.resolve(call.caller), caller)
        }
    }
}
