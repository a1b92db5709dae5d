import Foundation
public import HushCore

/// State in memory: for tests and `--ephemeral`. Not thread-safe: one owner at a time.
///
/// Everything is kept per user, so one user's reads never scan another's state. Like
/// `SQLiteStateStore`, and by the same rules (`RetentionPolicy`), the store forgets on its own, so
/// a long run's memory stays flat. Calls, arrivals and interactions are kept in arrival order and,
/// while that order is also time order (the usual case), read with a binary search. Each group
/// keeps its members in order and a `GroupDigest` of them, updated as members join.
public final class InMemoryStateStore: StateStore {
    /// How many days delivered notifications, arrivals and calls are kept.
    public let retentionDays: Double
    let retention: RetentionPolicy

    // The store has one owner at a time (not thread-safe), so the run-time exclusivity checks of
    // these hot properties are left out.
    @exclusivity(unchecked) private var users: [String: UserState] = [:]
    /// The last user looked up: a stream often has runs of one user, and an evaluation reads the
    /// same user's state several times.
    @exclusivity(unchecked) private var lastUser: String?
    @exclusivity(unchecked) private var lastState: UserState?
    /// The place the next notification new to a queue takes.
    private var nextQueuePlace = 0

    // What a long-running Hush keeps (`ServiceState`): small next to the notifications, so kept
    // plainly rather than per user.
    /// The outbox, by `seq` (increasing: appended in order, pruned without reordering).
    private var events: [StoredEvent] = []
    /// False: events are given their `seq` and not kept (`ServiceState.keepsEvents`).
    package var keepsEvents = true
    /// The `seq` the next event recorded takes: never given twice, even once events are pruned.
    private var nextEventSeq: Int64 = 1
    private var scheduleMarks: [String: ScheduleMark] = [:]
    private var userPolicies: [String: String] = [:]
    private var cursors: [String: Int64] = [:]

    /// An empty store that keeps delivered notifications, arrivals and calls 7 days.
    public init() {
        retentionDays = RetentionPolicy.defaultDays
        retention = .standard
    }

    /// An empty store.
    /// - Parameter retentionDays: how long delivered notifications, arrivals and calls are kept
    ///   (relative to the newest date applied for the user), as `SQLiteStateStore` does.
    /// - Throws: `HushError` `state_unusable` when it is not a positive number of days, as
    ///   `SQLiteStateStore` does.
    public convenience init(retentionDays: Double) throws(HushError) {
        do {
            try self.init(retentionDays: retentionDays, pruneEvery: RetentionPolicy.defaultPruneEvery)
        } catch {
            throw HushError(code: .stateUnusable, message: error.description)
        }
    }

    package init(retentionDays: Double, pruneEvery: Int) throws(RetentionError) {
        self.retentionDays = retentionDays
        retention = try RetentionPolicy(days: retentionDays, pruneEvery: pruneEvery)
    }

    // MARK: per user

    private typealias Key = AppAndID

    /// A queued notification and its place in the queue (`SummaryQueue` breaks ties by it).
    private struct Queued {
        let n: StoredNotification
        let place: Int
    }

    private final class Group {
        /// Oldest first.
        @exclusivity(unchecked) var members: [StoredNotification] = []
        /// Of `members`; nil when it must be rebuilt (a member was replaced or removed).
        @exclusivity(unchecked) var digest: GroupDigest? = GroupDigest()
    }

    private final class UserState {
        @exclusivity(unchecked) var delivered = ByAppAndID<StoredNotification>()
        /// No delivered notification is older than this (a lower bound; exact after a prune that
        /// scanned): a prune with an earlier cutoff has nothing to scan `delivered` for. Without
        /// it, every prune scanned the whole list, and a service's busy user, kept for days,
        /// cost a scan of tens of thousands of entries every 1,000 notifications.
        @exclusivity(unchecked) var oldestDelivered = Double.infinity
        @exclusivity(unchecked) var groups: [String: Group] = [:]
        @exclusivity(unchecked) var queue: [Key: Queued] = [:]
        /// No queued notification is due before this (a lower bound; exact after a take).
        @exclusivity(unchecked) var nextDue = Double.infinity
        @exclusivity(unchecked) var calls = ArrivalList<CallRecord>()
        @exclusivity(unchecked) var arrivals = ArrivalList<StoredNotification>()
        @exclusivity(unchecked) var interactions = ArrivalList<Interaction>()
        @exclusivity(unchecked) var manual: ManualFocus?
        @exclusivity(unchecked) var retention = RetentionBookEntry()

