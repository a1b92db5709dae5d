import ArgumentParser
import Foundation
import Hush
import HushCore
import HushJSON
import HushPolicy
import HushState

struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Replay a time-ordered stream as a day: decisions, summaries as they fall due, focus changes.",
        discussion: """
            With --json, JSON Lines events: {"event":"notification","at":T,"decision":{…}}, \
            {"event":"summary","user":U,"at":T,"notifications":[{"id","app","title","body","group","placeholder",…}],"dropped":[ids]} \
            (notifications in summary order; title and body null when the app's previews are hidden; \
            dropped: expired before the summary), {"event":"focus","user":U,"at":T,"focus":NAME|null,"reason":…}. \
            Summaries due up to --until (default: the end of the last notification's day) are delivered.
            With --html FILE, one self-contained page instead of the text: per user a timeline with a row \
            per day, focus bands, a mark per notification (hover for its decision), the summaries as \
            delivered and counts per app and per focus. --compare POLICY draws a second policy beside \
            the first and lists every notification whose outcome changed; both replay in memory from \
            empty state.
            """)

    @OptionGroup var policy: PolicyOptions
    @Option(
        name: .customLong("context"),
        help: ArgumentHelp(
            "A JSON file with the device's state; its focus must be one the policy declares.", valueName: "file"),
        completion: .file())
    var contextPath: String?
    @OptionGroup var state: StateOptions
    @Option(help: ArgumentHelp("Deliver summaries due up to this time (RFC 3339).", valueName: "time")) var until:
        RFC3339Time?
    @Flag(help: "Print JSON Lines events.") var json = false
    @Option(
        help: ArgumentHelp("Write the simulation as one HTML page to this file (- for stdout).", valueName: "file"),
        completion: .file())
    var html: String?
    @Option(
        help: ArgumentHelp(
            "With --html: a second policy file or directory to replay the same stream with, side by side.",
            valueName: "policy"), completion: .file())
    var compare: String?
    @Argument(help: "The notifications: a file, or - / nothing for stdin.", completion: .file()) var input: String?

    func validate() throws {
        if compare != nil && html == nil { throw ValidationError("--compare needs --html FILE to draw the two sides") }
        if compare != nil && state.statePath != nil {
            throw ValidationError("--compare replays both policies in memory from empty state; leave out --state")
        }
        if html == "-" && json { throw ValidationError("--html - and --json would both write to standard output") }
    }

    func run() throws {
        if html != nil { return try drawPage() }
        let engine = try policy.engine()
        let context = try ContextFile.load(contextPath, for: engine.policy)
        let store = try state.batchStore()
        let session = try engine.makeSession(storing: store)
        let clock = session.clock(for: context)
        let end = until?.seconds
        let bytes = try InputFile.read(input)
        var items: [(line: Int, result: Result<Envelope, InputError>)] = []
        try LineStream(bytes: bytes).forEachLine { line, number in
            let decoded = Result { () throws(LineError) in try session.envelope(fromLine: line, number: number) }
            items.append((number, decoded.mapError(\.reason)))
        }
        var invalid = 0
        var timeline = Timeline(clock: clock, pipeline: engine.pipeline, locked: context.locked)
        try session.simulate(items, context: context, until: end) { event in
            if case .invalid = event { invalid += 1 }
            if json { Output.write(Self.json(event, clock: clock)) } else { timeline.print(event) }
            // Each decision is committed before it is emitted: stopping here leaves nothing half done.
            try Output.stopIfClosed()
        }
        Output.flush()
        if invalid > 0 { throw ExitCode(1) }
    }

    /// `--html`: the page, with `--json` events still printed as they happen.
    func drawPage() throws {
        let engine = try policy.engine()
        let first = try engine.makeSession(storing: compare == nil ? state.store() : state.memoryStore())
        // Read once, by the first side's session (which numbers generated ids): both sides see
        // the same notifications under the same ids.
        var items: [(line: Int, result: Result<Envelope, InputError>)] = []
        try LineStream(bytes: InputFile.read(input)).forEachLine { line, number in
            let decoded = Result { () throws(LineError) in try first.envelope(fromLine: line, number: number) }
            items.append((number, decoded.mapError(\.reason)))
        }
        var invalid = 0
        let context = try ContextFile.load(contextPath, for: engine.policy)
        let clock = first.clock(for: context)
        let picture = try first.picture(items, context: context, until: until?.seconds) { event in
            if case .invalid = event { invalid += 1 }
            if json { Output.write(Self.json(event, clock: clock)) }
        }
        let side = SimulationPage.Side(title: Self.title(policy.policies), picture: picture)
        var page = SimulationPage(side)
        if let compare {
            let sources: [PolicySource]
            do {
                sources = try PolicyFiles.sources(paths: [compare])
            } catch {
                Output.error("hush: \(error)")
                throw ExitCode(2)
            }
            let other = try PolicyOptions.engine(sources: sources)
            let otherContext = try ContextFile.load(contextPath, for: other.policy)
            let session = try other.makeSession(storing: state.memoryStore())
            let otherPicture = try session.picture(items, context: otherContext, until: until?.seconds)
            page = SimulationPage(side, comparedWith: SimulationPage.Side(title: compare, picture: otherPicture))
        }
        let bytes = Array(page.render().utf8)
        if html == "-" {
            Output.writeRaw(bytes)
            Output.flush()
        } else if let html {
            Output.flush()
            guard FileManager.default.createFile(atPath: html, contents: Data(bytes)) else {
                Output.error("hush: \(html): cannot be written")
                throw ExitCode(2)
            }
            let marks = picture.users.reduce(0) { $0 + $1.marks.count }
            Output.error(
                "hush: wrote \(html): \(Self.count(picture.users.count, "user")), \(Self.count(marks, "notification")), "
                    + Self.count(picture.days.count, "day") + (compare == nil ? "" : ", \(page.changed.count) changed"))
        }
        if invalid > 0 { throw ExitCode(1) }
    }

    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

    /// What a side of the page is called: its policy files, or the one Hush uses without any.
    static func title(_ paths: [String]) -> String {
        if !paths.isEmpty { return paths.joined(separator: " + ") }
        return PolicyFiles.userPolicyPath() ?? "the built-in default policy"
    }

    static func json(_ event: SimulationEvent, clock: ZoneClock) -> [UInt8] { event.jsonLine(clock: clock) }
}

