import HushCore
import Lua

/// One recorded declaration, as the prelude left it.
struct Declaration {
    var kind: String
    var name: String?
    var body: LuaValue?
    var file: String
    var line: Int
}

/// Turns recorded declarations into a `Policy`, reporting every problem with its place.
struct PolicyBuilder {
    let problems: ProblemList
    var policy = Policy()
    var ruleFunctions: [LuaFunctionRef] = []
    private var timezoneLine: (String, Int)?
    private var focusLines: [String: (String, Int)] = [:]
    private var summaryDeclared: (String, Int)?
    private var announceDeclared: (String, Int)?

    init(problems: ProblemList) { self.problems = problems }

    static let appKeys = [
        "authorization", "critical_alerts", "time_sensitive", "delivery", "sounds", "badges", "banners",
        "lock_screen", "previews", "grouping", "summary", "announce", "name",
    ]
    static let categoryKeys = ["summary_format", "hidden_preview"]
    static let focusKeys = [
        "schedule", "people", "apps", "calls", "repeated_calls", "time_sensitive", "silence", "mode", "filters",
    ]
    static let peopleKeys = ["favorites", "suggested"]
    static let scheduleKeys = ["days", "from", "to"]
    static let contactKeys = ["handle", "name", "favorite", "aliases"]
    static let announceKeys = ["headphones", "carplay"]
    static let summaryKeys = ["at"]

    mutating func add(_ d: Declaration) {
        switch d.kind {
        case "timezone": timezone(d)
        case "app": app(d)
        case "category": category(d)
        case "summary": summary(d)
        case "contact": contact(d)
        case "focus": focus(d)
        case "announce": announce(d)
        case "rule": rule(d)
        default: problems.add(d.file, d.line, "unknown declaration \(d.kind)")
        }
    }

    private func body(_ d: Declaration, what: String) -> SettingsReader? {
        guard let table = d.body?.tableValue else {
            problems.add(d.file, d.line, "\(what) needs a table of settings: \(what) { ... }")
            return nil
        }
        return SettingsReader(table: table, what: what, file: d.file, line: d.line, problems: problems)
    }

    private mutating func timezone(_ d: Declaration) {
        guard let name = d.name else { return }
        if let (file, line) = timezoneLine {
            problems.add(d.file, d.line, "timezone is declared twice (first at \(file):\(line))")
        }
        timezoneLine = (d.file, d.line)
        guard ZoneClock.isKnown(name) else {
            let hint =
                Spelling.nearest(to: name, in: ZoneClock.knownIdentifiers).map { "did you mean \"\($0)\"?" }
                ?? "use an IANA name such as \"Europe/Berlin\""
            problems.add(d.file, d.line, "timezone: unknown time zone \"\(name)\" (\(hint))")
            return
        }
        policy.timezone = name
    }

    private mutating func app(_ d: Declaration) {
        guard let bundle = d.name else { return }
        let what = "app \"\(bundle)\""
        guard let r = body(d, what: what) else { return }
        r.checkKeys(Self.appKeys)
        var s = AppSettings()
        s.authorization = r.choice("authorization", AppSettings.Authorization.self)
        s.criticalAlerts = r.bool("critical_alerts")
        s.timeSensitive = r.bool("time_sensitive")
        s.delivery = r.choice("delivery", AppSettings.DeliveryStyle.self)
        s.sounds = r.bool("sounds")
        s.badges = r.bool("badges")
        s.banners = r.bool("banners")
        s.lockScreen = r.bool("lock_screen")
        s.previews = r.choice("previews", AppSettings.Previews.self)
        s.grouping = r.choice("grouping", AppSettings.Grouping.self)
        s.summary = r.bool("summary")
        s.announce = r.bool("announce")
        s.name = r.string("name")
        if bundle == "*" {
            policy.appDefaults = s.overriding(policy.appDefaults)
        } else {
            policy.apps[bundle] = s.overriding(policy.apps[bundle] ?? AppSettings())
        }
    }