        /// Whether anything about the user is kept: not only the retention bookkeeping (which
        /// outlives what it was about), nor the empty state `setManualFocus(user, nil)` makes.
        var holdsAnything: Bool {
            !delivered.isEmpty || !queue.isEmpty || !calls.isEmpty || !arrivals.isEmpty || !interactions.isEmpty
                || manual != nil
        }
    }

    private func state(_ user: String) -> UserState? {
        if lastUser == user, let lastState { return lastState }
        guard let found = users[user] else { return nil }
        lastUser = user
        lastState = found
        return found
    }

    private func makeState(_ user: String) -> UserState {
        if let found = state(user) { return found }
        let created = UserState()
        users[user] = created
        lastUser = user
        lastState = created
        return created
    }

    // MARK: reading

    package func delivered(user: String, app: String, id: String) -> StoredNotification? {
        state(user)?.delivered[Key(app: app, id: id)]
    }

    package func queued(user: String, app: String, id: String) -> StoredNotification? {
        guard let s = state(user), !s.queue.isEmpty else { return nil }
        return s.queue[Key(app: app, id: id)]?.n
    }

    package func deliveredOrQueued(user: String, app: String, id: String) -> (
        delivered: StoredNotification?, queued: Bool
    ) {
        guard let s = state(user) else { return (nil, false) }
        let key = Key(app: app, id: id)
        if let delivered = s.delivered[key] { return (delivered, false) }
        return (nil, !s.queue.isEmpty && s.queue[key] != nil)
    }

    package func groupMembers(user: String, groupID: String) -> [StoredNotification] {
        state(user)?.groups[groupID]?.members ?? []
    }

    package func groupDigest(user: String, groupID: String) -> GroupDigest? {
        guard let group = state(user)?.groups[groupID] else { return GroupDigest() }
        if let digest = group.digest { return digest }
        let digest = GroupDigest(members: group.members)
        group.digest = digest
        return digest
    }

    package func calls(user: String, since: Double) -> [CallRecord] {
        state(user)?.calls.since(since) ?? []
    }

    package func manualFocus(user: String) -> ManualFocus? { state(user)?.manual }

    package func recent(user: String, since: Double) -> [StoredNotification] {
        state(user)?.arrivals.since(since) ?? []
    }

    package func interactions(user: String, since: Double) -> [Interaction] {
        state(user)?.interactions.since(since) ?? []
    }

    package func queuedNotifications(user: String) -> [StoredNotification] {
        guard let s = state(user) else { return [] }
        return SummaryQueue.listed(queueInOrder(s))
    }

    /// The user's queue in queue order.
    private func queueInOrder(_ s: UserState) -> [StoredNotification] {
        s.queue.values.sorted { $0.place < $1.place }.map(\.n)
    }

    // MARK: writing

    package func apply(_ changes: [StateChange]) {
        guard !changes.isEmpty else { return }
        var touched = RetentionPolicy.TouchedUsers()
        for change in changes {
            switch change {
            case .deliver(let n):
                let s = makeState(n.user)
                deliver(n, in: s)
                touched.note(n.user, date: n.date)
            case .enqueue(let n):
                let s = makeState(n.user)
                enqueue(n, in: s)
                s.arrivals.append(n, date: n.date)
                touched.note(n.user, date: n.date)
            case .replace(let n, let queued):
                let s = makeState(n.user)
                if queued {
                    enqueue(n, in: s)
                } else {
                    deliver(n, in: s, arrival: false)
                }
                touched.note(n.user, date: n.date)
            case .dequeue(let user, let app, let id):
                state(user)?.queue[Key(app: app, id: id)] = nil
                touched.note(user, date: -.infinity)
            case .withdraw(let user, let app, let id):
                if let s = state(user) { withdraw(Key(app: app, id: id), in: s) }
                touched.note(user, date: -.infinity)
            case .recordCall(let call):
                makeState(call.user).calls.append(call, date: call.date)
                touched.note(call.user, date: call.date)
            }
        }
        touched.forEach { user, newest in
            // A user with no state (a dequeue of nothing) has nothing to prune.
            guard let s = state(user), let cutoffs = retention.noteApply(&s.retention, newest: newest) else { return }
            prune(s, before: cutoffs.notifications)
            s.interactions.removeOlder(than: cutoffs.interactions)
        }
    }

