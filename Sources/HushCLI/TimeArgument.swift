import ArgumentParser
import Foundation
import Hush
import HushCore

/// A time given on the command line as RFC 3339 (`--now`, `simulate --until`). A value that is not
/// one is refused by the argument parser, with the option's name and help.
struct RFC3339Time: ExpressibleByArgument {
    /// UNIX seconds.
    let seconds: Double

    init?(argument: String) {
        guard let seconds = RFC3339.parse(argument) else { return nil }
        self.seconds = seconds
    }
}

/// A time given on the command line as RFC 3339, `HH:MM` (the next such local time), or a duration
/// from now (`90m`, `2h`, `1h30m`): `focus --until`. Parsed with the arguments, so a value that is
/// none of these is refused with the option's name; resolved once the current time and the
/// policy's clock are known.
enum TimeArgument: ExpressibleByArgument {
    case instant(Double)
    case localTime(minuteOfDay: Int)
    case fromNow(seconds: Double)

    init?(argument: String) {
        if let t = RFC3339.parse(argument) {
            self = .instant(t)
        } else if let minutes = Schedule.parseTime(argument) {
            self = .localTime(minuteOfDay: minutes)
        } else if let seconds = Self.duration(argument) {
            self = .fromNow(seconds: seconds)
        } else {
            return nil
        }
    }

    func resolved(now: Double, clock: ZoneClock) -> Double {
        switch self {
        case .instant(let t):
            return t
        case .localTime(let minutes):
            let today = clock.local(now).dayNumber
            let t = clock.instant(dayNumber: today, minuteOfDay: minutes)
            return t > now ? t : clock.instant(dayNumber: today + 1, minuteOfDay: minutes)
        case .fromNow(let seconds):
            return now + seconds
        }
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

/// `--user` and `--now`: whose device, and what time it is there. Shared by the commands that read
/// or change one user's state at a moment (focus on/off, status, suggest).
struct DeviceOptions: ParsableArguments {
    @Option(help: "Whose device.") var user = "default"
    @Option(help: ArgumentHelp("The current time (RFC 3339; default: the clock).", valueName: "time")) var now:
        RFC3339Time?

    /// `--now`, else the clock.
    var currentTime: Double { now?.seconds ?? Date().timeIntervalSince1970 }
}
