/// A Focus (docs/reference.md, "Focuses"): when it is on, who and what may get through, and how it silences.
package struct FocusSettings: Sendable, Hashable {
    package enum Calls: String, Sendable, Hashable, CaseIterable { case everyone, allowed, favorites, contacts, nobody }
    package enum Silence: String, Sendable, Hashable, CaseIterable { case always, locked }
    package enum Mode: String, Sendable, Hashable, CaseIterable { case allow, silence }

    package var name: String
    package var schedules: [Schedule]
    /// Handles listed in `people`.
    package var people: [String]
    package var favorites: Bool
    /// How many of the top suggested people (docs/reference.md, "People and suggestions") are allowed.
    package var suggested: Int
    package var apps: [String]
    package var calls: Calls
    package var repeatedCalls: Bool
    package var timeSensitive: Bool
    package var silence: Silence
    package var mode: Mode
    /// Per app: the filter criteria that may get through.
    package var filters: [String: [String]]

    /// Defaults the reference leaves open follow iOS: calls from allowed people, repeated calls on,
    /// time-sensitive notifications allowed, silencing always, allow-list mode.
    package init(
        name: String, schedules: [Schedule] = [], people: [String] = [], favorites: Bool = false,
        suggested: Int = 0, apps: [String] = [], calls: Calls = .allowed, repeatedCalls: Bool = true,
        timeSensitive: Bool = true, silence: Silence = .always, mode: Mode = .allow,
        filters: [String: [String]] = [:]
    ) {
        self.name = name
        self.schedules = schedules
        self.people = people
        self.favorites = favorites
        self.suggested = suggested
        self.apps = apps
        self.calls = calls
        self.repeatedCalls = repeatedCalls
        self.timeSensitive = timeSensitive
        self.silence = silence
        self.mode = mode
        self.filters = filters
    }

    package func isScheduled(at t: Double, clock: ZoneClock) -> Bool {
        schedules.contains { $0.contains(t, clock: clock) }
    }
}
