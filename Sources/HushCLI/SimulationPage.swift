import Hush
import HushCore

/// `hush simulate --html`: one self-contained page (inline SVG and CSS, no script, no network).
/// Each user gets a timeline with a row per local day; `--compare` draws a second policy beside
/// the first and lists what changed. docs/reference.md ("The simulation page") describes it.
struct SimulationPage {
    struct Side {
        var title: String
        var picture: SimulationPicture
    }

    let sides: [Side]
    /// The notifications whose outcome differs between the two sides, by position in the stream.
    var changed: Set<Int> = []

    init(_ side: Side) { sides = [side] }

    init(_ a: Side, comparedWith b: Side) {
        sides = [a, b]
        for (ua, ub) in Self.pairedUsers(a.picture, b.picture) {
            for (i, (ma, mb)) in zip(ua.marks, ub.marks).enumerated() where Self.outcome(ma) != Self.outcome(mb) {
                changed.insert(Self.key(user: ua.name, index: i))
            }
        }
    }

    /// What "changed" compares: how it landed, what let it through, and when its summary comes.
    static func outcome(_ m: SimulationPicture.Mark) -> String {
        "\(m.delivery.rawValue)|\(m.breakthrough?.rawValue ?? "")|\(m.summaryAt.map { "\($0)" } ?? "")"
    }

    static func pairedUsers(_ a: SimulationPicture, _ b: SimulationPicture) -> [(
        SimulationPicture.User, SimulationPicture.User
    )] {
        a.users.compactMap { ua in b.users.first { $0.name == ua.name }.map { (ua, $0) } }
    }

    private static func key(user: String, index: Int) -> Int {
        var h = Hasher()
        h.combine(user)
        h.combine(index)
        return h.finalize()
    }

    // MARK: - The page

