/// An event (a summary delivered, the focus in force changed) as recorded in state: the outbox
/// that the service's event stream and webhook read from, in the order events were recorded.
package struct StoredEvent: Sendable, Hashable {
    /// The store's sequence number, increasing in recording order (0 before it is recorded). It is
    /// the event's id on the event stream (`Last-Event-ID`) and its webhook idempotency key.
    package var seq: Int64
    package var user: String
    /// When it happened, UNIX seconds.
    package var at: Double
    /// `summary` or `focus`.
    package var kind: String
    /// The event as one line of JSON, as it is sent.
    package var json: String

    package init(seq: Int64 = 0, user: String, at: Double, kind: String, json: String) {
        self.seq = seq
        self.user = user
        self.at = at
        self.kind = kind
        self.json = json
    }
}

/// How far a user's scheduled events were worked out: the focus last announced for them, and the
/// instant up to which (inclusive) focus changes and summaries were delivered. A restart goes on
/// from here, so nothing is announced twice or skipped.
package struct ScheduleMark: Sendable, Hashable {
    /// The focus last announced; nil when none is on (or none was ever announced).
    package var focus: String?
    /// Whether any focus event was ever worked out for the user (a user's first focus is announced
    /// only when one is on, as `hush simulate` does).
    package var announced: Bool
    /// UNIX seconds.
    package var through: Double

    package init(focus: String?, announced: Bool, through: Double) {
        self.focus = focus
        self.announced = announced
        self.through = through
    }
}

/// What a long-running Hush (`hush serve`) keeps besides the notifications: the events it
/// recorded (its outbox), how far each user's schedule was worked out, each user's own policy,
/// and how far each consumer (the webhook) has taken the outbox.
package protocol ServiceState: AnyObject {
    /// Whether the outbox is kept: false for a store in memory that only a batch command uses
    /// (`hush eval --ephemeral`), whose outbox nobody could read, so that its events are neither
    /// made nor kept (10 MB of summaries on 200,000 notifications).
    var keepsEvents: Bool { get }
    /// Records events at the end of the outbox, in order; returns them with their `seq`.
    @discardableResult
    func appendEvents(_ events: [StoredEvent]) throws -> [StoredEvent]
    /// Events recorded after `seq`, oldest first, at most `limit`; only `user`'s when given.
    func events(after seq: Int64, user: String?, limit: Int) throws -> [StoredEvent]
    /// The `seq` of the newest event recorded (0 when none).
    func lastEventSeq() throws -> Int64
    func scheduleMark(user: String) throws -> ScheduleMark?
    func setScheduleMark(user: String, _ mark: ScheduleMark) throws
    /// The user's own policy (Lua text), nil when they have none.
    func userPolicy(user: String) throws -> String?
    /// Sets (nil: removes) the user's own policy.
    func setUserPolicy(user: String, _ text: String?) throws
    /// How far the consumer `name` has taken the outbox (the last `seq` it acknowledged; 0 at first).
    func cursor(_ name: String) throws -> Int64
    func setCursor(_ name: String, _ seq: Int64) throws
    /// Every user the store knows anything about, sorted.
    func knownUsers() throws -> [String]
    /// Whether a summary of `user` is due at or before `t`: asked before every evaluation, so a
    /// store answers it without a write (and delivering only begins a write when one is).
    func hasDueSummaries(user: String, upTo t: Double) throws -> Bool
    /// Runs `body` so that its writes are made together or not at all: its own transaction, or a
    /// savepoint of the batch in progress. Reads inside see its writes.
    func atomically<T>(_ body: () throws -> T) throws -> T
}

extension ServiceState {
    package var keepsEvents: Bool { true }
}

/// What several `hush serve` instances sharing one store (`PostgresStateStore`) need of it so
/// that they act as one: each user's next due instant kept with the user (so any instance finds
/// it), users claimed for their due events by one instance at a time, and word of events another
/// instance recorded. A store with one owner keeps the defaults: the service keeps its own
/// queue of due users in memory.
package protocol SharedScheduling: AnyObject {
    /// Whether other processes share this store's state while this one runs.
    var isShared: Bool { get }
    /// When `user` next has an event to work out (nil: nothing ahead).
    func dueAt(user: String) throws -> Double?
    func setDueAt(user: String, _ t: Double?) throws
    /// Up to `limit` users with an event due at or before `t`, earliest first.
    func usersDue(upTo t: Double, limit: Int) throws -> [String]
    /// Claims `user` for the batch in progress without waiting: false when another process is
    /// working on them now (they are left for later).
    func claim(user: String) throws -> Bool
    /// Calls `onNew` whenever another process records events, until the returned closure is
    /// called; nil when the store has no such word (it has one owner).
    func watchEvents(_ onNew: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)?
}

extension SharedScheduling {
    package var isShared: Bool { false }
    package func dueAt(user: String) throws -> Double? { nil }
    package func setDueAt(user: String, _ t: Double?) throws {}
    package func usersDue(upTo t: Double, limit: Int) throws -> [String] { [] }
    package func claim(user: String) throws -> Bool { true }
    package func watchEvents(_ onNew: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)? { nil }
}
