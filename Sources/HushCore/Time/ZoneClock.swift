import Foundation
import Synchronization

/// Wall-clock arithmetic in one IANA time zone, DST-correct. Offsets are cached by span between
/// transitions so the hot path rarely asks Foundation: the spans found so far are published as an
/// immutable table that readers on any thread search without a lock (a miss takes the lock, asks
/// Foundation, and publishes a new table).
package final class ZoneClock: Sendable {
    package let identifier: String
    private let zone: TimeZone
    /// The current table; every table ever published stays alive until `deinit` (a reader may
    /// still be searching an older one), so readers need no reference counting.
    private let published = Atomic<Unmanaged<SpanTable>?>(nil)
    private let writer = Mutex<[Unmanaged<SpanTable>]>([])

    fileprivate struct Span: Sendable {
        var start: Double
        var end: Double
        var offset: Int
    }

    fileprivate final class SpanTable: Sendable {
        /// Sorted by start, not overlapping.
        let spans: [Span]
        init(_ spans: [Span]) { self.spans = spans }

        func find(_ t: Double) -> Span? {
            spans.withUnsafeBufferPointer { b in
                var low = 0, high = b.count
                while low < high {
                    let mid = (low + high) >> 1
                    if b[mid].end <= t { low = mid + 1 } else { high = mid }
                }
                return low < b.count && b[low].start <= t ? b[low] : nil
            }
        }
    }

    /// At most this many spans are cached (a few years of transitions).
    private static let maximumSpans = 64

    package init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.identifier = identifier
        self.zone = zone
    }

    deinit {
        writer.withLock { tables in
            for table in tables { table.release() }
        }
    }

    /// The machine's zone.
    package static var current: ZoneClock {
        ZoneClock(identifier: TimeZone.current.identifier) ?? ZoneClock(identifier: "UTC")!
    }

    package static func isKnown(_ identifier: String) -> Bool { TimeZone(identifier: identifier) != nil }

    /// Every IANA name the machine knows, for "did you mean" hints.
    package static var knownIdentifiers: [String] { TimeZone.knownTimeZoneIdentifiers }

    private func cachedSpan(_ t: Double) -> Span? {
        guard let table = published.load(ordering: .acquiring) else { return nil }
        return table._withUnsafeGuaranteedRef { $0.find(t) }
    }

    /// Seconds east of UTC at the instant `t` (UNIX seconds).
    package func offset(at t: Double) -> Int {
        if let span = cachedSpan(t) { return span.offset }
        return span(at: t).offset
    }

    /// The span between transitions that holds `t`, from Foundation, cached.
    private func span(at t: Double) -> Span {
        let date = Date(timeIntervalSince1970: t)
        let offset = zone.secondsFromGMT(for: date)
        guard t.isFinite else { return Span(start: t, end: t, offset: offset) }
        let end = zone.nextDaylightSavingTimeTransition(after: date)?.timeIntervalSince1970 ?? t + 366 * 86400
        // The span's start: the last transition at or before t (within a year), else a year back.
        var start = t - 366 * 86400
        var probe = Date(timeIntervalSince1970: start)
        for _ in 0..<8 {
            guard let next = zone.nextDaylightSavingTimeTransition(after: probe), next.timeIntervalSince1970 <= t else {
                break
            }
            start = next.timeIntervalSince1970
            probe = next
        }
        let span = Span(start: start, end: max(end, t.nextUp), offset: offset)
        // Publish only a span Foundation agrees with at both ends (a zone whose rules change
        // without a transition Foundation reports is then simply not cached there).
        guard zone.secondsFromGMT(for: Date(timeIntervalSince1970: span.start)) == offset else { return span }
        writer.withLock { tables in
            let current = tables.last?._withUnsafeGuaranteedRef { $0.spans } ?? []
            guard current.count < Self.maximumSpans else { return }
            var spans = current.filter { $0.end <= span.start || $0.start >= span.end }
            spans.append(span)
            spans.sort { $0.start < $1.start }
            let table = Unmanaged.passRetained(SpanTable(spans))
            tables.append(table)
            published.store(table, ordering: .releasing)
        }
        return span
    }

    /// The offset in force at every instant within `margin` seconds of `t`, when one span cached
    /// so far holds them all (nearly always): around `t`, `local(_:offset:)` and
    /// `instant(dayNumber:minuteOfDay:offset:)` then give what `local` and `instant` give, without
    /// a search each.
    package func steadyOffset(around t: Double, margin: Double) -> Int? {
        guard let span = cachedSpan(t), span.start <= t - margin, t + margin < span.end else { return nil }
        return span.offset
    }

    /// Local wall-clock reading of an instant.
    package func local(_ t: Double) -> LocalTime { Self.local(t, offset: offset(at: t)) }

    /// The wall-clock reading of `t` where `offset` is in force.
    @inline(__always)
    package static func local(_ t: Double, offset: Int) -> LocalTime {
        let local = Int(t.rounded(.down)) + offset
        let day = local >= 0 ? local / 86400 : (local - 86399) / 86400
        return LocalTime(dayNumber: day, secondOfDay: local - day * 86400, offset: offset)
    }

    /// The instant the wall clock reads `minuteOfDay` on `dayNumber` where `offset` is in force.
    @inline(__always)
    package static func instant(dayNumber: Int, minuteOfDay: Int, offset: Int) -> Double {
        Double(dayNumber * 86400 + minuteOfDay * 60) - Double(offset)
    }

    /// The instant the wall clock reads `minuteOfDay` on `dayNumber`. A time skipped by a DST gap
    /// moves forward to the first valid instant (the transition); a repeated one uses its first
    /// occurrence.
    package func instant(dayNumber: Int, minuteOfDay: Int) -> Double {
        let wall = Double(dayNumber * 86400 + minuteOfDay * 60)
        // No transition within a day and 14 hours either side (nearly always): one offset.
        if let span = cachedSpan(wall - 86400 - 14 * 3600), wall + 86400 + 14 * 3600 < span.end {
            return Self.instant(dayNumber: dayNumber, minuteOfDay: minuteOfDay, offset: span.offset)
        }
        let before = offset(at: wall - 86400 - 14 * 3600)
        let after = offset(at: wall + 86400 + 14 * 3600)
        var candidates: [Double] = []
        for o in Set([before, after, offset(at: wall - Double(before))]) {
            let t = wall - Double(o)
            if offset(at: t) == o { candidates.append(t) }
        }
        if let first = candidates.min() { return first }
        // In a gap: find the transition between the two readings by bisection.
        var low = wall - Double(max(before, after))  // still before the transition
        var high = wall - Double(min(before, after))  // already after it
        low = low.rounded(.down)
        high = high.rounded(.up)
        while high - low > 1 {
            let mid = ((low + high) / 2).rounded(.down)
            if offset(at: mid) == before { low = mid } else { high = mid }
        }
        return high
    }

    /// RFC 3339 in this zone.
    package func format(_ t: Double) -> String { RFC3339.format(t, offset: offset(at: t)) }
}

/// A wall-clock reading: local day number, second of that day, and the UTC offset in force.
package struct LocalTime: Sendable, Hashable {
    package var dayNumber: Int
    package var secondOfDay: Int
    package var offset: Int

    package var date: CivilDate { CivilDate(dayNumber: dayNumber) }
    package var minuteOfDay: Int { secondOfDay / 60 }
    package var hour: Int { secondOfDay / 3600 }
    package var minute: Int { secondOfDay / 60 % 60 }
    /// 1 = Sunday ... 7 = Saturday.
    package var weekday: Int { CivilDate.weekday(dayNumber: dayNumber) }
}