    func render() -> String {
        var html = HTML()
        let first = sides[0].picture
        let clock = first.clock
        let days = first.days.lowerBound...max(first.days.upperBound, sides.last!.picture.days.upperBound)
        let range =
            days.count == 1
            ? Self.dayTitle(days.lowerBound) : "\(Self.dayTitle(days.lowerBound)) – \(Self.dayTitle(days.upperBound))"
        let heading = sides.count == 1 ? "What your policy does" : "What changes between two policies"
        html.raw("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        html.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        html.raw("<title>")
        html.text("Hush: \(heading.lowercased()), \(range)")
        html.raw("</title>\n<style>\(Self.style)</style>\n</head>\n<body>\n<header>\n<h1>")
        html.text(heading)
        html.raw("</h1>\n<p class=\"sub\">")
        html.text("\(range) · \(clock.identifier) · ")
        html.text(sides.map(\.title).joined(separator: " compared with "))
        html.raw("</p>\n</header>\n")
        legend(&html)
        for skipped in first.skipped {
            html.raw("<p class=\"skipped\">")
            html.text("line \(skipped.line): skipped: \(skipped.message)")
            html.raw("</p>\n")
        }
        for user in first.users {
            html.raw("<section class=\"user\" data-user=\"")
            html.text(user.name)
            html.raw("\">\n<h2>")
            html.text(user.name)
            html.raw("</h2>\n")
            if sides.count == 1 {
                story(&html, user)
                timeline(&html, user, days: days, picture: first, side: 0)
                summaries(&html, user, clock: clock)
                tallies(&html, user)
            } else {
                comparison(&html, user, days: days)
            }
            html.raw("</section>\n")
        }
        html.raw(
            "<footer>Made by <code>hush simulate --html</code>. Hover or focus a mark for its decision.</footer>\n")
        html.raw("</body>\n</html>\n")
        return html.out
    }

    // MARK: - Parts

    private func legend(_ html: inout HTML) {
        html.raw("<ul class=\"legend\" aria-label=\"Legend\">\n")
        for delivery in [
            Decision.Delivery.alert, .quiet, .summary, .silenced, .dropped, .background,
        ] {
            html.raw("<li><svg width=\"18\" height=\"18\" viewBox=\"-9 -9 18 18\" aria-hidden=\"true\">")
            html.raw("<g class=\"key \(delivery.rawValue)\">")
            Self.shape(&html, delivery, x: 0, y: 0)
            html.raw("</g></svg>")
            html.text(Self.label(delivery))
            html.raw("</li>\n")
        }
        html.raw("<li><svg width=\"18\" height=\"18\" viewBox=\"-9 -9 18 18\" aria-hidden=\"true\">")
        html.raw("<circle class=\"ring\" r=\"7\"/></svg>broke through</li>\n")
        html.raw("<li><svg width=\"18\" height=\"18\" viewBox=\"-9 -9 18 18\" aria-hidden=\"true\">")
        html.raw("<line class=\"summary-line\" x1=\"0\" y1=\"-8\" x2=\"0\" y2=\"8\"/></svg>summary delivered</li>\n")
        html.raw("</ul>\n")
    }

    /// The sentence a person reads first, and the breakthroughs worth a look.
    private func story(_ html: inout HTML, _ user: SimulationPicture.User) {
        let t = user.total
        var parts = ["\(t.interrupted) interrupted", "\(t.waited) waited for a summary"]
        if t.quiet > 0 { parts.append("\(t.quiet) landed quietly") }
        parts.append("\(t.silenced) silenced by a focus")
        if t.unseen > 0 { parts.append("\(t.unseen) not shown") }
        html.raw("<p class=\"story\">")
        html.text(
            "\(t.total) notification\(t.total == 1 ? "" : "s"): \(parts.joined(separator: ", ")). "
                + "\(t.brokeThrough) broke through, \(user.summaries.count) summar\(user.summaries.count == 1 ? "y" : "ies") delivered."
        )
        html.raw("</p>\n")
        // Per focus, what got through: the few that interrupted are listed one by one (the night a
        // pager rang), the many are counted by kind (the colleagues Work lets through).
        let focused = user.perFocus.compactMap { entry in entry.focus.map { ($0, entry.tally) } }
        guard !focused.isEmpty else { return }
        html.raw("<ul class=\"highlights\">\n")
        for (focus, tally) in focused {
            let through = user.marks.filter { $0.focus == focus && $0.delivery == .alert }
            html.raw("<li data-focus=\"")
            html.text(focus)
            html.raw("\"><b>")
            html.text(focus)
            html.raw("</b> ")
            html.text(
                "(\(tally.total) arrived): \(through.count) interrupted, \(tally.waited + tally.quiet) waited or landed quietly, \(tally.silenced) silenced"
            )
            if through.isEmpty || through.count > 6 {
                let kinds = tally.breakthroughs.map { "\($0.count) \($0.kind.rawValue)" }.joined(separator: ", ")
                html.text(kinds.isEmpty ? "." : "; broke through: \(kinds).")
            } else {
                html.raw(":<ul>")
                for mark in through {
                    html.raw("<li><time>")
                    html.text(dayAndTime(mark.at))
                    html.raw("</time> ")
                    html.text("\(mark.app): \(mark.text)" + (mark.breakthrough.map { " (\($0.rawValue))" } ?? ""))
                    html.raw("</li>")
                }
                html.raw("</ul>")
            }
            html.raw("</li>\n")
        }
        html.raw("</ul>\n")
    }

    private func comparison(_ html: inout HTML, _ user: SimulationPicture.User, days: ClosedRange<Int>) {
        html.raw("<div class=\"sides\">\n")
        for (i, side) in sides.enumerated() {
            guard let u = side.picture.users.first(where: { $0.name == user.name }) else { continue }
            html.raw("<div class=\"side\">\n<h3>")
            html.text(side.title)
            html.raw("</h3>\n")
            story(&html, u)
            timeline(&html, u, days: days, picture: side.picture, side: i)
            html.raw("</div>\n")
        }
        html.raw("</div>\n")
        guard let other = sides[1].picture.users.first(where: { $0.name == user.name }) else { return }
        let rows = zip(user.marks, other.marks).enumerated().filter {
            changed.contains(Self.key(user: user.name, index: $0.offset))
        }
        html.raw("<h3>What changed</h3>\n<p class=\"story\">")
        html.text(
            "\(rows.count) of \(user.marks.count) notification\(user.marks.count == 1 ? "" : "s") land differently.")
        html.raw("</p>\n")
        guard !rows.isEmpty else { return }
        html.raw(
            "<div class=\"scroll\"><table class=\"changes\">\n<thead><tr><th>when</th><th>app</th><th>what</th><th>")
        html.text(sides[0].title)
        html.raw("</th><th>")
        html.text(sides[1].title)
        html.raw("</th><th>why, now</th></tr></thead>\n<tbody>\n")
        for (_, (a, b)) in rows {
            html.raw("<tr class=\"changed\" data-id=\"")
            html.text(a.id)
            html.raw("\"><td>")
            html.text(dayAndTime(a.at))
            html.raw("</td><td>")
            html.text(a.app)
            html.raw("</td><td>")
            html.text(a.text)
            html.raw("</td><td>")
            html.text(outcomeWords(a))
            html.raw("</td><td>")
            html.text(outcomeWords(b))
            html.raw("</td><td>")
            html.text(b.reasons.last ?? "")
            html.raw("</td></tr>\n")
        }
        html.raw("</tbody></table></div>\n")
    }

    private func outcomeWords(_ m: SimulationPicture.Mark) -> String {
        var words = Self.label(m.delivery)
        if m.delivery == .summary, let at = m.summaryAt { words += " until " + time(at) }
        if let b = m.breakthrough { words += " (\(b.rawValue))" }
        return words
    }

    // MARK: - The timeline

    static let labelWidth = 70.0
    static let hourWidth = 40.0
    static let rowHeight = 56.0
    static let top = 22.0

    private func timeline(
        _ html: inout HTML, _ user: SimulationPicture.User, days: ClosedRange<Int>, picture: SimulationPicture,
        side: Int
    ) {
        let clock = picture.clock
        let width = Self.labelWidth + 24 * Self.hourWidth + 20
        let height = Self.top + Double(days.count) * Self.rowHeight + 4
        html.raw("<div class=\"scroll\"><svg class=\"timeline\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" ")
        html.raw("role=\"group\" aria-label=\"")
        html.text("Timeline of \(user.name), one row per day")
        html.raw("\">\n")
        // Hours across the top, and a faint line every three hours.
        for hour in stride(from: 0, through: 24, by: 3) {
            let x = Self.labelWidth + Double(hour) * Self.hourWidth
            html.raw("<line class=\"hour\" x1=\"\(x)\" y1=\"\(Self.top - 4)\" x2=\"\(x)\" y2=\"\(height - 4)\"/>")
            html.raw(
                "<text class=\"hour\" x=\"\(x)\" y=\"12\" text-anchor=\"middle\">\(hour < 10 ? "0" : "")\(hour):00</text>\n"
            )
        }
        for (row, day) in days.enumerated() {
            let y = Self.top + Double(row) * Self.rowHeight
            html.raw("<text class=\"day\" x=\"0\" y=\"\(y + Self.rowHeight / 2 + 4)\">")
            html.text(Self.dayLabel(day))
            html.raw("</text><rect class=\"row\" x=\"\(Self.labelWidth)\" y=\"\(y + 2)\" ")
            html.raw("width=\"\(24 * Self.hourWidth)\" height=\"\(Self.rowHeight - 4)\"/>\n")
        }
        // Focus bands, split at midnight into one rectangle per day.
        for band in user.bands {
            html.raw("<g class=\"band \(Self.focusClass(band.focus))\" data-focus=\"")
            html.text(band.focus)
            html.raw("\" data-start=\"\(clock.format(band.start))\" data-end=\"\(clock.format(band.end))\">")
            html.raw("<title>")
            html.text(
                "\(band.focus) \(dayAndTime(band.start)) to \(dayAndTime(band.end)): \(band.reason)"
                    + (band.endReason.map { "; then \($0)" } ?? ""))
            html.raw("</title>")
            var labelled = false
            for (x0, x1, y) in segments(from: band.start, to: band.end, days: days, clock: clock) where x1 > x0 {
                html.raw("<rect x=\"\(x0)\" y=\"\(y + 2)\" width=\"\(x1 - x0)\" height=\"\(Self.rowHeight - 4)\"/>")
                if !labelled && x1 - x0 > 44 {
                    html.raw("<text x=\"\(x0 + 3)\" y=\"\(y + 11)\">")
                    html.text(band.focus)
                    html.raw("</text>")
                    labelled = true
                }
            }
            html.raw("</g>\n")
        }
        // Summary times: a tick for each scheduled one, a line with a count for each delivered one.
        for at in picture.summaryTimes {
            guard let (x, y) = point(at, days: days, clock: clock) else { continue }
            html.raw("<line class=\"summary-time\" x1=\"\(x)\" y1=\"\(y + 2)\" x2=\"\(x)\" y2=\"\(y + 8)\"/>")
        }
        html.raw("\n")
        for summary in user.summaries {
            guard let (x, y) = point(summary.at, days: days, clock: clock) else { continue }
            html.raw("<g class=\"delivered\" data-at=\"\(clock.format(summary.at))\"><title>")
            html.text(
                "Scheduled Summary \(dayAndTime(summary.at)): \(summary.items.count) notification\(summary.items.count == 1 ? "" : "s")"
                    + summary.items.prefix(12).map { "\n· \($0.app): \($0.text)" }.joined()
                    + (summary.items.count > 12 ? "\n· and \(summary.items.count - 12) more" : "")
                    + (summary.dropped.isEmpty ? "" : "\n\(summary.dropped.count) expired and dropped"))
            html.raw("</title><line class=\"summary-line\" x1=\"\(x)\" y1=\"\(y + 2)\" x2=\"\(x)\" ")
            html.raw("y2=\"\(y + Self.rowHeight - 2)\"/><text x=\"\(x + 2)\" y=\"\(y + 11)\">")
            html.raw("\(summary.items.count)</text></g>\n")
        }
        // The marks, in three lanes: interrupted on top, waiting or quiet in the middle, silenced or
        // unseen below. Marks that would overlap in a lane step down a little.
        var lastX = [Double](repeating: -100, count: 3)
        var step = [0, 0, 0]
        for (i, mark) in user.marks.enumerated() {
            guard let (x, y) = point(mark.at, days: days, clock: clock) else { continue }
            let lane = Self.lane(mark.delivery)
            if x - lastX[lane] < 4 { step[lane] = (step[lane] + 1) % 3 } else { step[lane] = 0 }
            lastX[lane] = x
            let my = y + 20 + Double(lane) * 13 + Double(step[lane]) * 2 - 2
            let isChanged = changed.contains(Self.key(user: user.name, index: i))
            html.raw("<g class=\"mark \(mark.delivery.rawValue)\(mark.breakthrough == nil ? "" : " through")")
            html.raw("\(isChanged ? " changed" : "")\" tabindex=\"0\" data-id=\"")
            html.text(mark.id)
            html.raw("\" data-delivery=\"\(mark.delivery.rawValue)\"")
            if let b = mark.breakthrough { html.raw(" data-breakthrough=\"\(b.rawValue)\"") }
            html.raw(" data-at=\"\(clock.format(mark.at))\"><title>")
            html.text(describe(mark, side: side))
            html.raw("</title>")
            if mark.breakthrough != nil { html.raw("<circle class=\"ring\" cx=\"\(x)\" cy=\"\(my)\" r=\"7\"/>") }
            Self.shape(&html, mark.delivery, x: x, y: my)
            html.raw("</g>\n")
        }
        html.raw("</svg></div>\n")
    }

    /// The decision in words, for the mark's tooltip.
    private func describe(_ mark: SimulationPicture.Mark, side: Int) -> String {
        var lines = ["\(dayAndTime(mark.at)) \(mark.app): \(mark.text)"]
        var how = Self.label(mark.delivery)
        if mark.delivery == .alert { how += mark.sound ? ", with sound" : ", without sound" }
        if mark.delivery == .summary, let at = mark.summaryAt { how += " until \(dayAndTime(at))" }
        lines.append(how + (mark.focus.map { " · focus \($0)" } ?? ""))
        if let b = mark.breakthrough { lines.append("broke through: \(b.rawValue)") }
        if let announcement = mark.announcement { lines.append("Siri: \"\(announcement)\"") }
        lines += mark.reasons.map { "· \($0)" }
        if !mark.rules.isEmpty { lines.append("rules: " + mark.rules.joined(separator: ", ")) }
        lines.append("id \(mark.id)")
        return lines.joined(separator: "\n")
    }

    /// Where an instant falls: its x on the day's row, and the row's top.
    private func point(_ t: Double, days: ClosedRange<Int>, clock: ZoneClock) -> (Double, Double)? {
        let local = clock.local(t)
        guard days.contains(local.dayNumber) else { return nil }
        let x = Self.labelWidth + Double(local.secondOfDay) / 3600 * Self.hourWidth
        return (Self.round(x), Self.top + Double(local.dayNumber - days.lowerBound) * Self.rowHeight)
    }

    /// A band's pieces, one per day it touches.
    private func segments(from start: Double, to end: Double, days: ClosedRange<Int>, clock: ZoneClock) -> [(
        Double, Double, Double
    )] {
        var pieces: [(Double, Double, Double)] = []
        let first = clock.local(start).dayNumber
        let last = clock.local(max(start, end - 1)).dayNumber
        guard first <= last else { return [] }
        for day in first...last where days.contains(day) {
            let dayStart = clock.instant(dayNumber: day, minuteOfDay: 0)
            let dayEnd = clock.instant(dayNumber: day + 1, minuteOfDay: 0)
            let from = max(start, dayStart), to = min(end, dayEnd)
            let x0 = Self.labelWidth + (from - dayStart) / (dayEnd - dayStart) * 24 * Self.hourWidth
            let x1 = Self.labelWidth + (to - dayStart) / (dayEnd - dayStart) * 24 * Self.hourWidth
            pieces.append((Self.round(x0), Self.round(x1), Self.top + Double(day - days.lowerBound) * Self.rowHeight))
        }
        return pieces
    }

    private static func round(_ x: Double) -> Double { (x * 10).rounded() / 10 }

    private static func lane(_ delivery: Decision.Delivery) -> Int {
        switch delivery {
        case .alert: 0
        case .quiet, .summary: 1
        case .silenced, .dropped, .background, .withdrawn: 2
        }
    }

    /// A different shape for every delivery, so the picture does not rely on colour.
    private static func shape(_ html: inout HTML, _ delivery: Decision.Delivery, x: Double, y: Double) {
        switch delivery {
        case .alert: html.raw("<circle cx=\"\(x)\" cy=\"\(y)\" r=\"4.5\"/>")
        case .quiet: html.raw("<circle cx=\"\(x)\" cy=\"\(y)\" r=\"3.5\"/>")
        case .summary: html.raw("<rect x=\"\(round(x - 3.5))\" y=\"\(round(y - 3.5))\" width=\"7\" height=\"7\"/>")
        case .silenced:
            html.raw("<path d=\"M\(round(x - 4)) \(round(y - 3))h8l-4 7z\"/>")
        case .dropped, .withdrawn:
            html.raw("<path d=\"M\(round(x - 3.5)) \(round(y - 3.5))l7 7m0 -7l-7 7\"/>")
        case .background: html.raw("<circle cx=\"\(x)\" cy=\"\(y)\" r=\"2\"/>")
        }
    }

    private static func label(_ delivery: Decision.Delivery) -> String {
        switch delivery {
        case .alert: "alert"
        case .quiet: "quiet"
        case .summary: "summary"
        case .silenced: "silenced"
        case .dropped: "dropped"
        case .background: "background"
        case .withdrawn: "withdrawn"
        }
    }

    /// The focuses people name most get their own colours; any other cycles through the rest.
    private static func focusClass(_ focus: String) -> String {
        let known = ["sleep", "work", "personal", "driving", "fitness", "reading", "gaming", "mindfulness"]
        if let i = known.firstIndex(of: focus.lowercased()) { return "f\(i % 6)" }
        return "f\(Int(focus.unicodeScalars.reduce(0) { ($0 &* 31 &+ Int($1.value)) & 0xffff }) % 6)"
    }

    // MARK: - Summaries and counts

    private func summaries(_ html: inout HTML, _ user: SimulationPicture.User, clock: ZoneClock) {
        guard !user.summaries.isEmpty else { return }
        html.raw("<h3>Summaries, as they were delivered</h3>\n<div class=\"summaries\">\n")
        for summary in user.summaries {
            html.raw("<article><h4>")
            html.text(
                "\(dayAndTime(summary.at)) · \(summary.items.count) notification\(summary.items.count == 1 ? "" : "s")")
            html.raw("</h4>\n<ul>")
            for item in summary.items {
                html.raw("<li><b>")
                html.text(item.app)
                html.raw("</b> ")
                html.text(item.text)
                html.raw("</li>")
            }
            for item in summary.dropped {
                html.raw("<li class=\"dropped\"><b>")
                html.text(item.app)
                html.raw("</b> <s>")
                html.text(item.text)
                html.raw("</s> (expired, dropped)</li>")
            }
            html.raw("</ul></article>\n")
        }
        html.raw("</div>\n")
    }

    private func tallies(_ html: inout HTML, _ user: SimulationPicture.User) {
        html.raw("<div class=\"tables\">\n")
        table(&html, caption: "By app", key: "app", rows: user.perApp.map { ($0.app, $0.tally) })
        table(
            &html, caption: "By focus at arrival", key: "focus",
            rows: user.perFocus.map { ($0.focus ?? "no focus", $0.tally) })
        html.raw("</div>\n")
    }

    private func table(
        _ html: inout HTML, caption: String, key: String, rows: [(String, SimulationPicture.Tally)]
    ) {
        html.raw("<div class=\"scroll\"><table class=\"tally\" data-by=\"\(key)\">\n<caption>")
        html.text(caption)
        html.raw("</caption>\n<thead><tr><th scope=\"col\">\(key)</th><th scope=\"col\">in all</th>")
        html.raw("<th scope=\"col\">interrupted</th><th scope=\"col\">quiet</th><th scope=\"col\">waited</th>")
        html.raw("<th scope=\"col\">silenced</th><th scope=\"col\">not shown</th><th scope=\"col\">broke through</th>")
        html.raw("</tr></thead>\n<tbody>\n")
        for (name, t) in rows {
            html.raw("<tr><th scope=\"row\">")
            html.text(name)
            html.raw("</th>")
            for n in [t.total, t.interrupted, t.quiet, t.waited, t.silenced, t.unseen] {
                html.raw(n == 0 ? "<td class=\"zero\">0</td>" : "<td>\(n)</td>")
            }
            html.raw("<td>")
            html.text(t.breakthroughs.map { "\($0.count) \($0.kind.rawValue)" }.joined(separator: ", "))
            html.raw("</td></tr>\n")
        }
        html.raw("</tbody></table></div>\n")
    }

    // MARK: - Words for times

    private static let weekdays = ["", "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = [
        "", "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    private static func dayLabel(_ day: Int) -> String {
        "\(weekdays[CivilDate.weekday(dayNumber: day)]) \(CivilDate(dayNumber: day).day)"
    }

    private static func dayTitle(_ day: Int) -> String {
        let date = CivilDate(dayNumber: day)
        return "\(weekdays[CivilDate.weekday(dayNumber: day)]) \(date.day) \(months[date.month]) \(date.year)"
    }

    private func time(_ t: Double) -> String {
        Schedule.formatTime(sides[0].picture.clock.local(t).minuteOfDay)
    }

    private func dayAndTime(_ t: Double) -> String {
        let local = sides[0].picture.clock.local(t)
        return "\(Self.dayLabel(local.dayNumber)) \(Schedule.formatTime(local.minuteOfDay))"
    }

    // MARK: - Style

    /// Colours with shapes (never colour alone); dark-on-light that prints; a phone scrolls the
    /// timeline sideways instead of shrinking it.
    static let style = """
        :root{color-scheme:light;--alert:#c92a2a;--quiet:#1971c2;--summary:#e8590c;--silenced:#5f3dc4;--unseen:#868e96}
        body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1400px;padding:12px 16px;color:#212529;background:#fff}
        h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.3em;border-bottom:1px solid #dee2e6;margin-top:1.4em}h3{font-size:1.05em;margin:1em 0 .4em}h4{margin:0 0 .3em;font-size:.95em}
        .sub,.skipped,footer{color:#495057;font-size:.9em}.story{font-size:1.05em;margin:.3em 0}
        .legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:6px 16px;font-size:.9em}.legend li{display:flex;align-items:center;gap:4px}
        .scroll{overflow-x:auto;max-width:100%}svg.timeline{min-width:760px;width:100%;height:auto;display:block}
        text{font-size:10px;fill:#495057}text.day{font-weight:600;font-size:11px;fill:#212529}
        line.hour{stroke:#e9ecef}rect.row{fill:#f8f9fa;stroke:#e9ecef}
        .band rect{fill-opacity:.55}.band text{font-size:9px;font-weight:600;fill:#343a40}
        .f0 rect{fill:#b197fc}.f1 rect{fill:#74c0fc}.f2 rect{fill:#8ce99a}.f3 rect{fill:#ffd43b}.f4 rect{fill:#ffa8a8}.f5 rect{fill:#63e6be}
        .summary-time{stroke:#e8590c;stroke-width:2}.summary-line{stroke:#e8590c;stroke-width:1.5;stroke-dasharray:3 2}.delivered text{fill:#e8590c;font-weight:700}
        .mark{cursor:default;outline:none}.mark:hover,.mark:focus{filter:drop-shadow(0 0 2px #000)}
        g.alert>circle:not(.ring){fill:var(--alert)}g.quiet>circle:not(.ring){fill:#fff;stroke:var(--quiet);stroke-width:1.6}
        g.summary>rect{fill:var(--summary)}g.silenced>path{fill:var(--silenced)}
        g.dropped>path,g.withdrawn>path{stroke:var(--unseen);stroke-width:1.8;fill:none}g.background>circle:not(.ring){fill:var(--unseen)}
        circle.ring{fill:none;stroke:#000;stroke-width:1.6}.changed>:not(.ring){stroke:#000;stroke-width:1.2}
        .highlights{margin:.2em 0;padding-left:1.2em}.highlights time{font-variant-numeric:tabular-nums;color:#495057}
        .summaries{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:8px}
        .summaries article{border:1px solid #dee2e6;border-radius:6px;padding:6px 8px;font-size:.88em}
        .summaries ul{margin:0;padding-left:1em}.dropped{color:#868e96}
        .tables{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
        table{border-collapse:collapse;font-size:.88em;margin:.4em 0}caption{text-align:left;font-weight:600;padding:.3em 0}
        th,td{border-bottom:1px solid #e9ecef;padding:3px 8px;text-align:right}th:first-child{text-align:left}th[scope=row],td:last-child,.changes td,.changes th{text-align:left}
        td.zero{color:#adb5bd}.changes{width:100%}
        .sides{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));gap:16px}.sides svg.timeline{min-width:560px}
        footer{margin-top:2em}
        @media (max-width:600px){body{padding:8px}.sides{grid-template-columns:1fr}}
        @media print{body{max-width:none;padding:0;font-size:11px}.scroll{overflow:visible}svg.timeline{min-width:0}
        section.user{break-before:page}section.user:first-of-type{break-before:auto}.summaries article,tr{break-inside:avoid}}

        """
}

/// HTML text, escaped where it comes from input.
struct HTML {
    var out = ""

    mutating func raw(_ s: String) { out += s }

    mutating func text(_ s: String) {
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(ch)
            }
        }
    }
}
