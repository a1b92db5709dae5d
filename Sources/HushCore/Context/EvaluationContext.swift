package import HushJSON

/// The device's state at evaluation time (docs/reference.md, "Context"). Every field is optional in the input.
public struct EvaluationContext: Sendable, Hashable {
    /// Which focus is on, as the device says.
    public enum FocusSelection: Sendable, Hashable {
        /// The policy's schedules (and a focus turned on by hand in state) decide.
        case automatic
        /// Every focus off.
        case off
        /// This focus on by hand.
        case on(String)
    }

    /// The ring/silent switch: a silent ringer mutes sounds, except critical alerts.
    public enum Ringer: String, Sendable, Hashable {
        /// Sounds play.
        case ring
        /// Sounds are muted, except critical alerts.
        case silent
    }
    /// Where audio goes: Siri announces only to headphones or CarPlay.
    public enum Audio: String, Sendable, Hashable {
        /// The speaker: Siri does not announce.
        case none
        /// Headphones: Siri may announce.
        case headphones
        /// CarPlay: Siri may announce.
        case carplay
    }

    /// UNIX seconds; nil: the notification's date, else the clock.
    public var now: Double?
    /// IANA name; nil: the policy's, else the machine's.
    public var timezone: String?
    /// The focus as the device has it (default: the policy's schedules decide).
    public var focus: FocusSelection
    /// Whether the device is locked (default true): banners show only unlocked, lock-screen alerts only locked.
    public var locked: Bool
    /// The ring/silent switch (default ring).
    public var ringer: Ringer
    /// Where audio goes (default none).
    public var audio: Audio

    /// A context; every field has the default a locked phone with no focus set by hand has.
    public init(
        now: Double? = nil, timezone: String? = nil, focus: FocusSelection = .automatic, locked: Bool = true,
        ringer: Ringer = .ring, audio: Audio = .none
    ) {
        self.now = now
        self.timezone = timezone
        self.focus = focus
        self.locked = locked
        self.ringer = ringer
        self.audio = audio
    }
}

extension EvaluationContext {
    /// Decodes a context object; unknown keys are refused so a typo does not pass silently.
    package static func decode(_ json: JSONValue) throws(InputError) -> EvaluationContext {
        guard case .object(let object) = json else {
            throw InputError(field: nil, "a context must be a JSON object, got \(json.typeName)")
        }
        var context = EvaluationContext()
        let known = ["now", "timezone", "focus", "locked", "ringer", "audio"]
        for key in object.keys where !known.contains(key) {
            throw InputError(
                field: key,
                "unknown context key\(Spelling.hint(for: key, in: known)) (known: \(known.joined(separator: ", ")))")
        }
        if let value = object["now"], !value.isNull {
            guard case .string(let s) = value, let t = RFC3339.parse(s) else {
                throw InputError(
                    field: "now", "must be an RFC 3339 time such as 2026-11-22T09:30:00Z, got \(value.quotedForError)")
            }
            context.now = t
        }
        if let value = object["timezone"], !value.isNull {
            guard case .string(let s) = value, ZoneClock.isKnown(s) else {
                throw InputError(
                    field: "timezone",
                    "must be an IANA time zone name such as \"Europe/Berlin\", got \(value.quotedForError)")
            }
            context.timezone = s
        }
        if let value = object["focus"] {
            switch value {
            case .null: break
            case .bool(false): context.focus = .off
            case .string(let s) where s == "off" || s.isEmpty: context.focus = .off
            case .string(let s): context.focus = .on(s)
            default:
                throw InputError(field: "focus", "must be a focus name, false or \"off\", got \(value.quotedForError)")
            }
        }
        if let value = object["locked"], !value.isNull {
            guard case .bool(let b) = value else {
                throw InputError(field: "locked", "must be true or false, got \(value.quotedForError)")
            }
            context.locked = b
        }
        if let value = object["ringer"], !value.isNull {
            guard case .string(let s) = value, let r = Ringer(rawValue: s) else {
                throw InputError(field: "ringer", "must be \"ring\" or \"silent\", got \(value.quotedForError)")
            }
            context.ringer = r
        }
        if let value = object["audio"], !value.isNull {
            guard case .string(let s) = value, let a = Audio(rawValue: s) else {
                throw InputError(
                    field: "audio", "must be \"none\", \"headphones\" or \"carplay\", got \(value.quotedForError)")
            }
            context.audio = a
        }
        return context
    }
}

extension EvaluationContext {
    /// A focus turned on by name must be one the policy declares: a misspelt name would otherwise
    /// turn on a focus with the defaults, which silences nearly everything.
    package func checkFocus(declaredBy policy: Policy) throws(InputError) {
        guard case .on(let name) = focus, let problem = policy.undeclaredFocusProblem(name) else { return }
        throw InputError(field: "focus", problem)
    }
}
