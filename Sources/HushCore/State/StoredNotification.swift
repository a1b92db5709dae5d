/// What Hush keeps of a notification in the delivered list or the summary queue.
package struct StoredNotification: Sendable, Hashable {
    /// The fields, behind one reference: a stored notification is handed from the evaluation to
    /// the store's lists and copied on the way, and a copy is then one reference, not one per
    /// text. Copied on write, so it is a value as before.
    final class Storage: @unchecked Sendable {
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    struct Fields: Hashable {
        var user: String
        var app: String
        var id: String
        var date: Double
        var title: String?
        var body: String?
        var category: String?
        var threadID: String?
        var groupID: String?
        var summaryArgument: String?
        var sender: String?
        var summaryArgumentCount: Int
        // The three optional numbers as plain Doubles, nil as one NaN no JSON or Lua number has:
        // an optional Double takes 16 bytes, and these three took a notification from 240 bytes
        // (malloc's 256) to 216 (its 224), 6 MB on 200,000 notifications kept.
        var relevanceOrNone: Double
        var expirationOrNone: Double
        var summaryAtOrNone: Double
        var hasMedia: Bool

        var relevance: Double? {
            get { Self.optional(relevanceOrNone) }
            set { relevanceOrNone = Self.number(newValue) }
        }
        var expiration: Double? {
            get { Self.optional(expirationOrNone) }
            set { expirationOrNone = Self.number(newValue) }
        }
        var summaryAt: Double? {
            get { Self.optional(summaryAtOrNone) }
            set { summaryAtOrNone = Self.number(newValue) }
        }

        /// A signalling NaN with a payload of its own: arithmetic makes quiet NaNs, JSON has none.
        private static let noneBits: UInt64 = 0x7FF4_D0E5_0000_0001

        static func number(_ value: Double?) -> Double { value ?? Double(bitPattern: noneBits) }

        private static func optional(_ number: Double) -> Double? {
            number.bitPattern == noneBits ? nil : number
        }

        // Compared and hashed as the optionals they stand for (nil equals nil; NaN never equals).
        static func == (a: Fields, b: Fields) -> Bool {
            a.user == b.user && a.app == b.app && a.id == b.id && a.date == b.date && a.title == b.title
                && a.body == b.body && a.category == b.category && a.threadID == b.threadID
                && a.groupID == b.groupID && a.summaryArgument == b.summaryArgument && a.sender == b.sender
                && a.summaryArgumentCount == b.summaryArgumentCount && a.relevance == b.relevance
                && a.expiration == b.expiration && a.summaryAt == b.summaryAt && a.hasMedia == b.hasMedia
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(user)
            hasher.combine(app)
            hasher.combine(id)
            hasher.combine(date)
            hasher.combine(title)
            hasher.combine(body)
            hasher.combine(category)
            hasher.combine(threadID)
            hasher.combine(groupID)
            hasher.combine(summaryArgument)
            hasher.combine(sender)
            hasher.combine(summaryArgumentCount)
            hasher.combine(relevance)
            hasher.combine(expiration)
            hasher.combine(summaryAt)
            hasher.combine(hasMedia)
        }
    }

    private var storage: Storage

    /// For writes: this notification's own fields (copied first when another shares them).
    private var fields: Fields {
        get { storage.fields }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
            yield &storage.fields
        }
    }

    package var user: String {
        get { storage.fields.user }
        set { fields.user = newValue }
    }
    package var app: String {
        get { storage.fields.app }
        set { fields.app = newValue }
    }
    package var id: String {
        get { storage.fields.id }
        set { fields.id = newValue }
    }
    /// Arrival, UNIX seconds.
    package var date: Double {
        get { storage.fields.date }
        set { fields.date = newValue }
    }
    package var title: String? {
        get { storage.fields.title }
        set { fields.title = newValue }
    }
    package var body: String? {
        get { storage.fields.body }
        set { fields.body = newValue }
    }
    package var category: String? {
        get { storage.fields.category }
        set { fields.category = newValue }
    }
    package var threadID: String? {
        get { storage.fields.threadID }
        set { fields.threadID = newValue }
    }
    /// The group it joins (nil when grouping is off).
    package var groupID: String? {
        get { storage.fields.groupID }
        set { fields.groupID = newValue }
    }
    package var summaryArgument: String? {
        get { storage.fields.summaryArgument }
        set { fields.summaryArgument = newValue }
    }
    package var summaryArgumentCount: Int {
        get { storage.fields.summaryArgumentCount }
        set { fields.summaryArgumentCount = newValue }
    }
    package var relevance: Double? {
        get { storage.fields.relevance }
        set { fields.relevance = newValue }
    }
    package var hasMedia: Bool {
        get { storage.fields.hasMedia }
        set { fields.hasMedia = newValue }
    }
    /// UNIX seconds; nil: never expires.
    package var expiration: Double? {
        get { storage.fields.expiration }
        set { fields.expiration = newValue }
    }
    /// For the summary queue: when its summary is delivered.
    package var summaryAt: Double? {
        get { storage.fields.summaryAt }
        set { fields.summaryAt = newValue }
    }
    /// The communication sender's handle, for `hush.recent{ sender = }`.
    package var sender: String? {
        get { storage.fields.sender }
        set { fields.sender = newValue }
    }
    package init(
        user: String, app: String, id: String, date: Double, title: String? = nil, body: String? = nil,
        category: String? = nil, threadID: String? = nil, groupID: String? = nil,
        summaryArgument: String? = nil, summaryArgumentCount: Int = 1, relevance: Double? = nil,
        hasMedia: Bool = false, expiration: Double? = nil, summaryAt: Double? = nil, sender: String? = nil
    ) {
        storage = Storage(
            Fields(
                user: user, app: app, id: id, date: date, title: title, body: body, category: category,
                threadID: threadID, groupID: groupID, summaryArgument: summaryArgument, sender: sender,
                summaryArgumentCount: summaryArgumentCount, relevanceOrNone: Fields.number(relevance),
                expirationOrNone: Fields.number(expiration), summaryAtOrNone: Fields.number(summaryAt),
                hasMedia: hasMedia))
    }

    /// Whether this is the notification `app` and `id` name. A store's scan of a list asks it of
    /// every entry: compared here, in place, neither text is copied out (and retained) first.
    package func hasKey(app: String, id: String) -> Bool {
        storage.fields.id == id && storage.fields.app == app
    }

    package static func == (a: StoredNotification, b: StoredNotification) -> Bool {
        a.storage === b.storage || a.storage.fields == b.storage.fields
    }

    package func hash(into hasher: inout Hasher) { hasher.combine(storage.fields) }
}

