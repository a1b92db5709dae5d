package import HushCore
import HushJSON
import HushState

/// A replay of a time-ordered stream: decisions, scheduled summaries as they fall due (with the
/// notifications that expired before them), and every change of the active focus.
package enum SimulationEvent: Sendable {
    case notification(at: Double, envelope: Envelope, decision: Decision)
    case summary(SummaryDelivery)
    case focus(FocusChange)
    case invalid(line: Int, message: String)

    package var at: Double? {
        switch self {
        case .notification(let at, _, _): at
        case .summary(let delivery): delivery.at
        case .focus(let change): change.at
        case .invalid: nil
        }
    }
}

extension SimulationEvent {
    /// The event as `hush simulate --json` prints it, one line without its line ending.
    package func jsonLine(clock: ZoneClock) -> [UInt8] {
        var w = JSONWriter(capacity: 512)
        switch self {
        case .notification(let at, _, let decision):
            w.raw("{\"event\":\"notification\",\"at\":"); w.writeString(clock.format(at))
            w.raw(",\"decision\":"); decision.write(to: &w)
            w.raw("}")
        case .summary(let delivery):
            HushEvent.summary(delivery).write(to: &w, clock: clock)
        case .focus(let change):
            HushEvent.focus(change).write(to: &w, clock: clock)
        case .invalid(let line, let message):
            return ErrorLine.make(line, message)
        }
        return w.bytes
    }
}

extension Session {
    /// Replays `lines` (numbered JSON values or errors) in time order. Summaries due up to `until`
    /// (default: the end of the last notification's local day) are delivered.
    package func simulate(
        _ items: [(line: Int, result: Result<Envelope, InputError>)], context: EvaluationContext,
        until: Double?, emit: (SimulationEvent) throws -> Void
    ) throws {
        let clock = clock(for: context)
        let schedule = schedule(clock: clock)
        var envelopes: [(line: Int, envelope: Envelope)] = []
        // A line without a date follows the one before it; the first, the context's now, else the
        // clock (a stream with no dates at all is still replayed, not silently skipped).
        var lastDate = context.now ?? Clock.now()
        for item in items {
            switch item.result {
            case .failure(let error): try emit(.invalid(line: item.line, message: error.description))
            case .success(var envelope):
                let date = envelope.date ?? lastDate
                envelope.date = date
                lastDate = date
                envelopes.append((item.line, envelope))
            }
        }
        // Stable sort by arrival; a notification without any time keeps its place.
        let ordered = envelopes.enumerated().sorted { a, b in
            let da = a.element.envelope.date ?? -.infinity, db = b.element.envelope.date ?? -.infinity
            return da != db ? da < db : a.offset < b.offset
        }.map(\.element)
        guard let firstDate = ordered.first?.envelope.date else { return }
        let lastDay = clock.local(ordered.last?.envelope.date ?? firstDate).dayNumber
        let end = until ?? clock.instant(dayNumber: lastDay + 1, minuteOfDay: 0)

        var users: [String] = []
        for (_, e) in ordered where !users.contains(e.user) { users.append(e.user) }
        var focusByUser: [String: String?] = [:]
        var previous = firstDate

        func advance(to t: Double, inclusive: Bool) throws {
            // Focus boundaries and summary times between the previous instant and t, in order.
            var instants = schedule.focusBoundaries(after: previous, upTo: t)
            for user in users {
                if let until = try store.manualFocus(user: user)?.until, until > previous, until <= t {
                    instants.append(until)
                }
            }
            var s = previous
            while let next = engine.pipeline.nextSummary(atOrAfter: s, clock: clock), next <= t {
                instants.append(next)
                s = next + 1
            }
            for instant in Set(instants).sorted() where instant > previous && (inclusive ? instant <= t : instant < t) {
                for user in users {
                    try reportFocus(user: user, at: instant)
                    try deliverSummaries(user: user, upTo: instant)
                }
            }
            previous = max(previous, t)
        }

        func reportFocus(user: String, at t: Double) throws {
            let active = try engine.pipeline.activeFocus(
                at: t, context: context, user: user, state: store, clock: clock)
            let name = active?.focus.name
            if let known = focusByUser[user], known == name { return }
            if focusByUser[user] == nil && name == nil { focusByUser[user] = .some(nil); return }
            let previous = focusByUser[user] ?? nil
            focusByUser[user] = .some(name)
            let reason = active?.why ?? previous.map { "Focus \($0) is off" } ?? "no focus is on"
            try emit(.focus(FocusChange(user: user, at: t, focus: name, reason: reason)))
        }

        func deliverSummaries(user: String, upTo t: Double) throws {
            for delivery in try schedule.deliverDueSummaries(user: user, upTo: t, locked: context.locked) {
                try emit(.summary(delivery))
            }
        }

        for (_, envelope) in ordered {
            let t = envelope.date!
            try advance(to: t, inclusive: true)
            try reportFocus(user: envelope.user, at: context.now ?? t)
            try deliverSummaries(user: envelope.user, upTo: context.now ?? t)
            let decision = try evaluate(envelope, context: context)
            try emit(.notification(at: t, envelope: envelope, decision: decision))
        }
        try advance(to: end, inclusive: true)
    }
}
