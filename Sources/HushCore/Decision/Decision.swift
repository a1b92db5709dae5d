/// What Hush decided for one notification (docs/reference.md, "Decision").
public struct Decision: Sendable, Hashable {
    /// What becomes of the notification (docs/reference.md, "Delivery values").
    public enum Delivery: String, Sendable, Hashable, CaseIterable {
        /// `alert` interrupts now; `quiet` lands in the list without sound or banner; `summary` waits for the
        /// next scheduled summary; `silenced` lands silently under a focus; `dropped` is not shown;
        /// `background` has nothing the user sees (a badge may still be set).
        case alert, quiet, summary, silenced, dropped, background
        /// A withdraw line: the app removed a notification it sent earlier.
        case withdrawn
    }

    /// What let a notification past the active focus or the scheduled summary
    /// (docs/reference.md, "Breakthrough values").
    public enum Breakthrough: String, Sendable, Hashable, CaseIterable {
        /// A critical alert: it passes everything.
        case critical
        /// A time-sensitive notification from an app the focus or summary lets through that way.
        case timeSensitive = "time-sensitive"
        /// From a person the focus allows.
        case person
        /// From an app the focus allows.
        case app
        /// A call the focus lets through (everyone, favorites or contacts).
        case call
        /// A second call from the same person within three minutes.
        case repeatedCall = "repeated-call"
        /// A message or call from a person: it passes a scheduled summary.
        case communication
        /// A rule of the policy said so.
        case rule
    }

    /// How an alert interrupts (docs/reference.md, "The alert object").
    public struct Alert: Sendable, Hashable {
        /// Whether it plays a sound.
        public var sound: Bool
        /// The payload's sound name, `"default"` when it names none; nil without sound.
        public var soundName: String?
        /// For critical alerts only: the payload's volume, default 1.0.
        public var volume: Double?
        /// Whether it vibrates: level active or above.
        public var vibrate: Bool
        /// Whether it wakes the screen: level active or above.
        public var wakeScreen: Bool
        /// Whether it shows a banner: device unlocked and the app shows banners.
        public var banner: Bool
        /// Whether it shows on the lock screen: device locked and the app shows there.
        public var lockScreen: Bool
        /// Whether it sounds through the ringer switch: critical alerts only.
        public var bypassRinger: Bool

        package init(
            sound: Bool, soundName: String?, volume: Double?, vibrate: Bool, wakeScreen: Bool, banner: Bool,
            lockScreen: Bool, bypassRinger: Bool
        ) {
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

    /// The group a notification joins in the notification list.
    public struct Group: Sendable, Hashable {
        /// The group's id: the app, and the thread when the app groups by thread.
        public var id: String
        /// How many notifications the group holds now.
        public var count: Int
        /// The line under the group about the other notifications in it; nil while alone.
        public var summary: String?
    }

    /// The notification's id (or what stood in for it).
    public var id: String
    /// The app's bundle id, echoed.
    public var app: String
    /// Whose device, echoed (default `"default"`).
    public var user: String
    /// The outcome.
    public var delivery: Delivery
    /// The effective interruption level.
    public var level: InterruptionLevel
    /// The level the payload asked for.
    public var requestedLevel: InterruptionLevel
    /// The focus in force at the decision, whatever its delivery.
    public var focus: String?
    /// What let it past the active focus or the summary; nil when nothing had to.
    public var breakthrough: Breakthrough?
    /// For `alert` only: how it interrupts.
    public var alert: Alert?
    /// The badge to set on the app icon.
    public var badge: Int?
    /// What Siri would say; nil when not announced.
    public var announcement: String?
    /// The group it joins; nil while held for a summary or dropped.
    public var group: Group?
    /// Shown instead of the content when previews are hidden.
    public var placeholder: String?
    /// UNIX seconds, for `summary`.
    public var summaryAt: Double?
    /// The collapse key of the notification this one replaced or withdrew.
    public var replaces: String?
    /// One short sentence per step that shaped the outcome.
    public var reasons: [String]
    /// The names of the rules that changed something.
    public var rules: [String]
    /// Policy errors met while deciding (`rule 'name': file:line: message`).
    public var errors: [String]
    /// Present when asked for.
    public var trace: [TraceStep]?
    /// UTC offset of the context's time zone at `summaryAt`, for rendering it.
    package var summaryAtOffset: Int = 0

    package init(
        id: String, app: String, user: String, delivery: Delivery, level: InterruptionLevel,
        requestedLevel: InterruptionLevel
    ) {
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
    /// The pipeline step, or `rule`.
    public var step: String
    /// The rule's name, for a rule step.
    public var rule: String?
    /// Where the rule is declared, `file:line`.
    public var location: String?
    /// What it did, in words.
    public var note: String

    package init(step: String, rule: String? = nil, location: String? = nil, note: String) {
        self.step = step
        self.rule = rule
        self.location = location
        self.note = note
    }
}
