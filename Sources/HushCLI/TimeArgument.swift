import ArgumentParser
import Hush

/// Times given on the command line: RFC 3339, `HH:MM` (the next such local time), or a duration
/// from now (`90m`, `2h`, `1h30m`).
enum TimeArgument {
    static func parse(_ text: String, now: Double, clock: ZoneClock, option: String) throws -> Double {
        if let t = RFC3339.parse(text) { return t }
        if let minutes = Schedule.parseTime(text) {
            let today = clock.local(now).dayNumber
            let t = clock.instant(dayNumber: today, minuteOfDay: minutes)
            return t > now ? t : clock.instant(dayNumber: today + 1, minuteOfDay: minutes)
        }
        if let seconds = duration(text) { return now + seconds }
        throw ValidationError("\(option): \"\(text)\" is not a time: use RFC 3339 (2026-11-23T18:00:00+01:00), HH:MM, or a duration such as 90m or 2h")
    }

    static func duration(_ text: String) -> Double? {
        var total = 0.0
        var number = ""
        var sawUnit = false
        for c in text.lowercased() {
            if c.isNumber { number.append(c); continue }
            guard let n = Double(number) else { return nil }
            switch c {
            case "d": total += n * 86400
            case "h": total += n * 3600
            case "m": total += n * 60
            case "s": total += n
            default: return nil
            }
            number = ""
            sawUnit = true
        }
        return sawUnit && number.isEmpty ? total : nil
    }
}
