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
        var id = groupID
        var count = 1
        if var groupID = id {
            let line: String?
            // A store that keeps digests gives the group's at once, when this notification is not
            // itself in the group already (replacing one in place).
            let key = envelope.collapseKey
            let existing = try deliveredEntry ?? state.delivered(user: envelope.user, app: envelope.app, id: key)
            if existing?.groupID != groupID, let digest = try state.groupDigest(user: envelope.user, groupID: groupID) {
                count = digest.memberCount + 1
                line = GroupSummary.line(digest, categories: policy.categories, previewsHidden: previewsHidden)
                groupID = Self.shared(groupID, digest.memberGroupID)
            } else {
                let others = try state.groupMembers(user: envelope.user, groupID: groupID).filter {
                    $0.id != key || $0.app != envelope.app
                }
                count = others.count + 1
                groupID = Self.shared(groupID, others.first?.groupID)
                line = GroupSummary.line(others: others, categories: policy.categories, previewsHidden: previewsHidden)
            }
            id = groupID
            decision.group = Decision.Group(id: groupID, count: count, summary: line)
            traceOnly("group", "group \(groupID) holds \(count)" + (line.map { ": \"\($0)\"" } ?? ""))
        } else {
            traceOnly("group", "grouping is off for \(settings.name)")
        }
        if previewsHidden {
            let format = envelope.category.flatMap { policy.categories[$0]?.hiddenPreview } ?? .defaultPlaceholder
            decision.placeholder = format.render(count: count)
        }
        if replacedQueued { changes.append(.dequeue(user: envelope.user, app: envelope.app, id: envelope.collapseKey)) }
        let delivered = takeStored(summaryAt: nil, groupID: id)
        changes.append(replacing == true ? .replace(delivered, queued: false) : .deliver(delivered))
    }

    /// The group's id as its members already carry it, when they do: equal text, one copy in
    /// memory for the whole group (a week of a thread's notifications kept one each).
    private static func shared(_ id: String, _ members: String?) -> String {
        guard let members, members == id else { return id }
        return members
    }
}