    /// Adds to the queue, or replaces the queued notification with the same key in its place.
    private func enqueue(_ n: StoredNotification, in s: UserState) {
        let key = Key(app: n.app, id: n.id)
        // One lookup for a notification new to the queue, the usual case.
        if let old = s.queue.updateValue(Queued(n: n, place: nextQueuePlace), forKey: key) {
            s.queue[key] = Queued(n: n, place: old.place)
        } else {
            nextQueuePlace += 1
        }
        s.nextDue = min(s.nextDue, n.summaryAt ?? .infinity)
    }

    /// Removes a delivered or queued notification; its group shrinks (and goes when empty).
    private func withdraw(_ key: Key, in s: UserState) {
        s.queue[key] = nil
        guard let old = s.delivered.removeValue(forKey: key) else { return }
        if let groupID = old.groupID, let group = s.groups[groupID] {
            group.members.removeAll { $0.hasKey(app: key.app, id: key.id) }
            group.digest = nil
            if group.members.isEmpty { s.groups[groupID] = nil }
        }
    }

    private func deliver(_ n: StoredNotification, in s: UserState, arrival: Bool = true) {
        let key = Key(app: n.app, id: n.id)
        s.oldestDelivered = min(s.oldestDelivered, n.date)
        let old = s.delivered.updateValue(n, forKey: key)
        if let old, let oldGroup = old.groupID, oldGroup == n.groupID, let group = s.groups[oldGroup] {
            // Replaced in place: same position in its group.
            if let i = group.members.lastIndex(where: { $0.hasKey(app: n.app, id: n.id) }) {
                group.members[i] = n
                group.digest = nil
            }
        } else {
            if let old, let oldGroup = old.groupID, let group = s.groups[oldGroup] {
                group.members.removeAll { $0.hasKey(app: n.app, id: n.id) }
                group.digest = nil
                if group.members.isEmpty { s.groups[oldGroup] = nil }
            }
            if let groupID = n.groupID {
                let group: Group
                if let found = s.groups[groupID] { group = found } else { group = Group(); s.groups[groupID] = group }
                group.members.append(n)
                group.digest?.add(n)
            }
        }
        // A notification delivered by its summary was counted when it arrived.
        if arrival && n.summaryAt == nil { s.arrivals.append(n, date: n.date) }
    }

    package func deliverDueSummaries(
        user: String, upTo t: Double,
        recording changes: (SummaryBatch) throws -> [StateChange]
    ) throws -> [SummaryBatch] {
        guard let s = state(user), s.nextDue <= t else { return [] }
        let batches = takeDueSummaries(user: user, upTo: t)
        for batch in batches { apply(try changes(batch)) }
        return batches
    }

    package func hasDueSummaries(user: String, upTo t: Double) -> Bool {
        guard let s = state(user) else { return false }
        return s.nextDue <= t
    }

    package func takeDueSummaries(user: String, upTo t: Double) -> [SummaryBatch] {
        guard let s = state(user), s.nextDue <= t else { return [] }
        let batches = SummaryQueue.dueBatches(of: queueInOrder(s), user: user, upTo: t)
        s.queue = s.queue.filter { !SummaryQueue.isDue($0.value.n, upTo: t) }
        s.nextDue = s.queue.values.lazy.compactMap(\.n.summaryAt).min() ?? .infinity
        return batches
    }

    package func setManualFocus(user: String, _ focus: ManualFocus?) { makeState(user).manual = focus }

    package func addInteractions(_ interactions: [Interaction]) {
        for interaction in interactions {
            makeState(interaction.user).interactions.append(interaction, date: interaction.date)
        }
    }

