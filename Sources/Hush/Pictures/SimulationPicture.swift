package import HushCore

/// What `hush simulate --html` draws, per user: focus bands, a mark per notification, summary
/// deliveries and counts. Built from the simulation's events alone, so the picture shows exactly
/// what `simulate --json` reports (the tests hold the two together).
package struct SimulationPicture: Sendable {
    /// One notification as it landed.
    package struct Mark: Sendable, Hashable {
        package var id: String
        package var at: Double
        /// The app's display name.
        package var app: String
        package var delivery: Decision.Delivery
        package var breakthrough: Decision.Breakthrough?
        /// The focus in force when it arrived.
        package var focus: String?
        /// What the screen shows: the placeholder when the app's previews are hidden.
        package var text: String
        package var summaryAt: Double?
        package var announcement: String?
        package var reasons: [String]
        package var rules: [String]
        package var sound: Bool
    }

    /// A focus in force from `start` to `end` (the end of the replay when it never ended).
    package struct Band: Sendable, Hashable {
        package var focus: String
        package var start: Double
        package var end: Double
        /// Why it came on, and why it ended (nil when the replay ended first).
        package var reason: String
        package var endReason: String?
    }

    /// A scheduled summary as it was delivered.
    package struct Summary: Sendable, Hashable {
        package struct Item: Sendable, Hashable {
            package var id: String
            package var app: String
            /// Title and body, or the placeholder when previews are hidden.
            package var text: String
        }
        package var at: Double
        package var items: [Item]
        /// Expired while waiting: not shown.
        package var dropped: [Item]
    }

    /// How notifications landed, for one app or one focus.
    package struct Tally: Sendable, Hashable {
        package var total = 0
        /// Alerts: they interrupted.
        package var interrupted = 0
        /// Landed in the list without sound or banner.
        package var quiet = 0
        /// Waited for a scheduled summary.
        package var waited = 0
        package var silenced = 0
        /// Dropped, background and withdraw lines: nothing shown.
        package var unseen = 0
        /// What broke through, by kind, in order of first appearance.
        package var breakthroughs: [(kind: Decision.Breakthrough, count: Int)] = []

        package var brokeThrough: Int { breakthroughs.reduce(0) { $0 + $1.count } }

        init() {}

        init(counting mark: Mark) { count(mark) }

        mutating func count(_ mark: Mark) {
            total += 1
            switch mark.delivery {
            case .alert: interrupted += 1
            case .quiet: quiet += 1
            case .summary: waited += 1
            case .silenced: silenced += 1
            case .dropped, .background, .withdrawn: unseen += 1
            }
            guard let kind = mark.breakthrough else { return }
            if let i = breakthroughs.firstIndex(where: { $0.kind == kind }) {
                breakthroughs[i].count += 1
            } else {
                breakthroughs.append((kind, 1))
            }
        }

        package static func == (a: Tally, b: Tally) -> Bool {
            a.total == b.total && a.interrupted == b.interrupted && a.quiet == b.quiet && a.waited == b.waited
                && a.silenced == b.silenced && a.unseen == b.unseen
                && a.breakthroughs.map(\.kind) == b.breakthroughs.map(\.kind)
                && a.breakthroughs.map(\.count) == b.breakthroughs.map(\.count)
        }

        package func hash(into hasher: inout Hasher) {
            hasher.combine(total)
            hasher.combine(interrupted)
            hasher.combine(waited)
        }
    }

    /// Everything about one user.
    package struct User: Sendable {
        package var name: String
        /// In arrival order.
        package var marks: [Mark] = []
        /// In time order; they never overlap.
        package var bands: [Band] = []
        package var summaries: [Summary] = []
        /// Per app display name, in order of first arrival.
        package var perApp: [(app: String, tally: Tally)] = []
        /// Per focus in force at arrival ("" for none), in order of first arrival.
        package var perFocus: [(focus: String?, tally: Tally)] = []
        package var total: Tally = Tally()
    }

    /// Lines of the input that were not notifications.
    package struct Skipped: Sendable, Hashable {
        package var line: Int
        package var message: String
    }

    package var users: [User] = []
    package var skipped: [Skipped] = []
    /// The local days drawn, first to last (day numbers of `clock`).
    package var days: ClosedRange<Int>
    /// The times summaries are scheduled on the days drawn, delivered or not.
    package var summaryTimes: [Double]
    package var clock: ZoneClock

    /// Builds the picture as `events` arrive; `finish(end:)` closes the bands still open.
    package struct Builder {
        private var picture: SimulationPicture
        private let pipeline: Pipeline
        private let locked: Bool
        private var index: [String: Int] = [:]

        package init(clock: ZoneClock, pipeline: Pipeline, locked: Bool) {
            picture = SimulationPicture(days: 0...0, summaryTimes: [], clock: clock)
            self.pipeline = pipeline
            self.locked = locked
        }

        private mutating func user(_ name: String) -> Int {
            if let i = index[name] { return i }
            picture.users.append(User(name: name))
            index[name] = picture.users.count - 1
            return picture.users.count - 1
        }

        package mutating func add(_ event: SimulationEvent) {
            switch event {
            case .invalid(let line, let message):
                picture.skipped.append(Skipped(line: line, message: message))
            case .focus(let change):
                let u = user(change.user)
                closeBand(of: u, at: change.at, reason: change.reason)
                if let focus = change.focus {
                    picture.users[u].bands.append(
                        Band(focus: focus, start: change.at, end: .nan, reason: change.reason))
                }
            case .summary(let delivery):
                let u = user(delivery.user)
                picture.users[u].summaries.append(
                    Summary(
                        at: delivery.at, items: delivery.notifications.map(item),
                        dropped: delivery.dropped.map(item)))
            case .notification(let at, let envelope, let decision):
                let u = user(envelope.user)
                let mark = Mark(
                    id: decision.id, at: at, app: pipeline.settings(for: envelope.app).name,
                    delivery: decision.delivery, breakthrough: decision.breakthrough,
                    focus: decision.focus, text: shownText(envelope, decision),
                    summaryAt: decision.summaryAt, announcement: decision.announcement, reasons: decision.reasons,
                    rules: decision.rules, sound: decision.alert?.sound == true)
                picture.users[u].marks.append(mark)
                picture.users[u].total.count(mark)
                if let i = picture.users[u].perApp.firstIndex(where: { $0.app == mark.app }) {
                    picture.users[u].perApp[i].tally.count(mark)
                } else {
                    picture.users[u].perApp.append((mark.app, Tally(counting: mark)))
                }
                if let i = picture.users[u].perFocus.firstIndex(where: { $0.focus == mark.focus }) {
                    picture.users[u].perFocus[i].tally.count(mark)
                } else {
                    picture.users[u].perFocus.append((mark.focus, Tally(counting: mark)))
                }
            }
        }

        private mutating func closeBand(of u: Int, at t: Double, reason: String?) {
            guard let last = picture.users[u].bands.indices.last, picture.users[u].bands[last].end.isNaN else { return }
            picture.users[u].bands[last].end = t
            picture.users[u].bands[last].endReason = reason
        }

        private func item(_ n: SummaryDelivery.Item) -> Summary.Item {
            Summary.Item(
                id: n.id, app: pipeline.settings(for: n.app).name,
                text: SimulationPicture.text(title: n.title, body: n.body, placeholder: n.placeholder))
        }

        /// What the notification shows on screen: no sender, title or body when previews are hidden.
        private func shownText(_ envelope: Envelope, _ decision: Decision) -> String {
            if decision.delivery == .withdrawn { return "withdraws \(envelope.collapseKey)" }
            if pipeline.settings(for: envelope.app).hidesPreviews(locked: locked) {
                return decision.placeholder ?? "Notification"
            }
            let sender = envelope.communication?.sender.map { pipeline.directory.displayName(of: $0) }
            let title = envelope.title == sender ? nil : envelope.title
            return (sender.map { $0 + ": " } ?? "") + SimulationPicture.text(title: title, body: envelope.body)
        }

        /// The picture, with open bands ending at `end` and the days running from the first
        /// event's to the last one's (or `end`'s, when the replay ran on).
        package mutating func finish(end: Double) -> SimulationPicture {
            let clock = picture.clock
            var instants: [Double] = []
            for u in picture.users.indices {
                closeBand(of: u, at: end, reason: nil)
                let user = picture.users[u]
                // The end of the replay closes bands but adds no day of its own.
                instants +=
                    user.marks.map(\.at) + user.summaries.map(\.at) + user.bands.map(\.start)
                    + user.bands.compactMap { $0.endReason == nil ? nil : $0.end }
            }
            if let first = instants.min(), let last = instants.max() {
                picture.days = clock.local(first).dayNumber...clock.local(last).dayNumber
            }
            let start = clock.instant(dayNumber: picture.days.lowerBound, minuteOfDay: 0)
            let stop = clock.instant(dayNumber: picture.days.upperBound + 1, minuteOfDay: 0)
            var t = start
            picture.summaryTimes = []
            while let next = pipeline.nextSummary(atOrAfter: t, clock: clock), next < stop {
                picture.summaryTimes.append(next)
                t = next + 1
            }
            return picture
        }
    }

    /// Title and body joined, or the placeholder, shortened to a line.
    package static func text(title: String?, body: String?, placeholder: String? = nil) -> String {
        if let placeholder { return placeholder }
        let joined = [title, body].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " — ")
        if joined.isEmpty { return "(no text)" }
        return joined.count > 70 ? String(joined.prefix(69)) + "…" : joined
    }
}

extension Session {
    /// Replays `items` as `simulate` does and draws the result.
    package func picture(
        _ items: [(line: Int, result: Result<Envelope, InputError>)], context: EvaluationContext, until: Double?,
        also: (SimulationEvent) throws -> Void = { _ in }
    ) throws -> SimulationPicture {
        let clock = clock(for: context)
        var builder = SimulationPicture.Builder(clock: clock, pipeline: engine.pipeline, locked: context.locked)
        var lastArrival = -Double.infinity
        try simulate(items, context: context, until: until) { event in
            builder.add(event)
            if case .notification(let at, _, _) = event { lastArrival = max(lastArrival, at) }
            try also(event)
        }
        // As `simulate` stops: at `until`, else at the end of the last notification's local day.
        let end =
            until
            ?? (lastArrival.isFinite
                ? clock.instant(dayNumber: clock.local(lastArrival).dayNumber + 1, minuteOfDay: 0) : 0)
        return builder.finish(end: end)
    }
}
