/// What Hush decided for one notification (docs/reference.md, "Decision").
public struct Decision: Sendable, Hashable {
    public enum Delivery: String, Sendable, Hashable, CaseIterable {
        case alert, quiet, summary, silenced, dropped, background
        /// A withdraw line: the app removed a notification it sent earlier.
        case withdrawn
    }

    public enum Breakthrough: String, Sendable, Hashable, CaseIterable {
        case critical
        case timeSensitive = "time-sensitive"
        case person, app, call
        case repeatedCall = "repeated-call"
        case communication, rule
    }

    public struct Alert: Sendable, Hashable {
        public var sound: Bool
        public var soundName: String?
        public var volume: Double?
        public var vibrate: Bool
        public var wakeScreen: Bool
        public var banner: Bool
        public var lockScreen: Bool
        public var bypassRinger: Bool

        public init(sound: Bool, soundName: String?, volume: Double?, vibrate: Bool, wakeScreen: Bool, banner: Bool,
                    lockScreen: Bool, bypassRinger: Bool) {
            self.sound = sound
            self.soundName = soundName
            self.volume = volume
            self.vibrate = vibrate
            self.wakeScreen = wakeScreen
            self.banner = banner
            self.lockScreen = lockScreen
            self.bypassRinger = bypassRinger
        }
    }

    public struct Group: Sendable, Hashable {
        public var id: String
        public var count: Int
        /// The line under the group about the other notifications in it; nil while alone.
        public var summary: String?
    }

    public var id: String
    public var app: String
    public var user: String
    public var delivery: Delivery
    public var level: InterruptionLevel
    public var requestedLevel: InterruptionLevel
    public var focus: String?
    public var breakthrough: Breakthrough?
    public var alert: Alert?
    public var badge: Int?
    public var announcement: String?
    public var group: Group?
    public var placeholder: String?
    /// UNIX seconds, for `summary`.
    public var summaryAt: Double?
    public var replaces: String?
    public var reasons: [String]
    public var rules: [String]
    public var errors: [String]
    /// Present when asked for.
    public var trace: [TraceStep]?
    /// UTC offset of the context's time zone at `summaryAt`, for rendering it.
    public var summaryAtOffset: Int = 0

    public init(id: String, app: String, user: String, delivery: Delivery, level: InterruptionLevel,
                requestedLevel: InterruptionLevel) {
        self.id = id
        self.app = app
        self.user = user
        self.delivery = delivery
        self.level = level
        self.requestedLevel = requestedLevel
        self.reasons = []
        self.rules = []
        self.errors = []
    }
}

/// One step of an explained evaluation: which step or rule, what it did, and where it is declared.
public struct TraceStep: Sendable, Hashable {
    public var step: String
    public var rule: String?
    public var location: String?
    public var note: String

    public init(step: String, rule: String? = nil, location: String? = nil, note: String) {
        self.step = step
        self.rule = rule
        self.location = location
        self.note = note
    }
}
