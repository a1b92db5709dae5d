import HushCore
import HushJSON
import HushState

/// One user's events over time, worked out against a policy and a store: summaries delivered at
/// their time and the focus in force changing. Every summary delivered is recorded in the store's
/// outbox (`ServiceState`) in the same atomic write as its delivery, whoever delivers it (`hush
/// eval`, `status`, `suggest`, `simulate` or `serve`), so a long-running Hush sends it exactly
/// once, also across restarts. Needs no interpreter: only the policy's declarations.
struct UserSchedule {
    let engine: Engine
    let store: any StateStore
    let clock: ZoneClock

    /// Delivers every summary of `user` due at or before `t` and records each as an event, in
    /// one atomic write. `locked` is the device's state, which hides previews.
    func deliverDueSummaries(user: String, upTo t: Double, locked: Bool) throws -> [SummaryDelivery] {
        guard try store.hasDueSummaries(user: user, upTo: t) else { return [] }
        return try store.atomically {
            let pipeline = engine.pipeline
            let batches = try store.deliverDueSummaries(user: user, upTo: t) { batch in
                pipeline.deliveryChanges(forSummary: batch.notifications)
            }
            let deliveries = try batches.map { try summaryDelivery($0, locked: locked) }
            if store.keepsEvents { try store.appendEvents(deliveries.map { record(.summary($0)) }) }
            return deliveries
        }
    }

    /// The event as the outbox keeps it.
    func record(_ event: HushEvent) -> StoredEvent {
        var w = JSONWriter(capacity: 256)
        event.write(to: &w, clock: clock)
        let kind =
            switch event {
            case .summary: "summary"
            case .focus: "focus"
            }
        return StoredEvent(user: event.user, at: event.at, kind: kind, json: w.string)
    }

    /// The summary as it is shown: previews hidden by its app's settings (`locked` is the
    /// device's state) leave out title and body. Made after the batch was delivered, so each
    /// placeholder counts the group as it now is. Throws when a group cannot be read.
    func summaryDelivery(_ batch: SummaryBatch, locked: Bool) throws -> SummaryDelivery {
        let pipeline = engine.pipeline
        func item(_ n: StoredNotification) throws -> SummaryDelivery.Item {
            let settings = pipeline.settings(for: n.app)
            let hidden = settings.hidesPreviews(locked: locked)
            let group = pipeline.groupID(app: n.app, thread: n.threadID)
            var placeholder: String?
            if hidden {
                let count = try group.map { try store.groupMembers(user: n.user, groupID: $0).count } ?? 1
                let format =
                    n.category.flatMap { pipeline.policy.categories[$0]?.hiddenPreview } ?? .defaultPlaceholder
                placeholder = format.render(count: max(count, 1))
            }
            return SummaryDelivery.Item(
                id: n.id, app: n.app, title: hidden ? nil : n.title, body: hidden ? nil : n.body, group: group,
                placeholder: placeholder, relevance: n.relevance, hasMedia: n.hasMedia, date: n.date)
        }
        return try SummaryDelivery(
            user: batch.user, at: batch.at, notifications: batch.notifications.map(item),
            dropped: batch.dropped.map(item))
    }

    /// Works out `user`'s events from `mark.through` up to `t`, in time order, as `hush simulate`
    /// does: at each instant in between where a scheduled focus starts or ends, a focus set by
    /// hand ends, or a summary falls due, the focus change is announced and then the due summaries
    /// are delivered; then the same at `t` itself (which also announces a user's first focus, and
    /// a focus set by hand just now). Focus events are recorded in the outbox as they are made;
    /// summaries as they are delivered. Returns the events and the new mark; the caller keeps the
    /// mark (see `ScheduleMark`) and runs this inside `atomically` to make it one write.
    func advance(user: String, from mark: ScheduleMark, to t: Double, context: EvaluationContext) throws
        -> (events: [HushEvent], mark: ScheduleMark)
    {
        var mark = mark
        var events: [HushEvent] = []
        // An instant already worked out is not worked out again (a late notification).
        guard t >= mark.through else { return ([], mark) }
        func announce(at instant: Double) throws {
            let active = try engine.pipeline.activeFocus(
                at: instant, context: context, user: user, state: store, clock: clock)
            let name = active?.focus.name
            if mark.announced, mark.focus == name { return }
            if !mark.announced, name == nil {
                mark.announced = true
                return
            }
            let previous = mark.announced ? mark.focus : nil
            mark.focus = name
            mark.announced = true
            let reason = active?.why ?? previous.map { "Focus \($0) is off" } ?? "no focus is on"
            let event = HushEvent.focus(FocusChange(user: user, at: instant, focus: name, reason: reason))
            if store.keepsEvents { try store.appendEvents([record(event)]) }
            events.append(event)
        }
        func deliver(upTo instant: Double) throws {
            for delivery in try deliverDueSummaries(user: user, upTo: instant, locked: context.locked) {
                events.append(.summary(delivery))
            }
        }
        for instant in try instants(user: user, after: mark.through, upTo: t) {
            try announce(at: instant)
            try deliver(upTo: instant)
        }
        try announce(at: t)
        try deliver(upTo: t)
        mark.through = t
        return (events, mark)
    }

    /// The instants in (after, upTo] where something may happen for `user`: a scheduled focus
    /// starts or ends, a focus set by hand ends, a summary falls due; sorted, each once.
    func instants(user: String, after: Double, upTo: Double) throws -> [Double] {
        guard upTo > after else { return [] }
        var instants = focusBoundaries(after: after, upTo: upTo)
        if let until = try store.manualFocus(user: user)?.until, until > after, until <= upTo {
            instants.append(until)
        }
        var s = after
        while let next = engine.pipeline.nextSummary(atOrAfter: s, clock: clock), next <= upTo {
            if next > after { instants.append(next) }
            s = next + 1
        }
        return Set(instants).sorted()
    }

    /// The next instant after `t` at which `user` may have an event: a scheduled focus starting
    /// or ending, a focus set by hand ending, a summary time (of the policy, or of a notification
    /// already waiting). Looks at most 8 days ahead (a weekly schedule's next boundary).
    func nextInstant(user: String, after t: Double) throws -> Double? {
        var candidates: [Double] = []
        var horizon = t + 86400
        while horizon <= t + 8 * 86400 {
            if let first = focusBoundaries(after: t, upTo: horizon).min() {
                candidates.append(first)
                break
            }
            horizon += 86400
        }
        if let until = try store.manualFocus(user: user)?.until, until > t { candidates.append(until) }
        if var next = engine.pipeline.nextSummary(atOrAfter: t, clock: clock) {
            if next <= t, let later = engine.pipeline.nextSummary(atOrAfter: t + 1, clock: clock) { next = later }
            if next > t { candidates.append(next) }
        }
        if let queued = try store.queuedNotifications(user: user).compactMap(\.summaryAt).min() {
            candidates.append(max(queued, t))
        }
        return candidates.min()
    }

    /// Instants in (after, upTo] at which a scheduled focus starts or ends.
    func focusBoundaries(after: Double, upTo: Double) -> [Double] {
        guard upTo > after else { return [] }
        var out: [Double] = []
        let first = clock.local(after).dayNumber - 1
        let last = clock.local(upTo).dayNumber
        for focus in engine.policy.focuses {
            for schedule in focus.schedules {
                for day in first...max(first, last) {
                    guard let w = schedule.window(startingOn: day, clock: clock) else { continue }
                    for instant in [w.start, w.end] where instant > after && instant <= upTo { out.append(instant) }
                }
            }
        }
        return out
    }
}
