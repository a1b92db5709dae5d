import HushCore
import XCTest

final class ScheduleTests: XCTestCase {
    let berlin = ZoneClock(identifier: "Europe/Berlin")!

    func t(_ s: String) -> Double { RFC3339.parse(s)! }

    func testDaysParsing() {
        XCTAssertEqual(Schedule.parseDays("mon-fri"), [2, 3, 4, 5, 6])
        XCTAssertEqual(Schedule.parseDays("sat,sun"), [7, 1])
        XCTAssertEqual(Schedule.parseDays("daily"), Set(1...7))
        XCTAssertEqual(Schedule.parseDays("fri-mon"), [6, 7, 1, 2])
        XCTAssertEqual(Schedule.parseDays("wed"), [4])
        XCTAssertNil(Schedule.parseDays("mon-funday"))
        XCTAssertNil(Schedule.parseDays("someday"))
        XCTAssertEqual(Schedule.parseTime("09:30"), 570)
        XCTAssertNil(Schedule.parseTime("9:30"))
        XCTAssertNil(Schedule.parseTime("24:00"))
    }

    func testWindowStartInclusiveEndExclusive() {
        let work = Schedule(days: [2, 3, 4, 5, 6], from: 9 * 60, to: 17 * 60 + 30)
        // 2026-11-23 is a Monday.
        XCTAssertFalse(work.contains(t("2026-11-23T08:59:59+01:00"), clock: berlin))
        XCTAssertTrue(work.contains(t("2026-11-23T09:00:00+01:00"), clock: berlin))
        XCTAssertTrue(work.contains(t("2026-11-23T17:29:59+01:00"), clock: berlin))
        XCTAssertFalse(work.contains(t("2026-11-23T17:30:00+01:00"), clock: berlin))
        XCTAssertFalse(work.contains(t("2026-11-22T10:00:00+01:00"), clock: berlin))  // Sunday
    }

    func testWrapPastMidnightUsesStartingDay() {
        // Friday 22:00 to 07:00: the days name the starting day.
        let sleep = Schedule(days: [6], from: 22 * 60, to: 7 * 60)
        XCTAssertTrue(sleep.contains(t("2026-11-27T23:00:00+01:00"), clock: berlin))  // Fri
        XCTAssertTrue(sleep.contains(t("2026-11-28T06:59:00+01:00"), clock: berlin))  // Sat morning
        XCTAssertFalse(sleep.contains(t("2026-11-28T07:00:00+01:00"), clock: berlin))
        // Fri morning: Thursday's window, not listed.
        XCTAssertFalse(sleep.contains(t("2026-11-27T06:00:00+01:00"), clock: berlin))
        XCTAssertFalse(sleep.contains(t("2026-11-28T23:00:00+01:00"), clock: berlin))  // Sat night
    }

    func testDSTGapMovesForwardAndRepeatUsesFirstOccurrence() {
        // 2026-03-29 02:00 → 03:00 in Berlin. A window from 02:30 starts at the transition.
        let start = berlin.instant(dayNumber: CivilDate(year: 2026, month: 3, day: 29).dayNumber, minuteOfDay: 150)
        XCTAssertEqual(start, t("2026-03-29T03:00:00+02:00"))
        // 2026-10-25 03:00 → 02:00: 02:30 happens twice; the first is at +02:00.
        let repeated = berlin.instant(dayNumber: CivilDate(year: 2026, month: 10, day: 25).dayNumber, minuteOfDay: 150)
        XCTAssertEqual(repeated, t("2026-10-25T02:30:00+02:00"))
        // A window ending at 02:30 on the fall-back night ends at the first 02:30.
        let night = Schedule(days: Set(1...7), from: 60, to: 150)
        XCTAssertTrue(night.contains(t("2026-10-25T02:29:00+02:00"), clock: berlin))
        XCTAssertFalse(night.contains(t("2026-10-25T02:10:00+01:00"), clock: berlin))
        // Spring gap: a window from 02:30 to 04:00 covers 03:00–04:00 local.
        let early = Schedule(days: Set(1...7), from: 150, to: 240)
        XCTAssertTrue(early.contains(t("2026-03-29T03:00:00+02:00"), clock: berlin))
        XCTAssertFalse(early.contains(t("2026-03-29T01:59:00+01:00"), clock: berlin))
    }

    /// `contains` reads one offset when no transition is near (`ZoneClock.steadyOffset`): at every
    /// window's edges, a second either side and mid-window, for a year of days in zones with and
    /// without DST (Lord Howe's is half an hour), it answers as the windows the clock gives.
    func testContainsAgreesWithTheClocksWindowsAllYear() {
        let schedules = [
            Schedule(days: [2, 3, 4, 5, 6], from: 9 * 60, to: 17 * 60 + 30),
            Schedule(days: Set(1...7), from: 23 * 60 + 30, to: 2 * 60 + 30),
            Schedule(days: [1], from: 2 * 60 + 15, to: 2 * 60 + 45),
            Schedule(days: [1, 7], from: 0, to: 0),
        ]
        var checked = 0
        for zone in ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"] {
            let clock = ZoneClock(identifier: zone)!
            let first = CivilDate(year: 2026, month: 1, day: 1).dayNumber
            for day in first..<first + 366 {
                for schedule in schedules {
                    guard let window = schedule.window(startingOn: day, clock: clock) else { continue }
                    for t in [
                        window.start - 1, window.start, (window.start + window.end) / 2, window.end - 1, window.end,
                    ] {
                        let today = clock.local(t).dayNumber
                        let expected = [today - 1, today].contains { d in
                            schedule.window(startingOn: d, clock: clock).map { $0.start <= t && t < $0.end } ?? false
                        }
                        XCTAssertEqual(schedule.contains(t, clock: clock), expected, "\(zone) \(t)")
                        checked += 1
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 10_000)
    }

    func testFirstDeclaredScheduledFocusWins() {
        let a = FocusSettings(name: "Work", schedules: [Schedule(days: Set(1...7), from: 9 * 60, to: 17 * 60)])
        let b = FocusSettings(name: "Meetings", schedules: [Schedule(days: Set(1...7), from: 10 * 60, to: 11 * 60)])
        let h = PipelineHarness(Policy(focuses: [a, b]))
        XCTAssertEqual(h.decide(note(date: "2026-11-23T10:30:00+01:00")).focus, "Work")
        XCTAssertNil(h.decide(note(date: "2026-11-23T18:30:00+01:00")).focus)
        let h2 = PipelineHarness(Policy(focuses: [b, a]))
        XCTAssertEqual(h2.decide(note(date: "2026-11-23T10:30:00+01:00")).focus, "Meetings")
    }

    func testContextTimeZoneOverridesPolicy() {
        let a = FocusSettings(name: "Work", schedules: [Schedule(days: Set(1...7), from: 9 * 60, to: 17 * 60)])
        let h = PipelineHarness(
            Policy(timezone: "Europe/Berlin", focuses: [a]), context: context("{\"timezone\":\"America/New_York\"}"))
        // 10:00 in Berlin is 04:00 in New York.
        XCTAssertNil(h.decide(note(date: "2026-11-23T10:00:00+01:00")).focus)
        XCTAssertEqual(h.decide(note(date: "2026-11-23T10:00:00-05:00")).focus, "Work")
    }
}
