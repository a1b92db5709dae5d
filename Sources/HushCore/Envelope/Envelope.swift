package import HushJSON

/// One incoming notification: the APNs payload as an app server sent it, plus the little metadata
/// Hush needs. Built by `Envelope.decode`, which validates everything the reference lists (docs/reference.md, "Input").
public struct Envelope: Sendable, Hashable {
    /// `aps.sound`: a name, or a critical sound with its volume.
    public struct Sound: Sendable, Hashable {
        /// The sound file's name; nil for a critical sound without one.
        public var name: String?
        /// Whether it is a critical sound (`critical: 1`).
        public var critical: Bool
        /// 0...1, for critical sounds.
        public var volume: Double?
    }

    /// The sending app's bundle id.
    public var app: String
    /// The request identifier: `id`, else `apns-collapse-id`, else one Hush made.
    public var id: String
    /// True when Hush made the id up: such a notification never collapses with another.
    package var idIsGenerated: Bool
    /// What it collapses by, and is kept in state under: `headers["apns-collapse-id"]` when
    /// present (on iOS it becomes the request's identifier), else `id`.
    public var collapseKey: String
    /// A withdraw line: not a notification but the app removing one it sent earlier (by
    /// `collapseKey`); the payload may be empty.
    public var withdraw: Bool
    /// Arrival time (UNIX seconds); nil when the envelope had none (the context's `now` is used).
    public var date: Double?
    /// Whose device (default `"default"`): state, focus and summaries are kept per user.
    public var user: String
    /// The headers and the payload as sent; a line read by the fast path keeps them as text
    /// until something asks for their members (see `DeferredJSONObject`).
    package var headersSource: DeferredJSONObject
    package var payloadSource: DeferredJSONObject
    package var headers: JSONObject { headersSource.object }
    package var payload: JSONObject { payloadSource.object }
    /// Whether `payload.aps` has an `alert` member (null counts): something to show was sent.
    package var hasAlertMember: Bool

    /// The `apns-push-type` header (`alert`, `background`, …).
    public var pushType: String?
    /// The `apns-priority` header: 10 now, 5 when convenient, 1 in the background.
    public var priority: Int?
    /// UNIX seconds; 0 means "now or never".
    public var expiration: Double?

    /// `aps.alert.title`.
    public var title: String?
    /// `aps.alert.subtitle`.
    public var subtitle: String?
    /// `aps.alert.body`.
    public var body: String?
    /// `aps.alert.summary-arg`: who or what the summary line names.
    public var summaryArgument: String?
    /// `aps.alert.summary-arg-count`: how many items it stands for (default 1).
    public var summaryArgumentCount: Int
    /// `aps.badge`.
    public var badge: Int?
    /// `aps.sound`: without one, an alert plays no sound.
    public var sound: Sound?
    /// `aps.thread-id`: what it groups by.
    public var threadID: String?
    /// `aps.category`: the policy's categories give it summary formats and placeholders.
    public var category: String?
    /// `aps.content-available`: a background update.
    public var contentAvailable: Bool
    /// `aps.mutable-content`.
    public var mutableContent: Bool
    /// `aps.target-content-id`.
    public var targetContentID: String?
    /// `aps.interruption-level` as sent; nil when absent.
    public var interruptionLevel: InterruptionLevel?
    /// `aps.relevance-score` (0…1): orders a summary.
    public var relevance: Double?
    /// `aps.filter-criteria`: matched against a focus's filters.
    public var filterCriteria: String?
    package var communication: Communication?
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
    package var hasVisibleContent: Bool {
        hasAlertMember || sound != nil || badge != nil
    }

    /// Whether the notification has something to show or play: a title, subtitle or body, a
    /// sound, or a communication sender (a call or message from a person always shows who).
    /// Without any of these a push only updates the badge, if it has one.
    package var hasSomethingToShow: Bool {
        !(title ?? "").isEmpty || !(subtitle ?? "").isEmpty || !(body ?? "").isEmpty || sound != nil
            || communication?.sender != nil
    }

    package var hasMedia: Bool { !attachments.isEmpty }

    /// A direct message or call from a person: these pass a scheduled summary.
    package var isCommunicationFromSender: Bool { communication?.sender != nil }
}
