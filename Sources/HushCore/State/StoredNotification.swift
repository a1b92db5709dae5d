/// What Hush keeps of a notification in the delivered list or the summary queue.
package struct StoredNotification: Sendable, Hashable {
    package var user: String
    package var app: String
    package var id: String
    /// Arrival, UNIX seconds.
    package var date: Double
    package var title: String?
    package var body: String?
    package var category: String?
    package var threadID: String?
    /// The group it joins (nil when grouping is off).
    package var groupID: String?
    package var summaryArgument: String?
    package var summaryArgumentCount: Int
    package var relevance: Double?
    package var hasMedia: Bool
    /// UNIX seconds; nil: never expires.
    package var expiration: Double?
    /// For the summary queue: when its summary is delivered.
    package var summaryAt: Double?
    /// The communication sender's handle, for `hush.recent{ sender = }`.
    package var sender: String?

    package init(
        user: String, app: String, id: String, date: Double, title: String? = nil, body: String? = nil,
        category: String? = nil, threadID: String? = nil, groupID: String? = nil,
        summaryArgument: String? = nil, summaryArgumentCount: Int = 1, relevance: Double? = nil,
        hasMedia: Bool = false, expiration: Double? = nil, summaryAt: Double? = nil, sender: String? = nil
    ) {
        self.user = user
        self.app = app
        self.id = id
        self.date = date
        self.title = title
        self.body = body
        self.category = category
        self.threadID = threadID
        self.groupID = groupID
        self.summaryArgument = summaryArgument
        self.summaryArgumentCount = summaryArgumentCount
        self.relevance = relevance
        self.hasMedia = hasMedia
        self.expiration = expiration
        self.summaryAt = summaryAt
        self.sender = sender
    }
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