    /// Also forgets the events older than `t` that every webhook has acknowledged (`OutboxHolds`).
    package func prune(before t: Double) {
        for s in users.values { prune(s, before: t) }
        let prune = (cursors[OutboxHolds.prunesName] ?? 0) + 1
        cursors[OutboxHolds.prunesName] = prune
        // An event a webhook has not acknowledged stays, however old.
        let acknowledged =
            OutboxHolds.acknowledged(cursors: cursors, prune: prune, retentionSeconds: retention.seconds) ?? .max
        events.removeAll { $0.at < t && $0.seq <= acknowledged }
    }

    // MARK: service state

    @discardableResult
    package func appendEvents(_ events: [StoredEvent]) -> [StoredEvent] {
        let recorded = events.map { event in
            var event = event
            event.seq = nextEventSeq
            nextEventSeq += 1
            return event
        }
        if keepsEvents { self.events.append(contentsOf: recorded) }
        return recorded
    }

    package func events(after seq: Int64, user: String?, limit: Int) -> [StoredEvent] {
        guard limit > 0 else { return [] }
        // By seq: a binary search for the first one after `seq`.
        var low = 0, high = events.count
        while low < high {
            let mid = (low + high) / 2
            if events[mid].seq <= seq { low = mid + 1 } else { high = mid }
        }
        let after = events[low...]
        guard let user else { return Array(after.prefix(limit)) }
        return Array(after.lazy.filter { $0.user == user }.prefix(limit))
    }

    /// The highest seq ever given, as `SQLiteStateStore` answers: it stays once the events are pruned.
    package func lastEventSeq() -> Int64 { nextEventSeq - 1 }

    package func scheduleMark(user: String) -> ScheduleMark? { scheduleMarks[user] }

    package func setScheduleMark(user: String, _ mark: ScheduleMark) { scheduleMarks[user] = mark }

    package func userPolicy(user: String) -> String? { userPolicies[user] }

    package func setUserPolicy(user: String, _ text: String?) { userPolicies[user] = text }

    package func cursor(_ name: String) -> Int64 { cursors[name] ?? 0 }

    package func setCursor(_ name: String, _ seq: Int64) { cursors[name] = seq }

    package func knownUsers() -> [String] {
        var known = Set(users.lazy.filter { $0.value.holdsAnything }.map(\.key))
        known.formUnion(scheduleMarks.keys)
        known.formUnion(userPolicies.keys)
        for event in events { known.insert(event.user) }
        return known.sorted()
    }

    /// Just runs `body`: a write in memory cannot fail halfway, so there is nothing to undo. (What
    /// `body` wrote before throwing stays, as with `deliverDueSummaries`.)
    package func atomically<T>(_ body: () throws -> T) rethrows -> T { try body() }

    // MARK: cache hooks (see `UserRows`)

    fileprivate func forgetState(_ user: String) {
        users[user] = nil
        if lastUser == user {
            lastUser = nil
            lastState = nil
        }
    }

    fileprivate func loadState(_ user: String, _ rows: UserRows) {
        forgetState(user)
        let s = makeState(user)
        for n in rows.delivered { deliver(n, in: s, arrival: false) }
        for n in rows.queue { enqueue(n, in: s) }
        for call in rows.calls { s.calls.append(call, date: call.date) }
        for n in rows.arrivals { s.arrivals.append(n, date: n.date) }
        s.manual = rows.manualFocus
        s.retention = rows.retention
    }

    fileprivate func holdsState(_ user: String) -> Bool { users[user] != nil }

    fileprivate func holdsAnythingState(_ user: String) -> Bool { state(user)?.holdsAnything ?? false }

    fileprivate func retentionState(_ user: String) -> RetentionBookEntry? { state(user)?.retention }

    // MARK: retention

    private func prune(_ s: UserState, before t: Double) {
        if s.oldestDelivered < t { pruneDelivered(s, before: t) }
        s.calls.removeOlder(than: t)
        s.arrivals.removeOlder(than: t)
    }

