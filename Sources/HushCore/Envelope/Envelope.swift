/// One incoming notification: the APNs payload as an app server sent it, plus the little metadata
/// Hush needs. Built by `Envelope.decode`, which validates everything the reference lists (docs/reference.md, "Input").
public struct Envelope: Sendable, Hashable {
    public struct Sound: Sendable, Hashable {
        public var name: String?
        public var critical: Bool
        /// 0...1, for critical sounds.
        public var volume: Double?
    }

    public var app: String
    /// The request identifier: `id`, else `apns-collapse-id`, else one Hush made.
    public var id: String
    /// True when Hush made the id up: such a notification never collapses with another.
    public var idIsGenerated: Bool
    /// What it collapses by, and is kept in state under: `headers["apns-collapse-id"]` when
    /// present (on iOS it becomes the request's identifier), else `id`.
    public var collapseKey: String
    /// A withdraw line: not a notification but the app removing one it sent earlier (by
    /// `collapseKey`); the payload may be empty.
    public var withdraw: Bool
    /// Arrival time (UNIX seconds); nil when the envelope had none (the context's `now` is used).
    public var date: Double?
    public var user: String
    public var headers: JSONObject
    public var payload: JSONObject

    public var pushType: String?
    public var priority: Int?
    /// UNIX seconds; 0 means "now or never".
    public var expiration: Double?

    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var summaryArgument: String?
    public var summaryArgumentCount: Int
    public var badge: Int?
    public var sound: Sound?
    public var threadID: String?
    public var category: String?
    public var contentAvailable: Bool
    public var mutableContent: Bool
    public var targetContentID: String?
    /// `aps.interruption-level` as sent; nil when absent.
    public var interruptionLevel: InterruptionLevel?
    public var relevance: Double?
    public var filterCriteria: String?
    public var communication: Communication?
    /// Attachment types: image, audio, video, file.
    public var attachments: [String]

    /// The level the payload asks for: its interruption level, else critical for a critical sound,
    /// else active.
    public var requestedLevel: InterruptionLevel {
        if let interruptionLevel { return interruptionLevel }
        if sound?.critical == true { return .critical }
        return .active
    }

    /// Whether anything would be shown or heard: an alert, a sound or a badge.
    public var hasVisibleContent: Bool {
        payload["aps"]?["alert"] != nil || sound != nil || badge != nil
    }

    /// Whether the notification has something to show or play: a title, subtitle or body, a
    /// sound, or a communication sender (a call or message from a person always shows who).
    /// Without any of these a push only updates the badge, if it has one.
    public var hasSomethingToShow: Bool {
        !(title ?? "").isEmpty || !(subtitle ?? "").isEmpty || !(body ?? "").isEmpty || sound != nil
            || communication?.sender != nil
    }

    public var hasMedia: Bool { !attachments.isEmpty }

    /// A direct message or call from a person: these pass a scheduled summary.
    public var isCommunicationFromSender: Bool { communication?.sender != nil }
}
