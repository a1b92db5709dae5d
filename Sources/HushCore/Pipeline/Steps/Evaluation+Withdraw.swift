/// Withdraw lines (docs/reference.md, "Withdraw lines").
extension Evaluation {
    /// A withdraw line: removes the delivered or queued notification with this app and collapse
    /// key; nothing else of the pipeline runs.
    mutating func withdraw() throws {
        decision.delivery = .withdrawn
        let user = envelope.user, app = envelope.app, key = envelope.collapseKey
        if let delivered = try state.delivered(user: user, app: app, id: key) {
            decision.replaces = key
            changes.append(.withdraw(user: user, app: app, id: key))
            var text = "withdrawn by \(settings.name): the delivered notification \(key) is removed"
            if let groupID = delivered.groupID {
                let remaining = try state.groupMembers(user: user, groupID: groupID).filter {
                    $0.id != key || $0.app != app
                }
                // The line under the group now speaks of all but its newest notification.
                let line = GroupSummary.line(
                    others: Array(remaining.dropLast()), categories: policy.categories,
                    previewsHidden: previewsHidden)
                decision.group = Decision.Group(id: groupID, count: remaining.count, summary: line)
                text += "; its group \(groupID) now holds \(remaining.count)"
            }
            note("withdraw", text)
        } else if let queued = try state.queued(user: user, app: app, id: key) {
            decision.replaces = key
            changes.append(.withdraw(user: user, app: app, id: key))
            let at = queued.summaryAt.map { " at " + Schedule.formatTime(clock.local($0).minuteOfDay) } ?? ""
            note("withdraw", "withdrawn by \(settings.name): \(key) is taken out of the Scheduled Summary\(at)")
        } else {
            note("withdraw", "nothing to withdraw: no delivered or waiting notification \(key) from \(settings.name)")
        }
    }
}
