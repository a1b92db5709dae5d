import HushCore
import HushJSON
import HushState

/// What the live page at `/` of `hush serve` shows: each user's focus and why, what waits for
/// which summary, and the latest events. Plain values, ready for a template.
package struct LivePage: Sendable {
    /// The notifications waiting for one summary, by app.
    package struct Waiting: Sendable {
        package var summary: String
        package var count: Int
        package var apps: String
    }

    package struct Card: Sendable {
        package var user: String
        package var focus: String
        package var focusOn: Bool
        package var why: String
        package var waiting: [Waiting]
        package var waitingCount: Int
        package var nextSummary: String
    }

    package struct Event: Sendable {
        package var seq: Int64
        /// As the event says (RFC 3339 in its user's time zone), as the page's script shows it.
        package var time: String
        package var user: String
        package var kind: String
        package var text: String
    }

    package var now: String
    package var cards: [Card]
    /// How many users the server knows; `cards` holds at most the page's limit of them.
    package var userCount: Int
    /// Oldest first.
    package var events: [Event]
    /// The newest event recorded: the page's event stream goes on from it.
    package var lastSeq: Int64

    /// The event's own `at`.
    static func time(of json: String) -> String? { (try? JSONParser.parse(json))?["at"]?.stringValue }

    /// An event in words, as the page's script also writes it.
    package static func describe(kind: String, json: String) -> String {
        guard let event = try? JSONParser.parse(json) else { return kind }
        if kind == "focus" {
            let focus = event["focus"]?.stringValue
            let reason = event["reason"]?.stringValue ?? ""
            return (focus.map { "Focus \($0) on" } ?? "Focus off") + (reason.isEmpty ? "" : ": \(reason)")
        }
        let shown = event["notifications"]?.arrayValue?.count ?? 0
        let dropped = event["dropped"]?.arrayValue?.count ?? 0
        return "Scheduled Summary: \(shown) notification\(shown == 1 ? "" : "s")"
            + (dropped > 0 ? ", \(dropped) expired" : "")
    }
}

extension ServiceCore {
    /// The live page at `now`: `only` that user, else the first `userLimit` users by name; the
    /// last `eventLimit` events (of `only` when given).
    package func livePage(only: String?, now: Double, userLimit: Int = 50, eventLimit: Int = 30) throws(Refusal)
        -> LivePage
    {
        let users: [String]
        if let only { users = [only] } else { users = try knownUsers() }
        var cards: [LivePage.Card] = []
        for user in users.sorted().prefix(userLimit) {
            let status = try statusReport(user: user, now: now)
            var bySummary: [(at: Double?, apps: [(String, Int)], count: Int)] = []
            for n in status.queued {
                let app = appName(n.app, for: user)
                let i =
                    bySummary.firstIndex { $0.at == n.summaryAt }
                    ?? {
                        bySummary.append((n.summaryAt, [], 0)); return bySummary.count - 1
                    }()
                bySummary[i].count += 1
                if let j = bySummary[i].apps.firstIndex(where: { $0.0 == app }) {
                    bySummary[i].apps[j].1 += 1
                } else {
                    bySummary[i].apps.append((app, 1))
                }
            }
            bySummary.sort { ($0.at ?? .infinity) < ($1.at ?? .infinity) }
            cards.append(
                LivePage.Card(
                    user: user, focus: status.focus ?? "no focus", focusOn: status.focus != nil,
                    why: status.why ?? "",
                    waiting: bySummary.map { group in
                        LivePage.Waiting(
                            summary: group.at.map { status.clock.format($0) } ?? "the next summary", count: group.count,
                            apps: group.apps.map { "\($0.0) \($0.1)" }.joined(separator: ", "))
                    },
                    waitingCount: status.queued.count,
                    nextSummary: status.nextSummary.map { status.clock.format($0) } ?? "none scheduled"))
        }
        let last = try lastEventSeq()
        let recent = try events(after: max(0, last - Int64(eventLimit)), user: only, limit: eventLimit)
        let clock = serverClock
        return LivePage(
            now: clock.format(now), cards: cards, userCount: users.count,
            events: recent.map {
                LivePage.Event(
                    seq: $0.seq, time: LivePage.time(of: $0.json) ?? clock.format($0.at), user: $0.user, kind: $0.kind,
                    text: LivePage.describe(kind: $0.kind, json: $0.json))
            }, lastSeq: last)
    }
}