/// A call Hush saw, rung through or not: repeated calls are counted from these.
package struct CallRecord: Sendable, Hashable {
    package var user: String
    package var date: Double
    package var app: String
    package var caller: Person

    package init(user: String, date: Double, app: String, caller: Person) {
        self.user = user
        self.date = date
        self.app = app
        self.caller = caller
    }
}

/// A focus turned on by hand, with an optional end.
package struct ManualFocus: Sendable, Hashable {
    /// nil: every focus turned off by hand.
    package var name: String?
    package var since: Double
    package var until: Double?

    package init(name: String?, since: Double, until: Double? = nil) {
        self.name = name
        self.since = since
        self.until = until
    }

    package func isInForce(at t: Double) -> Bool { until.map { t < $0 } ?? true }
}

/// A donated interaction (docs/reference.md, "People and suggestions").
package struct Interaction: Sendable, Hashable {
    package enum Direction: String, Sendable, Hashable { case outgoing, incoming }

    package var user: String
    package var date: Double
    package var direction: Direction
    package var kind: Communication.Kind
    package var app: String?
    package var people: [Person]
    package var group: String?

    package init(
        user: String = "default", date: Double, direction: Direction, kind: Communication.Kind, app: String? = nil,
        people: [Person], group: String? = nil
    ) {
        self.user = user
        self.date = date
        self.direction = direction
        self.kind = kind
        self.app = app
        self.people = people
        self.group = group
    }
}

/// What an evaluation asks the store to remember.
package enum StateChange: Sendable, Hashable {
    /// Add to the delivered list, or replace the entry with the same app and id in place.
    case deliver(StoredNotification)
    /// Add to the summary queue, or replace the queued one with the same app and id.
    case enqueue(StoredNotification)
    /// Remove a queued notification (it was replaced by one delivered now).
    case dequeue(user: String, app: String, id: String)
    case recordCall(CallRecord)
    /// Replace the notification with the same app and id in place: in the delivered list, or in
    /// the summary queue when `queued`. An update, not an arrival: `hush.recent` counted it once
    /// already.
    case replace(StoredNotification, queued: Bool)
    /// Remove the notification with this app and id from the delivered list (its group shrinks)
    /// and from the summary queue (it is not in its summary): the app withdrew it.
    case withdraw(user: String, app: String, id: String)

    /// The user whose state the change touches.
    package var user: String {
        switch self {
        case .deliver(let n), .enqueue(let n), .replace(let n, _): n.user
        case .dequeue(let user, _, _), .withdraw(let user, _, _): user
        case .recordCall(let call): call.user
        }
    }
}
