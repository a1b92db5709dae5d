/// The group it joins and the line under it (docs/reference.md, "Grouping and the summary line").
extension Evaluation {
    /// As `Pipeline.groupID`, with the settings already resolved.
    var groupID: String? {
        switch settings.grouping {
        case .off: nil
        case .app: envelope.app
        case .automatic: subject.thread.map { Pipeline.threadGroupID(app: envelope.app, thread: $0) } ?? envelope.app
        }
    }

    mutating func group() throws {
        let id = groupID
        var count = 1
        if let id {
            let line: String?
            // A store that keeps digests gives the group's at once, when this notification is not
            // itself in the group already (replacing one in place).
            let key = envelope.collapseKey
            let existing = try deliveredEntry ?? state.delivered(user: envelope.user, app: envelope.app, id: key)
            if existing?.groupID != id, let digest = try state.groupDigest(user: envelope.user, groupID: id) {
                count = digest.memberCount + 1
                line = GroupSummary.line(digest, categories: policy.categories, previewsHidden: previewsHidden)
            } else {
                let others = try state.groupMembers(user: envelope.user, groupID: id).filter {
                    $0.id != key || $0.app != envelope.app
                }
                count = others.count + 1
                line = GroupSummary.line(others: others, categories: policy.categories, previewsHidden: previewsHidden)
            }
            decision.group = Decision.Group(id: id, count: count, summary: line)
            traceOnly("group", "group \(id) holds \(count)" + (line.map { ": \"\($0)\"" } ?? ""))
        } else {
            traceOnly("group", "grouping is off for \(settings.name)")
        }
        if previewsHidden {
            let format = envelope.category.flatMap { policy.categories[$0]?.hiddenPreview } ?? .defaultPlaceholder
            decision.placeholder = format.render(count: count)
        }
        if replacedQueued { changes.append(.dequeue(user: envelope.user, app: envelope.app, id: envelope.collapseKey)) }
        let delivered = stored(summaryAt: nil, groupID: id)
        changes.append(replacing == true ? .replace(delivered, queued: false) : .deliver(delivered))
    }
}
