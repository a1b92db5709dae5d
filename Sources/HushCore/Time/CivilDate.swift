/// Proleptic Gregorian calendar arithmetic on day numbers (days since 1970-01-01), free of
/// Foundation so the hot path stays cheap.
package struct CivilDate: Sendable, Hashable, Comparable {
    package var year: Int
    package var month: Int
    package var day: Int

    package init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Howard Hinnant's days_from_civil.
    package var dayNumber: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    package init(dayNumber z0: Int) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        self.init(year: yoe + era * 400 + (m <= 2 ? 1 : 0), month: m, day: d)
    }

    /// 1 = Sunday ... 7 = Saturday, as Lua's os.date.
    package var weekday: Int { CivilDate.weekday(dayNumber: dayNumber) }

    package static func weekday(dayNumber: Int) -> Int {
        // 1970-01-01 was a Thursday (5).
        ((dayNumber % 7 + 7) % 7 + 4) % 7 + 1
    }

    package static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    package static func < (a: CivilDate, b: CivilDate) -> Bool { a.dayNumber < b.dayNumber }
}
