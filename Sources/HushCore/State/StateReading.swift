/// What the pipeline may read of state: a snapshot view, never written by the pipeline itself.
public protocol StateReading {
    func delivered(user: String, app: String, id: String) -> StoredNotification?
    func queued(user: String, app: String, id: String) -> StoredNotification?
    /// The delivered notifications in a group, oldest first.
    func groupMembers(user: String, groupID: String) -> [StoredNotification]
    /// Calls since an instant, oldest first.
    func calls(user: String, since: Double) -> [CallRecord]
    func manualFocus(user: String) -> ManualFocus?
    /// Delivered and queued notifications since an instant, for `hush.recent`.
    func recent(user: String, since: Double) -> [StoredNotification]
    /// Donated interactions since an instant.
    func interactions(user: String, since: Double) -> [Interaction]
    /// The digest of every notification delivered in the user's group, for a store that keeps
    /// one up to date; nil (the default) makes the pipeline read the members instead.
    func groupDigest(user: String, groupID: String) -> GroupDigest?
}

extension StateReading {
    public func groupDigest(user: String, groupID: String) -> GroupDigest? { nil }
}
