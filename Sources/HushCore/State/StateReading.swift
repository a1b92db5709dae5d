/// What the pipeline may read of state: a snapshot view, never written by the pipeline itself.
/// A read that fails throws an error saying what could not be read: a decision is never made from
/// state that only looks empty. (A store that cannot fail, in memory, implements them without `throws`.)
package protocol StateReading {
    func delivered(user: String, app: String, id: String) throws -> StoredNotification?
    func queued(user: String, app: String, id: String) throws -> StoredNotification?
    /// The delivered notifications in a group, oldest first.
    func groupMembers(user: String, groupID: String) throws -> [StoredNotification]
    /// Calls since an instant, oldest first.
    func calls(user: String, since: Double) throws -> [CallRecord]
    func manualFocus(user: String) throws -> ManualFocus?
    /// Delivered and queued notifications since an instant, for `hush.recent`.
    func recent(user: String, since: Double) throws -> [StoredNotification]
    /// Donated interactions since an instant.
    func interactions(user: String, since: Double) throws -> [Interaction]
    /// The digest of every notification delivered in the user's group, for a store that keeps
    /// one up to date; nil (the default) makes the pipeline read the members instead.
    func groupDigest(user: String, groupID: String) throws -> GroupDigest?
    /// The delivered notification with this key, and, when none is, whether one is queued under
    /// it: what an evaluation asks of every notification (is it an update?), in one call.
    func deliveredOrQueued(user: String, app: String, id: String) throws -> (
        delivered: StoredNotification?, queued: Bool
    )
}

extension StateReading {
    package func groupDigest(user: String, groupID: String) -> GroupDigest? { nil }

    package func deliveredOrQueued(user: String, app: String, id: String) throws -> (
        delivered: StoredNotification?, queued: Bool
    ) {
        if let delivered = try delivered(user: user, app: app, id: id) { return (delivered, false) }
        return (nil, try queued(user: user, app: app, id: id) != nil)
    }
}
