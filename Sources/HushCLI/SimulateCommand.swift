import ArgumentParser
import Foundation
import Hush

struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Replay a time-ordered stream as a day: decisions, summaries as they fall due, focus changes.",
        discussion: """
            With --json, JSON Lines events: {"event":"notification","at":T,"decision":{…}}, \
            {"event":"summary","at":T,"notifications":[…],"dropped":[ids]} (notifications in \
            presentation order; dropped: expired before the summary), {"event":"focus","at":T,"focus":NAME|null}. \
            Summaries due up to --until (default: the end of the last notification's day) are delivered.
            """)

    @OptionGroup var policy: PolicyOptions
    @Option(name: .customLong("context"), help: ArgumentHelp("A JSON file with the device's state; its focus must be one the policy declares.", valueName: "file"))
    var contextPath: String?
    @OptionGroup var state: StateOptions
    @Option(help: ArgumentHelp("Deliver summaries due up to this time (RFC 3339).", valueName: "time")) var until: String?
    @Flag(help: "Print JSON Lines events.") var json = false
    @Argument(help: "The notifications: a file, or - / nothing for stdin.") var input: String?

    func run() throws {
        let engine = try policy.engine()
        let context = try ContextFile.load(contextPath, for: engine.policy)
        let store = try state.store()
        let session = try engine.makeSession(store: store)
        let clock = session.clock(for: context)
        let end = try until.map { text -> Double in
            guard let t = RFC3339.parse(text) else { throw ValidationError("--until: \"\(text)\" is not an RFC 3339 time") }
            return t
        }
        let bytes = try InputFile.read(input)
        var items: [(line: Int, result: Result<Envelope, InputError>)] = []
        JSONLines.forEachLine(in: bytes) { line, number in
            do {
                let json = try line.withUnsafeBytes { try JSONParser.parse($0) }
                items.append((number, .success(try Envelope.decode(json, fallbackID: session.nextGeneratedID()))))
            } catch let error as JSONError {
                items.append((number, .failure(InputError(field: nil, error.message))))
            } catch let error as InputError {
                items.append((number, .failure(error)))
            } catch {
                items.append((number, .failure(InputError(field: nil, "\(error)"))))
            }
        }
        var invalid = 0
        var timeline = Timeline(clock: clock, pipeline: engine.pipeline)
        try session.simulate(items, context: context, until: end) { event in
            if case .invalid = event { invalid += 1 }
            if json { Output.write(Self.json(event, clock: clock)) } else { timeline.print(event) }
        }
        Output.flush()
        if invalid > 0 { throw ExitCode(1) }
    }

    static func json(_ event: SimulationEvent, clock: ZoneClock) -> [UInt8] {
        var w = JSONWriter(capacity: 512)
        switch event {
        case .notification(let at, _, let decision):
            w.raw("{\"event\":\"notification\",\"at\":"); w.writeString(clock.format(at))
            w.raw(",\"decision\":"); decision.write(to: &w)
            w.raw("}")
        case .summary(let batch):
            w.raw("{\"event\":\"summary\",\"at\":"); w.writeString(clock.format(batch.at))
            w.raw(",\"notifications\":[")
            for (i, n) in batch.notifications.enumerated() {
                if i > 0 { w.raw(",") }
                w.raw("{\"id\":"); w.writeString(n.id)
                w.raw(",\"app\":"); w.writeString(n.app)
                w.raw(",\"title\":"); if let t = n.title { w.writeString(t) } else { w.writeNull() }
                w.raw(",\"body\":"); if let b = n.body { w.writeString(b) } else { w.writeNull() }
                w.raw(",\"relevance\":"); if let r = n.relevance { w.writeNumber(r) } else { w.writeNull() }
                w.raw(",\"media\":"); w.writeBool(n.hasMedia)
                w.raw(",\"date\":"); w.writeString(clock.format(n.date))
                w.raw(",\"user\":"); w.writeString(n.user)
                w.raw("}")
            }
            w.raw("],\"dropped\":[")
            for (i, n) in batch.dropped.enumerated() {
                if i > 0 { w.raw(",") }
                w.writeString(n.id)
            }
            w.raw("]}")
        case .focus(let at, let name):
            w.raw("{\"event\":\"focus\",\"at\":"); w.writeString(clock.format(at))
            w.raw(",\"focus\":"); if let name { w.writeString(name) } else { w.writeNull() }
            w.raw("}")
        case .invalid(let line, let message):
            return ErrorLine.make(line, message)
        }
        return w.bytes
    }
}

/// The day as a person would read it.
struct Timeline {
    let clock: ZoneClock
    let pipeline: Pipeline
    var day: Int?

    init(clock: ZoneClock, pipeline: Pipeline) {
        self.clock = clock
        self.pipeline = pipeline
    }

    static let weekdays = ["", "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    static let months = ["", "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]

    mutating func header(_ at: Double) -> String {
        let local = clock.local(at)
        if day != local.dayNumber {
            day = local.dayNumber
            let d = local.date
            Output.line("")
            Output.line("\(Self.weekdays[local.weekday]) \(d.day) \(Self.months[d.month]) \(d.year) (\(clock.identifier))")
        }
        return Schedule.formatTime(local.minuteOfDay)
    }

    mutating func print(_ event: SimulationEvent) {
        switch event {
        case .invalid(let line, let message):
            Output.line("  line \(line): skipped: \(message)")
        case .focus(let at, let name):
            let time = header(at)
            Output.line("\(time)  ── Focus \(name.map { "\($0) on" } ?? "off") ──")
        case .summary(let batch):
            let time = header(batch.at)
            Output.line("\(time)  ▤ Scheduled Summary: \(batch.notifications.count) notification\(batch.notifications.count == 1 ? "" : "s")")
            for n in batch.notifications {
                let app = pipeline.settings(for: n.app).name
                Output.line("          · \(app): \(Self.text(title: n.title, body: n.body))")
            }
            for n in batch.dropped {
                Output.line("          ✕ \(pipeline.settings(for: n.app).name): \(Self.text(title: n.title, body: n.body)) (expired, dropped)")
            }
        case .notification(let at, let envelope, let d):
            let time = header(at)
            let app = pipeline.settings(for: envelope.app).name
            let mark: String = switch d.delivery {
            case .alert: d.alert?.sound == true ? "🔔" : "🔕"
            case .quiet: "·"
            case .summary: "⏳"
            case .silenced: "🌙"
            case .dropped: "✕"
            case .background: "↻"
            }
            var what = d.delivery.rawValue
            if let b = d.breakthrough { what += " (\(b.rawValue))" }
            if d.delivery == .summary, let at = d.summaryAt { what += " until \(Schedule.formatTime(clock.local(at).minuteOfDay))" }
            let sender = envelope.communication?.sender.map { pipeline.directory.displayName(of: $0) }
            let title = envelope.title == sender ? nil : envelope.title
            Output.line("\(time)  \(mark) \(app) — \(sender.map { $0 + ": " } ?? "")\(Self.text(title: title, body: envelope.body))")
            Output.line("          \(what)" + (d.announcement.map { "; Siri: \"\($0)\"" } ?? "") + (d.reasons.last.map { " — \($0)" } ?? ""))
        }
    }

    static func text(title: String?, body: String?) -> String {
        let parts = [title, body].compactMap { $0 }.filter { !$0.isEmpty }
        let joined = parts.joined(separator: " — ")
        return joined.count > 70 ? String(joined.prefix(69)) + "…" : (joined.isEmpty ? "(no text)" : joined)
    }
}