    private func pruneDelivered(_ s: UserState, before t: Double) {
        var touched: Set<String> = []
        var old: [Key] = []
        var oldestKept = Double.infinity
        s.delivered.forEach { key, n in
            let date = n.date
            if date < t {
                old.append(key)
                if let group = n.groupID { touched.insert(group) }
            } else {
                oldestKept = min(oldestKept, date)
            }
        }
        s.oldestDelivered = oldestKept
        for key in old { s.delivered.removeValue(forKey: key) }
        for groupID in touched {
            guard let group = s.groups[groupID] else { continue }
            group.members.removeAll { $0.date < t }
            group.digest = nil
            if group.members.isEmpty { s.groups[groupID] = nil }
        }
    }
}

/// Items kept in arrival order, with their dates. While arrival order is also time order (the
/// usual case), reading those since an instant and forgetting older ones are a binary search;
/// otherwise a scan. A prune that finds nothing older than its cutoff (the usual case: a user is
/// pruned every 1,000 notifications) returns at once, sorted or not.
struct ArrivalList<Item> {
    private var items: [Item] = []
    private var dates: [Double] = []
    private var sorted = true
    /// The earliest of `dates` (+infinity when empty). A service's dates go back a little when
    /// requests reach the state thread out of the order their clocks were read in; once one
    /// does, the list is a scan, and without this each prune copied it whole.
    private var earliest = Double.infinity

    var isEmpty: Bool { items.isEmpty }

    mutating func append(_ item: Item, date: Double) {
        if let last = dates.last, date < last { sorted = false }
        items.append(item)
        dates.append(date)
        earliest = min(earliest, date)
    }

    /// Index of the first date at or after `t` (sorted only).
    private func firstIndex(atOrAfter t: Double) -> Int {
        var low = 0, high = dates.count
        while low < high {
            let mid = (low + high) / 2
            if dates[mid] < t { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Those dated at or after `t`, in arrival order.
    func since(_ t: Double) -> [Item] {
        if sorted { return Array(items[firstIndex(atOrAfter: t)...]) }
        var out: [Item] = []
        for i in dates.indices where dates[i] >= t { out.append(items[i]) }
        return out
    }

    mutating func removeOlder(than t: Double) {
        guard earliest < t else { return }
        if sorted {
            let k = firstIndex(atOrAfter: t)
            if k > 0 {
                items.removeFirst(k)
                dates.removeFirst(k)
            }
            earliest = dates.first ?? .infinity
            return
        }
        var keptItems: [Item] = []
        var keptDates: [Double] = []
        var isSorted = true
        var keptEarliest = Double.infinity
        for i in dates.indices where !(dates[i] < t) {
            if let last = keptDates.last, dates[i] < last { isSorted = false }
            keptItems.append(items[i])
            keptDates.append(dates[i])
            keptEarliest = min(keptEarliest, dates[i])
        }
        items = keptItems
        dates = keptDates
        sorted = isSorted
        earliest = keptEarliest
    }
}

// MARK: - A cache of another store

/// What a store that keeps users elsewhere (`PostgresStateStore`) loads into an in-memory store to
/// answer reads from memory: one user's rows, each list in the order the other store keeps it.
package struct UserRows: Sendable {
    /// Delivered notifications, in their order within a group (a replaced one keeps its place).
    package var delivered: [StoredNotification] = []
    /// The summary queue in queue order.
    package var queue: [StoredNotification] = []
    /// Calls and arrivals in arrival order.
    package var calls: [CallRecord] = []
    package var arrivals: [StoredNotification] = []
    package var manualFocus: ManualFocus?
    package var retention = RetentionBookEntry()

    package init() {}
}

extension InMemoryStateStore {
    /// Forgets everything kept about `user` (interactions too): the user is loaded again from the
    /// store this one caches.
    package func forget(user: String) {
        forgetState(user)
    }

    /// Replaces what is kept about `user` with `rows`.
    package func load(user: String, _ rows: UserRows) {
        loadState(user, rows)
    }

    /// Whether anything is kept about `user`.
    package func holds(user: String) -> Bool { holdsState(user) }

    /// Whether anything about `user` is kept that `knownUsers` counts.
    package func holdsAnything(user: String) -> Bool { holdsAnythingState(user) }

    /// The user's retention bookkeeping, to be kept with the user's rows.
    package func retentionEntry(user: String) -> RetentionBookEntry? { retentionState(user) }
}
