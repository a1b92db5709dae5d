/// A Focus (docs/reference.md, "Focuses"): when it is on, who and what may get through, and how it silences.
public struct FocusSettings: Sendable, Hashable {
    public enum Calls: String, Sendable, Hashable, CaseIterable { case everyone, allowed, favorites, contacts, nobody }
    public enum Silence: String, Sendable, Hashable, CaseIterable { case always, locked }
    public enum Mode: String, Sendable, Hashable, CaseIterable { case allow, silence }

    public var name: String
    public var schedules: [Schedule]
    /// Handles listed in `people`.
    public var people: [String]
    public var favorites: Bool
    /// How many of the top suggested people (docs/reference.md, "People and suggestions") are allowed.
    public var suggested: Int
    public var apps: [String]
    public var calls: Calls
    public var repeatedCalls: Bool
    public var timeSensitive: Bool
    public var silence: Silence
    public var mode: Mode
    /// Per app: the filter criteria that may get through.
    public var filters: [String: [String]]

    /// Defaults the reference leaves open follow iOS: calls from allowed people, repeated calls on,
    /// time-sensitive notifications allowed, silencing always, allow-list mode.
    public init(name: String, schedules: [Schedule] = [], people: [String] = [], favorites: Bool = false,
                suggested: Int = 0, apps: [String] = [], calls: Calls = .allowed, repeatedCalls: Bool = true,
                timeSensitive: Bool = true, silence: Silence = .always, mode: Mode = .allow,
                filters: [String: [String]] = [:]) {
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

    public func isScheduled(at t: Double, clock: ZoneClock) -> Bool {
        schedules.contains { $0.contains(t, clock: clock) }
    }
}