    private mutating func category(_ d: Declaration) {
        guard let name = d.name else { return }
        let what = "category \"\(name)\""
        guard let r = body(d, what: what) else { return }
        r.checkKeys(Self.categoryKeys)
        var c = policy.categories[name] ?? CategorySettings()
        if let f = pluralFormat(r, "summary_format") { c.summaryFormat = f }
        if let f = pluralFormat(r, "hidden_preview") { c.hiddenPreview = f }
        policy.categories[name] = c
    }

    private func pluralFormat(_ r: SettingsReader, _ key: String) -> PluralFormat? {
        guard let value = r[key] else { return nil }
        if let s = value.stringValue { return PluralFormat(other: s) }
        if let t = value.tableValue {
            let inner = SettingsReader(
                table: t, what: "\(r.what) \(key)", file: r.file, line: r.lineOf(key), problems: problems)
            inner.checkKeys(["one", "other"])
            let one = inner.string("one")
            guard let other = inner.string("other") ?? one else {
                r.fail(key, "'\(key)' needs at least other = \"…\" (and optionally one = \"…\")")
                return nil
            }
            return PluralFormat(one: one, other: other)
        }
        r.fail(key, "'\(key)' must be a string or { one = \"…\", other = \"…\" }, got \(r.describe(value))")
        return nil
    }

    private mutating func summary(_ d: Declaration) {
        guard let r = body(d, what: "summary") else { return }
        if let (file, line) = summaryDeclared {
            problems.add(d.file, d.line, "summary is declared twice (first at \(file):\(line))")
        }
        summaryDeclared = (d.file, d.line)
        r.checkKeys(Self.summaryKeys)
        guard let times = r.strings("at") else {
            if r["at"] == nil { r.fail("at", "summary needs at = { \"08:00\", \"18:00\" }") }
            return
        }
        var minutes: [Int] = []
        for text in times {
            guard let m = Schedule.parseTime(text) else {
                r.fail("at", "'at' has \"\(text)\", which is not a 24-hour time HH:MM such as \"18:00\"")
                continue
            }
            if !minutes.contains(m) { minutes.append(m) }
        }
        policy.summaryTimes = minutes.sorted()
    }

    private mutating func contact(_ d: Declaration) {
        guard let r = body(d, what: "contact") else { return }
        r.checkKeys(Self.contactKeys)
        guard let handle = r.string("handle"), !handle.isEmpty else {
            if r["handle"] == nil {
                problems.add(d.file, d.line, "contact needs a handle = \"…\" (e-mail, phone number or app id)")
            }
            return
        }
        policy.contacts.append(
            Contact(
                handle: handle, name: r.string("name"), favorite: r.bool("favorite") ?? false,
                aliases: r.strings("aliases") ?? []))
    }

    private mutating func announce(_ d: Declaration) {
        guard let r = body(d, what: "announce") else { return }
        if let (file, line) = announceDeclared {
            problems.add(d.file, d.line, "announce is declared twice (first at \(file):\(line))")
        }
        announceDeclared = (d.file, d.line)
        r.checkKeys(Self.announceKeys)
        policy.announce = Policy.Announce(
            headphones: r.bool("headphones") ?? false, carplay: r.bool("carplay") ?? false)
    }

    private mutating func rule(_ d: Declaration) {
        guard let name = d.name, case .function(let ref) = d.body else { return }
        policy.rules.append(Policy.RuleInfo(name: name, file: d.file, line: d.line))
        ruleFunctions.append(ref)
    }

