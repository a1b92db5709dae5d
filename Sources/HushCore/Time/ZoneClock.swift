import Foundation
import Synchronization

/// Wall-clock arithmetic in one IANA time zone, DST-correct. Offsets are cached by span between
/// transitions so the hot path rarely asks Foundation.
public final class ZoneClock: Sendable {
    public let identifier: String
    private let zone: TimeZone
    private let spans = Mutex<[Span]>([])

    private struct Span {
        var start: Double
        var end: Double
        var offset: Int
    }

    public init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.identifier = identifier
        self.zone = zone
    }

    /// The machine's zone.
    public static var current: ZoneClock {
        ZoneClock(identifier: TimeZone.current.identifier) ?? ZoneClock(identifier: "UTC")!
    }

    public static func isKnown(_ identifier: String) -> Bool { TimeZone(identifier: identifier) != nil }

    /// Every IANA name the machine knows, for "did you mean" hints.
    public static var knownIdentifiers: [String] { TimeZone.knownTimeZoneIdentifiers }

    /// Seconds east of UTC at the instant `t` (UNIX seconds).
    public func offset(at t: Double) -> Int {
        if let hit = spans.withLock({ spans in spans.first { $0.start <= t && t < $0.end }?.offset }) { return hit }
        let date = Date(timeIntervalSince1970: t)
        let offset = zone.secondsFromGMT(for: date)
        let next = zone.nextDaylightSavingTimeTransition(after: date)?.timeIntervalSince1970 ?? t + 366 * 86400
        // Look back a day for the span's start, so nearby earlier instants hit the cache too.
        var start = t
        if zone.secondsFromGMT(for: date.addingTimeInterval(-86400)) == offset,
           let previous = zone.nextDaylightSavingTimeTransition(after: date.addingTimeInterval(-86400)),
           previous.timeIntervalSince1970 > t {
            start = t - 86400
        }
        spans.withLock { spans in
            if spans.count >= 8 { spans.removeFirst() }
            spans.append(Span(start: start, end: next, offset: offset))
        }
        return offset
    }

    /// Local wall-clock reading of an instant.
    public func local(_ t: Double) -> LocalTime {
        let offset = offset(at: t)
        let local = Int(t.rounded(.down)) + offset
        let day = local >= 0 ? local / 86400 : (local - 86399) / 86400
        return LocalTime(dayNumber: day, secondOfDay: local - day * 86400, offset: offset)
    }

    /// The instant the wall clock reads `minuteOfDay` on `dayNumber`. A time skipped by a DST gap
    /// moves forward to the first valid instant (the transition); a repeated one uses its first
    /// occurrence.
    public func instant(dayNumber: Int, minuteOfDay: Int) -> Double {
        let wall = Double(dayNumber * 86400 + minuteOfDay * 60)
        let before = offset(at: wall - 86400 - 14 * 3600)
        let after = offset(at: wall + 86400 + 14 * 3600)
        var candidates: [Double] = []
        for o in Set([before, after, offset(at: wall - Double(before))]) {
            let t = wall - Double(o)
            if offset(at: t) == o { candidates.append(t) }
        }
        if let first = candidates.min() { return first }
        // In a gap: find the transition between the two readings by bisection.
        var low = wall - Double(max(before, after)) // still before the transition
        var high = wall - Double(min(before, after)) // already after it
        low = low.rounded(.down)
        high = high.rounded(.up)
        while high - low > 1 {
            let mid = ((low + high) / 2).rounded(.down)
            if offset(at: mid) == before { low = mid } else { high = mid }
        }
        return high
    }

    /// RFC 3339 in this zone.
    public func format(_ t: Double) -> String { RFC3339.format(t, offset: offset(at: t)) }
}

/// A wall-clock reading: local day number, second of that day, and the UTC offset in force.
public struct LocalTime: Sendable, Hashable {
    public var dayNumber: Int
    public var secondOfDay: Int
    public var offset: Int

    public var date: CivilDate { CivilDate(dayNumber: dayNumber) }
    public var minuteOfDay: Int { secondOfDay / 60 }
    public var hour: Int { secondOfDay / 3600 }
    public var minute: Int { secondOfDay / 60 % 60 }
    /// 1 = Sunday ... 7 = Saturday.
    public var weekday: Int { CivilDate.weekday(dayNumber: dayNumber) }
}
