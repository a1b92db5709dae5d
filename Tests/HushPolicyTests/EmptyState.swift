import HushCore

/// State with nothing in it, for rules that never need history.
struct EmptyState: StateReading {
    func delivered(user: String, app: String, id: String) -> StoredNotification? { nil }
    func queued(user: String, app: String, id: String) -> StoredNotification? { nil }
    func groupMembers(user: String, groupID: String) -> [StoredNotification] { [] }
    func calls(user: String, since: Double) -> [CallRecord] { [] }
    func manualFocus(user: String) -> ManualFocus? { nil }
    func recent(user: String, since: Double) -> [StoredNotification] { [] }
    func interactions(user: String, since: Double) -> [Interaction] { [] }
}