    private mutating func focus(_ d: Declaration) {
        guard let name = d.name else { return }
        let what = "focus \"\(name)\""
        if let (file, line) = focusLines[name.lowercased()] {
            problems.add(d.file, d.line, "\(what) is declared twice (first at \(file):\(line))")
            return
        }
        focusLines[name.lowercased()] = (d.file, d.line)
        guard let r = body(d, what: what) else { return }
        r.checkKeys(Self.focusKeys)
        var f = FocusSettings(name: name)
        if let value = r["schedule"] { f.schedules = schedules(value, r) }
        if let value = r["people"] { people(value, r, into: &f) }
        if let apps = r.strings("apps") { f.apps = apps }
        f.calls = r.choice("calls", FocusSettings.Calls.self) ?? f.calls
        f.repeatedCalls = r.bool("repeated_calls") ?? f.repeatedCalls
        f.timeSensitive = r.bool("time_sensitive") ?? f.timeSensitive
        f.silence = r.choice("silence", FocusSettings.Silence.self) ?? f.silence
        f.mode = r.choice("mode", FocusSettings.Mode.self) ?? f.mode
        if let value = r["filters"] {
            if let table = value.tableValue, table.array.isEmpty {
                for entry in table.entries {
                    guard let app = entry.key.stringValue else {
                        r.fail("filters", "'filters' keys must be bundle ids"); continue
                    }
                    if let criteria = r.strings("filters", value: entry.value) { f.filters[app] = criteria }
                }
            } else {
                r.fail(
                    "filters",
                    "'filters' must be a table { [\"bundle.id\"] = { \"criteria\", … } }, got \(r.describe(value))")
            }
        }
        policy.focuses.append(f)
    }

    private func schedules(_ value: LuaValue, _ r: SettingsReader) -> [Schedule] {
        guard let table = value.tableValue else {
            r.fail(
                "schedule",
                "'schedule' must be { days = \"mon-fri\", from = \"09:00\", to = \"17:30\" } or a list of these, got \(r.describe(value))"
            )
            return []
        }
        let list: [LuaTable] =
            table.entries.isEmpty && !table.array.isEmpty
            ? table.array.compactMap { $0.tableValue } : [table]
        if list.count != (table.entries.isEmpty && !table.array.isEmpty ? table.array.count : 1) {
            r.fail("schedule", "'schedule' lists must contain only schedule tables")
        }
        var out: [Schedule] = []
        for item in list {
            let s = SettingsReader(
                table: item, what: "\(r.what) schedule", file: r.file, line: r.lineOf("schedule"), problems: problems)
            s.checkKeys(Self.scheduleKeys)
            var days: Set<Int>? = Set(1...7)
            if let value = s["days"] {
                if let text = value.stringValue {
                    days = Schedule.parseDays(text)
                    if days == nil {
                        s.fail(
                            "days",
                            "'days' has \"\(text)\"; use \"mon-fri\", \"sat,sun\", \"daily\" or a list such as { \"mon\", \"wed\" }"
                        )
                    }
                } else if let names = s.strings("days") {
                    var set = Set<Int>()
                    for name in names {
                        if let d = Schedule.parseDays(name) {
                            set.formUnion(d)
                        } else {
                            s.fail(
                                "days",
                                "'days' has \"\(name)\", which is not a day (mon, tue, wed, thu, fri, sat, sun)\(Spelling.hint(for: name, in: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]))"
                            )
                        }
                    }
                    days = set.isEmpty ? nil : set
                } else {
                    days = nil
                }
            }
            let from = time(s, "from")
            let to = time(s, "to")
            if let days, let from, let to { out.append(Schedule(days: days, from: from, to: to)) }
        }
        return out
    }

    private func time(_ s: SettingsReader, _ key: String) -> Int? {
        guard let value = s[key] else {
            s.fail(key, "'\(key)' is required: \(key) = \"HH:MM\"")
            return nil
        }
        guard let text = value.stringValue, let minutes = Schedule.parseTime(text) else {
            s.fail(key, "'\(key)' must be a 24-hour time \"HH:MM\" such as \"09:00\", got \(s.describe(value))")
            return nil
        }
        return minutes
    }

    private func people(_ value: LuaValue, _ r: SettingsReader, into f: inout FocusSettings) {
        guard let table = value.tableValue else {
            if let s = value.stringValue { f.people = [s]; return }
            r.fail("people", "'people' must be a list of handles, optionally with favorites = true and suggested = N")
            return
        }
        let p = SettingsReader(
            table: table, what: "\(r.what) people", file: r.file, line: r.lineOf("people"), problems: problems)
        p.checkKeys(Self.peopleKeys, allowArray: true)
        for element in table.array {
            if let s = element.stringValue {
                f.people.append(s)
            } else {
                p.fail("people", "'people' must list handles as strings, found \(p.describe(element))")
            }
        }
        f.favorites = p.bool("favorites") ?? false
        f.suggested = p.integer("suggested", range: 0...100) ?? 0
    }
}
