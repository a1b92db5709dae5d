package import HushCore
import HushJSON

/// What `hush status` and `GET /v1/users/{user}/status` report: the focus in force and why, and
/// what waits for which summary.
package struct UserStatus {
    package var user: String
    package var focus: String?
    package var why: String?
    /// The queued notifications, in queue order.
    package var queued: [StoredNotification]
    /// How many wait per app (by the app's display name), in order of first appearance.
    package var perApp: [(name: String, count: Int)]
    package var nextSummary: Double?
    package var clock: ZoneClock

    /// `hush status --json`.
    package func json() -> [UInt8] {
        var w = JSONWriter()
        w.raw("{\"user\":"); w.writeString(user)
        w.raw(",\"focus\":"); if let focus { w.writeString(focus) } else { w.writeNull() }
        w.raw(",\"why\":"); if let why { w.writeString(why) } else { w.writeNull() }
        w.raw(",\"pending_summary\":"); w.writeInt(queued.count)
        w.raw(",\"pending_by_app\":{")
        for (i, (name, count)) in perApp.enumerated() {
            if i > 0 { w.raw(",") }
            w.writeString(name); w.raw(":"); w.writeInt(count)
        }
        w.raw("},\"next_summary\":");
        if let nextSummary { w.writeString(clock.format(nextSummary)) } else { w.writeNull() }
        w.raw("}")
        return w.bytes
    }
}

/// Why a focus could not be set by hand, naming the field to blame (`focus` or `until`).
package struct FocusRequestError: Error, Sendable, CustomStringConvertible {
    package var field: String
    package var message: String
    package var description: String { message }
}

extension Session {
    /// The status of `user` at `now`, in the clock of `context`. Throws when state cannot be read.
    package func status(user: String, at now: Double, context: EvaluationContext = EvaluationContext()) throws
        -> UserStatus
    {
        let clock = clock(for: context)
        let pipeline = engine.pipeline
        let active = try pipeline.activeFocus(at: now, context: context, user: user, state: store, clock: clock)
        let queued = try store.queuedNotifications(user: user)
        var perApp: [(name: String, count: Int)] = []
        for n in queued {
            let name = pipeline.settings(for: n.app).name
            if let i = perApp.firstIndex(where: { $0.name == name }) {
                perApp[i].count += 1
            } else {
                perApp.append((name, 1))
            }
        }
        return UserStatus(
            user: user, focus: active?.focus.name, why: active?.why, queued: queued, perApp: perApp,
            nextSummary: pipeline.nextSummary(atOrAfter: now, clock: clock), clock: clock)
    }

    /// People to allow through `focus` (all focuses when nil), best first, at most `limit`.
    package func suggestions(user: String, focus: FocusSettings?, limit: Int, at now: Double, clock: ZoneClock)
        throws -> [Suggestions.Suggestion]
    {
        let interactions = try store.interactions(user: user, since: now - Suggestions.windowSeconds)
        return Array(
            Suggestions.rank(
                interactions: interactions, now: now, focus: focus, clock: clock, directory: engine.pipeline.directory
            )
            .prefix(limit))
    }

    /// `hush suggest --json`: a JSON array, best first.
    package func suggestionsJSON(_ ranked: [Suggestions.Suggestion], clock: ZoneClock) -> [UInt8] {
        let directory = engine.pipeline.directory
        var w = JSONWriter(capacity: 1024)
        w.raw("[")
        for (i, s) in ranked.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{\"handle\":"); if let h = s.person.handle { w.writeString(h) } else { w.writeNull() }
            w.raw(",\"name\":"); w.writeString(directory.displayName(of: s.person))
            w.raw(",\"score\":"); w.writeNumber((s.score * 1000).rounded() / 1000)
            w.raw(",\"messages\":"); w.writeInt(s.messages)
            w.raw(",\"calls\":"); w.writeInt(s.calls)
            w.raw(",\"last\":"); w.writeString(clock.format(s.last))
            w.raw(",\"why\":"); w.writeString(s.why)
            w.raw("}")
        }
        w.raw("]")
        return w.bytes
    }

    /// Turns the focus `name` on by hand until `until` (nil: until turned off), as `hush focus on`.
    /// The name must be one the policy declares, unless `force`. Returns the name as declared.
    package func turnFocusOn(user: String, name: String, until: Double?, force: Bool, at now: Double) throws
        -> String
    {
        let policy = engine.policy
        if let problem = policy.undeclaredFocusProblem(name), !force {
            throw FocusRequestError(field: "focus", message: problem)
        }
        if let until, until <= now {
            throw FocusRequestError(
                field: "until", message: "\(engine.pipeline.defaultClock.format(until)) is not in the future")
        }
        let focusName = policy.focus(named: name)?.name ?? name
        try store.setManualFocus(user: user, ManualFocus(name: focusName, since: now, until: until))
        return focusName
    }

    /// Turns focus off by hand, as `hush focus off`: until `until` when given; else a focus on by
    /// hand is turned off, and a focus on by its schedule stays off until its window ends. Returns
    /// the end of the window when a scheduled focus was turned off for the rest of it.
    package func turnFocusOff(user: String, until: Double?, at now: Double, clock: ZoneClock) throws
        -> (focus: String, end: Double)?
    {
        if let until {
            try store.setManualFocus(user: user, ManualFocus(name: nil, since: now, until: until))
            return nil
        }
        try store.setManualFocus(user: user, nil)
        // Without the manual setting, would a schedule turn a focus on now?
        if let (focus, _) = try engine.pipeline.activeFocus(
            at: now, context: EvaluationContext(), user: user, state: store, clock: clock),
            let end = Self.currentWindowEnd(of: focus, at: now, clock: clock)
        {
            try store.setManualFocus(user: user, ManualFocus(name: nil, since: now, until: end))
            return (focus.name, end)
        }
        return nil
    }

    /// The end of the scheduled window of `focus` that contains `t`.
    static func currentWindowEnd(of focus: FocusSettings, at t: Double, clock: ZoneClock) -> Double? {
        let today = clock.local(t).dayNumber
        var ends: [Double] = []
        for schedule in focus.schedules {
            for day in [today - 1, today] {
                if let w = schedule.window(startingOn: day, clock: clock), w.start <= t, t < w.end {
                    ends.append(w.end)
                }
            }
        }
        return ends.max()
    }
}
