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

    /// The fields, behind one reference: an envelope is handed along (and copied) several times
    /// on its way through an evaluation, and a copy is then one reference, not one per text.
    /// Copied on write, so an envelope is a value as before.
    final class Storage: @unchecked Sendable {
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    struct Fields: Hashable {
        var app: String
        var id: String
        var idIsGenerated: Bool
        var collapseKey: String
        var withdraw: Bool
        var user: String
        var headersSource: DeferredJSONObject
        var payloadSource: DeferredJSONObject
        var hasAlertMember: Bool
        var pushType: String?
        var priority: Int?
        var expiration: Double?
        var title: String?
        var subtitle: String?
        var body: String?
        var summaryArgument: String?
        var summaryArgumentCount: Int
        var badge: Int?
        var sound: Sound?
        var threadID: String?
        var category: String?
        var contentAvailable: Bool
        var mutableContent: Bool
        var targetContentID: String?
        var interruptionLevel: InterruptionLevel?
        var relevance: Double?
        var filterCriteria: String?
        var communication: Communication?
        var attachments: [String]
    }

    private var storage: Storage

    /// Arrival time (UNIX seconds); nil when the envelope had none (the context's `now` is used).
    /// Beside the fields, not among them: an evaluation sets it on envelopes without one, and the
    /// service's envelopes are shared with the body they were read from, so setting it among the
    /// fields copied them all.
    public var date: Double?

    /// For writes: the fields of this envelope alone (copied first when another shares them).
    private var fields: Fields {
        get { storage.fields }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
            yield &storage.fields
        }
    }

    init(
        app: String, id: String, idIsGenerated: Bool, collapseKey: String, withdraw: Bool, date: Double?, user: String,
        headersSource: DeferredJSONObject, payloadSource: DeferredJSONObject, hasAlertMember: Bool, pushType: String?,
        priority: Int?, expiration: Double?, title: String?, subtitle: String?, body: String?, summaryArgument: String?,
        summaryArgumentCount: Int, badge: Int?, sound: Sound?, threadID: String?, category: String?,
        contentAvailable: Bool, mutableContent: Bool, targetContentID: String?, interruptionLevel: InterruptionLevel?,
        relevance: Double?, filterCriteria: String?, communication: Communication?, attachments: [String]
    ) {
        self.date = date
        storage = Storage(
            Fields(
                app: app, id: id, idIsGenerated: idIsGenerated, collapseKey: collapseKey, withdraw: withdraw,
                user: user, headersSource: headersSource, payloadSource: payloadSource,
                hasAlertMember: hasAlertMember, pushType: pushType, priority: priority, expiration: expiration,
                title: title, subtitle: subtitle, body: body, summaryArgument: summaryArgument,
                summaryArgumentCount: summaryArgumentCount, badge: badge, sound: sound, threadID: threadID,
                category: category, contentAvailable: contentAvailable, mutableContent: mutableContent,
                targetContentID: targetContentID, interruptionLevel: interruptionLevel, relevance: relevance,
                filterCriteria: filterCriteria, communication: communication, attachments: attachments))
    }

    /// The sending app's bundle id.
    public var app: String {
        get { storage.fields.app }
        set { fields.app = newValue }
    }
    /// The request identifier: `id`, else `apns-collapse-id`, else one Hush made.
    public var id: String {
        get { storage.fields.id }
        set { fields.id = newValue }
    }
    /// True when Hush made the id up: such a notification never collapses with another.
    package var idIsGenerated: Bool {
        get { storage.fields.idIsGenerated }
        set { fields.idIsGenerated = newValue }
    }
    /// What it collapses by, and is kept in state under: `headers["apns-collapse-id"]` when
    /// present (on iOS it becomes the request's identifier), else `id`.
    public var collapseKey: String {
        get { storage.fields.collapseKey }
        set { fields.collapseKey = newValue }
    }
    /// A withdraw line: not a notification but the app removing one it sent earlier (by
    /// `collapseKey`); the payload may be empty.
    public var withdraw: Bool {
        get { storage.fields.withdraw }
        set { fields.withdraw = newValue }
    }
    /// Whose device (default `"default"`): state, focus and summaries are kept per user.
    public var user: String {
        get { storage.fields.user }
        set { fields.user = newValue }
    }
    /// The headers and the payload as sent; a line read by the fast path keeps them as text
    /// until something asks for their members (see `DeferredJSONObject`).
    package var headersSource: DeferredJSONObject {
        get { storage.fields.headersSource }
        set { fields.headersSource = newValue }
    }

    package var payloadSource: DeferredJSONObject {
        get { storage.fields.payloadSource }
        set { fields.payloadSource = newValue }
    }
    /// Whether `payload.aps` has an `alert` member (null counts): something to show was sent.
    package var hasAlertMember: Bool {
        get { storage.fields.hasAlertMember }
        set { fields.hasAlertMember = newValue }
    }
    /// The `apns-push-type` header (`alert`, `background`, …).
    public var pushType: String? {
        get { storage.fields.pushType }
        set { fields.pushType = newValue }
    }
    /// The `apns-priority` header: 10 now, 5 when convenient, 1 in the background.
    public var priority: Int? {
        get { storage.fields.priority }
        set { fields.priority = newValue }
    }
    /// UNIX seconds; 0 means "now or never".
    public var expiration: Double? {
        get { storage.fields.expiration }
        set { fields.expiration = newValue }
    }
    /// `aps.alert.title`.
    public var title: String? {
        get { storage.fields.title }
        set { fields.title = newValue }
    }
    /// `aps.alert.subtitle`.
    public var subtitle: String? {
        get { storage.fields.subtitle }
        set { fields.subtitle = newValue }
    }
    /// `aps.alert.body`.
    public var body: String? {
        get { storage.fields.body }
        set { fields.body = newValue }
    }
    /// `aps.alert.summary-arg`: who or what the summary line names.
    public var summaryArgument: String? {
        get { storage.fields.summaryArgument }
        set { fields.summaryArgument = newValue }
    }
    /// `aps.alert.summary-arg-count`: how many items it stands for (default 1).
    public var summaryArgumentCount: Int {
        get { storage.fields.summaryArgumentCount }
        set { fields.summaryArgumentCount = newValue }
    }
    /// `aps.badge`.
    public var badge: Int? {
        get { storage.fields.badge }
        set { fields.badge = newValue }
    }
    /// `aps.sound`: without one, an alert plays no sound.
    public var sound: Sound? {
        get { storage.fields.sound }
        set { fields.sound = newValue }
    }
    /// `aps.thread-id`: what it groups by.
    public var threadID: String? {
        get { storage.fields.threadID }
        set { fields.threadID = newValue }
    }
    /// `aps.category`: the policy's categories give it summary formats and placeholders.
    public var category: String? {
        get { storage.fields.category }
        set { fields.category = newValue }
    }
    /// `aps.content-available`: a background update.
    public var contentAvailable: Bool {
        get { storage.fields.contentAvailable }
        set { fields.contentAvailable = newValue }
    }
    /// `aps.mutable-content`.
    public var mutableContent: Bool {
        get { storage.fields.mutableContent }
        set { fields.mutableContent = newValue }
    }
    /// `aps.target-content-id`.
    public var targetContentID: String? {
        get { storage.fields.targetContentID }
        set { fields.targetContentID = newValue }
    }
    /// `aps.interruption-level` as sent; nil when absent.
    public var interruptionLevel: InterruptionLevel? {
        get { storage.fields.interruptionLevel }
        set { fields.interruptionLevel = newValue }
    }
    /// `aps.relevance-score` (0…1): orders a summary.
    public var relevance: Double? {
        get { storage.fields.relevance }
        set { fields.relevance = newValue }
    }
    /// `aps.filter-criteria`: matched against a focus's filters.
    public var filterCriteria: String? {
        get { storage.fields.filterCriteria }
        set { fields.filterCriteria = newValue }
    }

    package var communication: Communication? {
        get { storage.fields.communication }
        set { fields.communication = newValue }
    }
    /// The communication's kind and sender, read where they are: the pipeline asks for them on
    /// most notifications, and `communication` copies the whole of it (recipients and all).
    package var communicationKind: Communication.Kind? { storage.fields.communication?.kind }
    package var sender: Person? { storage.fields.communication?.sender }

    /// The texts a stored notification keeps. Moved out, blanks left behind, when no other copy
    /// of this envelope shares its fields: the evaluation's last step asks, and reads the
    /// envelope no more. Copied otherwise. A move spares a retain and a release of each text on
    /// every notification delivered or held, and those are atomic operations.
    package mutating func takeStoredTexts() -> (
        user: String, app: String, collapseKey: String, title: String?, body: String?, category: String?,
        summaryArgument: String?, sender: String?
    ) {
        guard isKnownUniquelyReferenced(&storage) else {
            let f = storage.fields
            return (
                f.user, f.app, f.collapseKey, f.title, f.body, f.category, f.summaryArgument,
                f.communication?.sender?.handle
            )
        }
        func moved(_ text: inout String) -> String {
            var taken = ""
            swap(&taken, &text)
            return taken
        }
        return (
            moved(&storage.fields.user), moved(&storage.fields.app), moved(&storage.fields.collapseKey),
            storage.fields.title.take(), storage.fields.body.take(), storage.fields.category.take(),
            storage.fields.summaryArgument.take(), storage.fields.communication?.sender?.handle.take()
        )
    }

    /// Attachment types: image, audio, video, file.
    public var attachments: [String] {
        get { storage.fields.attachments }
        set { fields.attachments = newValue }
    }

    package var headers: JSONObject { headersSource.object }

    package var payload: JSONObject { payloadSource.object }

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

extension Envelope {
    /// Whether two envelopes hold the same fields.
    public static func == (a: Envelope, b: Envelope) -> Bool {
        a.date == b.date && (a.storage === b.storage || a.storage.fields == b.storage.fields)
    }

    /// Hashes the fields, as `==` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(date)
        hasher.combine(storage.fields)
    }
}