/// The day as a person would read it.
struct Timeline {
    let clock: ZoneClock
    let pipeline: Pipeline
    /// The device's state, for previews shown only while unlocked.
    let locked: Bool
    var day: Int?

    init(clock: ZoneClock, pipeline: Pipeline, locked: Bool) {
        self.clock = clock
        self.pipeline = pipeline
        self.locked = locked
    }

    static let weekdays = ["", "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    static let months = [
        "", "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
        "November", "December",
    ]

    mutating func header(_ at: Double) -> String {
        let local = clock.local(at)
        if day != local.dayNumber {
            day = local.dayNumber
            let d = local.date
            Output.line("")
            Output.line(
                "\(Self.weekdays[local.weekday]) \(d.day) \(Self.months[d.month]) \(d.year) (\(clock.identifier))")
        }
        return Schedule.formatTime(local.minuteOfDay)
    }

    mutating func print(_ event: SimulationEvent) {
        switch event {
        case .invalid(let line, let message):
            Output.line("  line \(line): skipped: \(message)")
        case .focus(let change):
            let time = header(change.at)
            Output.line("\(time)  ── Focus \(change.focus.map { "\($0) on" } ?? "off") ──")
        case .summary(let batch):
            let time = header(batch.at)
            Output.line(
                "\(time)  ▤ Scheduled Summary: \(batch.notifications.count) notification\(batch.notifications.count == 1 ? "" : "s")"
            )
            for n in batch.notifications {
                let app = pipeline.settings(for: n.app).name
                Output.line(
                    "          · \(app): \(Self.text(title: n.title, body: n.body, placeholder: n.placeholder))")
            }
            for n in batch.dropped {
                Output.line(
                    "          ✕ \(pipeline.settings(for: n.app).name): \(Self.text(title: n.title, body: n.body, placeholder: n.placeholder)) (expired, dropped)"
                )
            }
        case .notification(let at, let envelope, let d):
            let time = header(at)
            let app = pipeline.settings(for: envelope.app).name
            let mark: String =
                switch d.delivery {
                case .alert: d.alert?.sound == true ? "🔔" : "🔕"
                case .quiet: "·"
                case .summary: "⏳"
                case .silenced: "🌙"
                case .dropped: "✕"
                case .background: "↻"
                case .withdrawn: "⌫"
                }
            var what = d.delivery.rawValue
            if let b = d.breakthrough { what += " (\(b.rawValue))" }
            if d.delivery == .summary, let at = d.summaryAt {
                what += " until \(Schedule.formatTime(clock.local(at).minuteOfDay))"
            }
            let settings = pipeline.settings(for: envelope.app)
            let previewsHidden = settings.hidesPreviews(locked: locked)
            if d.delivery == .withdrawn {
                Output.line("\(time)  \(mark) \(app) — withdraws \(envelope.collapseKey)")
            } else if previewsHidden {
                // The timeline shows what the screen shows: no sender, title or body.
                Output.line("\(time)  \(mark) \(app) — \(d.placeholder ?? "Notification")")
            } else {
                let sender = envelope.communication?.sender.map { pipeline.directory.displayName(of: $0) }
                let title = envelope.title == sender ? nil : envelope.title
                Output.line(
                    "\(time)  \(mark) \(app) — \(sender.map { $0 + ": " } ?? "")\(Self.text(title: title, body: envelope.body))"
                )
            }
            Output.line(
                "          \(what)" + (d.announcement.map { "; Siri: \"\($0)\"" } ?? "")
                    + (d.reasons.last.map { " — \($0)" } ?? ""))
        }
    }

    static func text(title: String?, body: String?, placeholder: String? = nil) -> String {
        if let placeholder { return placeholder }
        let parts = [title, body].compactMap { $0 }.filter { !$0.isEmpty }
        let joined = parts.joined(separator: " — ")
        return joined.count > 70 ? String(joined.prefix(69)) + "…" : (joined.isEmpty ? "(no text)" : joined)
    }
}
