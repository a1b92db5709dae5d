import Foundation

/// Contact suggestions from donated interactions (docs/reference.md, "People and suggestions"): who you reach out to, recently and
/// often. Only outgoing interactions teach; people who only ever contact you are never suggested.
package enum Suggestions {
    package static let windowDays = 90.0
    package static let windowSeconds = windowDays * 86400
    package static let halfLifeDays = 14.0
    package static let minimumInteractions = 2

    package struct Suggestion: Sendable, Hashable {
        package var person: Person
        package var score: Double
        package var messages: Int
        package var calls: Int
        /// UNIX seconds of the latest outgoing interaction.
        package var last: Double
        package var why: String
    }

    /// Everyone worth suggesting, best first. With a scheduled focus, interactions inside its hours
    /// count double; with `excludeAllowed`, people the focus already allows are left out.
    package static func rank(
        interactions: [Interaction], now: Double, focus: FocusSettings?, clock: ZoneClock,
        directory: Directory, excludeAllowed: Bool = true
    ) -> [Suggestion] {
        struct Tally {
            var person: Person
            var handles: [Handle]
            var score = 0.0
            var messages = 0
            var calls = 0
            var inFocusHours = 0
            var last = -Double.infinity
        }
        var tallies: [Tally] = []
        let useHours = focus.map { !$0.schedules.isEmpty } ?? false
        for interaction in interactions where interaction.direction == .outgoing {
            let age = (now - interaction.date) / 86400
            guard age >= 0, age <= windowDays, !interaction.people.isEmpty else { continue }
            var weight = (interaction.kind == .call ? 1.5 : 1.0) / Double(interaction.people.count)
            weight *= pow(0.5, age / halfLifeDays)
            let inHours = useHours && focus!.isScheduled(at: interaction.date, clock: clock)
            if inHours { weight *= 2 }
            for person in interaction.people {
                let handles = directory.allHandles(of: person)
                let index: Int
                if let found = tallies.firstIndex(where: { t in
                    t.handles.contains { h in handles.contains { h.matches($0) } }
                }) {
                    index = found
                    for h in handles where !tallies[index].handles.contains(h) { tallies[index].handles.append(h) }
                    if tallies[index].person.name == nil, let name = person.name { tallies[index].person.name = name }
                } else {
                    tallies.append(Tally(person: person, handles: handles))
                    index = tallies.count - 1
                }
                tallies[index].score += weight
                if interaction.kind == .call { tallies[index].calls += 1 } else { tallies[index].messages += 1 }
                if inHours { tallies[index].inFocusHours += 1 }
                tallies[index].last = max(tallies[index].last, interaction.date)
            }
        }
        var out: [Suggestion] = []
        for tally in tallies where tally.messages + tally.calls >= minimumInteractions {
            if excludeAllowed, let focus, isAllowed(tally.person, in: focus, directory: directory) { continue }
            let name = directory.displayName(of: tally.person)
            var parts: [String] = []
            if tally.messages > 0 { parts.append("\(tally.messages) message\(tally.messages == 1 ? "" : "s")") }
            if tally.calls > 0 { parts.append("\(tally.calls) call\(tally.calls == 1 ? "" : "s")") }
            // Calendar days where the person lives: 23:30 is "yesterday" at 00:30.
            let days = clock.local(now).dayNumber - clock.local(tally.last).dayNumber
            var why = "You reached \(name) with \(GroupSummary.joinList(parts)) in the last 90 days, most recently "
            why += days == 0 ? "today" : days == 1 ? "yesterday" : "\(days) days ago"
            if let focus, useHours, tally.inFocusHours > 0 {
                why += "; \(tally.inFocusHours) during \(focus.name) hours"
            }
            out.append(
                Suggestion(
                    person: tally.person, score: tally.score, messages: tally.messages, calls: tally.calls,
                    last: tally.last, why: why + "."))
        }
        return out.sorted {
            $0.score != $1.score
                ? $0.score > $1.score
                : ($0.last != $1.last ? $0.last > $1.last : ($0.person.handle ?? "") < ($1.person.handle ?? ""))
        }
    }

    static func isAllowed(_ person: Person, in focus: FocusSettings, directory: Directory) -> Bool {
        if directory.person(person, isAmong: focus.people) { return true }
        return focus.favorites && directory.isFavorite(person)
    }
}
