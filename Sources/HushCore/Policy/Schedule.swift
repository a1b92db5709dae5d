/// When a focus turns itself on: days of the week and a local time window. `to` at or before
/// `from` wraps past midnight, the days naming the starting day.
package struct Schedule: Sendable, Hashable {
    /// Weekdays the window starts on, 1 = Sunday ... 7 = Saturday.
    package var days: Set<Int> {
        didSet { dayMask = Self.mask(days) }
    }
    package var from: Int
    package var to: Int
    /// `days` as bits (bit d for weekday d), for the hot path.
    private var dayMask: UInt16

    package init(days: Set<Int>, from: Int, to: Int) {
        self.days = days
        self.from = from
        self.to = to
        self.dayMask = Self.mask(days)
    }

    private static func mask(_ days: Set<Int>) -> UInt16 {
        days.reduce(0) { (1...7).contains($1) ? $0 | UInt16(1) << UInt16($1) : $0 }
    }

    package var wrapsPastMidnight: Bool { to <= from }

    /// The window that starts on `dayNumber`, as instants, when the days include that day.
    package func window(startingOn dayNumber: Int, clock: ZoneClock) -> (start: Double, end: Double)? {
        window(startingOn: dayNumber) { clock.instant(dayNumber: $0, minuteOfDay: $1) }
    }

    /// `instant(dayNumber, minuteOfDay)`: the clock's.
    @inline(__always)
    private func window(startingOn dayNumber: Int, instant: (Int, Int) -> Double) -> (start: Double, end: Double)? {
        guard dayMask & (UInt16(1) << UInt16(CivilDate.weekday(dayNumber: dayNumber))) != 0 else { return nil }
        let start = instant(dayNumber, from)
        let end = instant(wrapsPastMidnight ? dayNumber + 1 : dayNumber, to)
        return (start, end)
    }

    /// How far from `t` the clock's readings for `contains` reach: its windows' walls lie within
    /// two days of `t`'s local time, and `ZoneClock.instant` reads the offset a day and 14 hours
    /// either side of a wall (with an offset under a day, five days hold it all).
    private static let steadyReach = 5.0 * 86400

    /// Start inclusive, end exclusive.
    package func contains(_ t: Double, clock: ZoneClock) -> Bool {
        // Nearly always no transition is near: one offset, and the clock's arithmetic with it.
        if let offset = clock.steadyOffset(around: t, margin: Self.steadyReach), abs(offset) < 86400 {
            let today = ZoneClock.local(t, offset: offset).dayNumber
            return contains(t, today: today) { ZoneClock.instant(dayNumber: $0, minuteOfDay: $1, offset: offset) }
        }
        let today = clock.local(t).dayNumber
        return contains(t, today: today) { clock.instant(dayNumber: $0, minuteOfDay: $1) }
    }

    @inline(__always)
    private func contains(_ t: Double, today: Int, instant: (Int, Int) -> Double) -> Bool {
        for day in [today - 1, today] {
            if let window = window(startingOn: day, instant: instant), window.start <= t, t < window.end { return true }
        }
        return false
    }

    /// Parses `HH:MM` (24-hour) into minutes after midnight.
    package static func parseTime(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
            let h = Int(parts[0]), let m = Int(parts[1]), (0...23).contains(h), (0...59).contains(m)
        else { return nil }
        return h * 60 + m
    }

    static let dayNames = ["sun": 1, "mon": 2, "tue": 3, "wed": 4, "thu": 5, "fri": 6, "sat": 7]

    /// `"mon-fri"`, `"sat,sun"`, `"daily"`, `"weekdays"`, `"weekends"`, or one day name; ranges wrap
    /// (`"fri-mon"`). Returns nil for anything else.
    package static func parseDays(_ text: String) -> Set<Int>? {
        let lowered = String(text.lowercased().filter { $0 != " " })
        switch lowered {
        case "daily", "everyday", "all": return Set(1...7)
        case "weekdays": return Set(2...6)
        case "weekends": return [1, 7]
        default: break
        }
        var days = Set<Int>()
        for part in lowered.split(separator: ",", omittingEmptySubsequences: false) {
            let ends = part.split(separator: "-", omittingEmptySubsequences: false)
            if ends.count == 1, let d = dayNames[String(ends[0].prefix(3))],
                dayNames.keys.contains(String(ends[0])) || ends[0].count > 3 && fullName(String(ends[0])) == d
            {
                days.insert(d)
            } else if ends.count == 2, let a = dayNames[String(ends[0])], let b = dayNames[String(ends[1])] {
                var d = a
                while true {
                    days.insert(d)
                    if d == b { break }
                    d = d % 7 + 1
                }
            } else {
                return nil
            }
        }
        return days.isEmpty ? nil : days
    }

    private static func fullName(_ text: String) -> Int? {
        let full = ["sunday": 1, "monday": 2, "tuesday": 3, "wednesday": 4, "thursday": 5, "friday": 6, "saturday": 7]
        return full[text]
    }
}

extension Schedule {
    /// `hh:mm` for a minute of the day.
    package static func formatTime(_ minutes: Int) -> String {
        let h = minutes / 60, m = minutes % 60
        return (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
    }
}
