package import HushCore
package import HushJSON
import HushState

/// What Hush does over time rather than in answer to a notification: a scheduled summary
/// delivered at its time, or the focus in force changing. `hush simulate --json` prints these, and
/// a long-running Hush emits them as they fall due.
public enum HushEvent: Sendable, Hashable {
    /// A scheduled summary delivered at its time.
    case summary(SummaryDelivery)
    /// The focus in force changed (a schedule started or ended, a focus set by hand expired).
    case focus(FocusChange)

    /// Whose device.
    public var user: String {
        switch self {
        case .summary(let s): s.user
        case .focus(let f): f.user
        }
    }

    /// When it happened, in UNIX seconds.
    public var at: Double {
        switch self {
        case .summary(let s): s.at
        case .focus(let f): f.at
        }
    }

    /// The event as one line of JSON (docs/reference.md, "Summary event" and "Focus event"),
    /// times in the IANA zone `timeZone` (an unknown or absent zone: the machine's).
    public func jsonString(timeZone: String? = nil) -> String {
        let clock = timeZone.flatMap(ZoneClock.init(identifier:)) ?? ZoneClock.current
        var w = JSONWriter()
        write(to: &w, clock: clock)
        return w.string
    }

    /// The event as one line of JSON, times in `clock`'s zone.
    package func write(to w: inout JSONWriter, clock: ZoneClock) {
        switch self {
        case .summary(let s):
            w.raw("{\"event\":\"summary\",\"user\":"); w.writeString(s.user)
            w.raw(",\"at\":"); w.writeString(clock.format(s.at))
            w.raw(",\"notifications\":[")
            for (i, n) in s.notifications.enumerated() {
                if i > 0 { w.raw(",") }
                w.raw("{\"id\":"); w.writeString(n.id)
                w.raw(",\"app\":"); w.writeString(n.app)
                w.raw(",\"title\":"); Self.writeOptional(n.title, to: &w)
                w.raw(",\"body\":"); Self.writeOptional(n.body, to: &w)
                w.raw(",\"group\":"); Self.writeOptional(n.group, to: &w)
                w.raw(",\"placeholder\":"); Self.writeOptional(n.placeholder, to: &w)
                w.raw(",\"relevance\":"); if let r = n.relevance { w.writeNumber(r) } else { w.writeNull() }
                w.raw(",\"media\":"); w.writeBool(n.hasMedia)
                w.raw(",\"date\":"); w.writeString(clock.format(n.date))
                w.raw("}")
            }
            w.raw("],\"dropped\":[")
            for (i, n) in s.dropped.enumerated() {
                if i > 0 { w.raw(",") }
                w.writeString(n.id)
            }
            w.raw("]}")
        case .focus(let f):
            w.raw("{\"event\":\"focus\",\"user\":"); w.writeString(f.user)
            w.raw(",\"at\":"); w.writeString(clock.format(f.at))
            w.raw(",\"focus\":"); Self.writeOptional(f.focus, to: &w)
            w.raw(",\"reason\":"); w.writeString(f.reason)
            w.raw("}")
        }
    }

    private static func writeOptional(_ s: String?, to w: inout JSONWriter) {
        if let s { w.writeString(s) } else { w.writeNull() }
    }
}

/// A scheduled summary as it is delivered: its notifications in summary order (relevance, then
/// media, then newest first), and those that expired before it, dropped.
public struct SummaryDelivery: Sendable, Hashable {
    /// One notification of the summary as it is shown: with previews hidden, no title or body,
    /// and the placeholder in their place.
    public struct Item: Sendable, Hashable {
        /// The notification's id.
        public var id: String
        /// The app's bundle id.
        public var app: String
        /// Its title; nil when previews are hidden.
        public var title: String?
        /// Its body; nil when previews are hidden.
        public var body: String?
        /// The group it joins, if grouping is on for its app.
        public var group: String?
        /// What is shown instead of a hidden preview ("2 Notifications"); nil when shown.
        public var placeholder: String?
        /// `aps.relevance-score`, which orders the summary.
        public var relevance: Double?
        /// Whether it has an attachment (image, audio, video, file).
        public var hasMedia: Bool
        /// Arrival, UNIX seconds.
        public var date: Double
    }

    /// Whose device.
    public var user: String
    /// When it happened, in UNIX seconds.
    public var at: Double
    /// What it shows, in summary order.
    public var notifications: [Item]
    /// What expired while waiting for it: not shown.
    public var dropped: [Item]
}

/// The focus in force changed: a schedule started or ended, or a focus set by hand expired.
public struct FocusChange: Sendable, Hashable {
    /// Whose device.
    public var user: String
    /// When it happened, in UNIX seconds.
    public var at: Double
    /// The focus now in force, or nil.
    public var focus: String?
    /// Why, in words.
    public var reason: String
}
