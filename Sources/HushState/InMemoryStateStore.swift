import HushCore

/// State in memory: for tests and `--ephemeral`. Not thread-safe: one owner at a time.
public final class InMemoryStateStore: StateStore {
    private struct Key: Hashable {
        var user: String
        var app: String
        var id: String
    }

    private var delivered: [Key: StoredNotification] = [:]
    /// Delivered keys per user and group, oldest first.
    private var groups: [String: [String: [Key]]] = [:]
    private var queue: [Key: StoredNotification] = [:]
    private var callLog: [String: [CallRecord]] = [:]
    private var manual: [String: ManualFocus] = [:]
    private var donated: [String: [Interaction]] = [:]
    private var arrivals: [String: [StoredNotification]] = [:]

    public init() {}

    public func delivered(user: String, app: String, id: String) -> StoredNotification? {
        delivered[Key(user: user, app: app, id: id)]
    }

    public func queued(user: String, app: String, id: String) -> StoredNotification? {
        queue[Key(user: user, app: app, id: id)]
    }

    public func groupMembers(user: String, groupID: String) -> [StoredNotification] {
        (groups[user]?[groupID] ?? []).compactMap { delivered[$0] }
    }

    public func calls(user: String, since: Double) -> [CallRecord] {
        (callLog[user] ?? []).filter { $0.date >= since }
    }

    public func manualFocus(user: String) -> ManualFocus? { manual[user] }

    public func recent(user: String, since: Double) -> [StoredNotification] {
        (arrivals[user] ?? []).filter { $0.date >= since }
    }

    public func interactions(user: String, since: Double) -> [Interaction] {
        (donated[user] ?? []).filter { $0.date >= since }
    }

    public func queuedNotifications(user: String) -> [StoredNotification] {
        queue.values.filter { $0.user == user }.sorted { ($0.summaryAt ?? 0, $0.date) < ($1.summaryAt ?? 0, $1.date) }
    }

    public func apply(_ changes: [StateChange]) {
        for change in changes {
            switch change {
            case .deliver(let n): deliver(n)
            case .enqueue(let n):
                queue[Key(user: n.user, app: n.app, id: n.id)] = n
                arrivals[n.user, default: []].append(n)
            case .dequeue(let user, let app, let id):
                queue[Key(user: user, app: app, id: id)] = nil
            case .recordCall(let call):
                callLog[call.user, default: []].append(call)
            }
        }
    }

    private func deliver(_ n: StoredNotification) {
        let key = Key(user: n.user, app: n.app, id: n.id)
        if let old = delivered[key], let oldGroup = old.groupID, oldGroup != n.groupID {
            groups[n.user]?[oldGroup]?.removeAll { $0 == key }
        }
        let isNew = delivered[key]?.groupID != n.groupID || delivered[key] == nil
        delivered[key] = n
        if let group = n.groupID, isNew { groups[n.user, default: [:]][group, default: []].append(key) }
        // A notification delivered by its summary was counted when it arrived.
        if n.summaryAt == nil { arrivals[n.user, default: []].append(n) }
    }

    public func takeDueSummaries(user: String, upTo t: Double) -> [SummaryBatch] {
        let due = queue.values.filter { $0.user == user && ($0.summaryAt ?? .infinity) <= t }
        guard !due.isEmpty else { return [] }
        var batches: [Double: [StoredNotification]] = [:]
        for n in due {
            batches[n.summaryAt!, default: []].append(n)
            queue[Key(user: n.user, app: n.app, id: n.id)] = nil
        }
        return batches.keys.sorted().map { at in
            let all = batches[at]!
            let dropped = all.filter { ($0.expiration ?? .infinity) < at }.sorted { $0.date < $1.date }
            let shown = all.filter { ($0.expiration ?? .infinity) >= at }.sorted(by: SummaryBatch.presentationOrder)
            return SummaryBatch(user: user, at: at, notifications: shown, dropped: dropped)
        }
    }

    public func setManualFocus(user: String, _ focus: ManualFocus?) { manual[user] = focus }

    public func addInteractions(_ interactions: [Interaction]) {
        for interaction in interactions { donated[interaction.user, default: []].append(interaction) }
    }

    public func prune(before t: Double) {
        for (key, n) in delivered where n.date < t {
            delivered[key] = nil
            if let group = n.groupID { groups[n.user]?[group]?.removeAll { $0 == key } }
        }
        for user in callLog.keys { callLog[user]?.removeAll { $0.date < t } }
        for user in arrivals.keys { arrivals[user]?.removeAll { $0.date < t } }
    }
}
