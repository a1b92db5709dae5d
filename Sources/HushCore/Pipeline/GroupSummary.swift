/// The line under a group that speaks of its *other* notifications (docs/reference.md, "Grouping and the summary line").
package enum GroupSummary {
    package static func line(
        others: [StoredNotification], categories: [String: CategorySettings],
        previewsHidden: Bool = false
    ) -> String? {
        line(GroupDigest(members: others), categories: categories, previewsHidden: previewsHidden)
    }

    /// The line for a group whose other notifications are summed up in `digest`. Categories with
    /// the same format (those with none share the default) make one piece; with previews hidden
    /// the line names nobody (a format with `%@` gives way to the default count form).
    package static func line(
        _ digest: GroupDigest, categories: [String: CategorySettings],
        previewsHidden: Bool = false
    ) -> String? {
        guard !digest.pieces.isEmpty else { return nil }
        if digest.pieces.count == 1 {
            // One category (the usual group): the piece as it is, without the merging below.
            let piece = digest.pieces[0]
            var format = piece.category.flatMap { categories[$0]?.summaryFormat } ?? .defaultSummary
            if previewsHidden && format.mentionsArguments { format = .defaultSummary }
            return render(format, count: piece.count, arguments: piece.arguments)
        }
        var pieces: [(format: PluralFormat, count: Int, arguments: [String])] = []
        for piece in digest.pieces {
            var format = piece.category.flatMap { categories[$0]?.summaryFormat } ?? .defaultSummary
            if previewsHidden && format.mentionsArguments { format = .defaultSummary }
            if let i = pieces.firstIndex(where: { $0.format == format }) {
                pieces[i].count += piece.count
                for argument in piece.arguments where !pieces[i].arguments.contains(argument) {
                    pieces[i].arguments.append(argument)
                }
            } else {
                pieces.append((format, piece.count, piece.arguments))
            }
        }
        if pieces.count == 1 {
            return render(pieces[0].format, count: pieces[0].count, arguments: pieces[0].arguments)
        }
        if pieces.contains(where: { $0.format.mentionsArguments }) {
            return PluralFormat.defaultSummary.render(count: pieces.reduce(0) { $0 + $1.count })
        }
        return joinList(pieces.map { $0.format.render(count: $0.count) })
    }

    static func render(_ format: PluralFormat, count: Int, arguments: [String]) -> String {
        if format.mentionsArguments {
            if arguments.isEmpty { return PluralFormat.defaultSummary.render(count: count) }
            return format.render(count: count, arguments: joinList(arguments))
        }
        return format.render(count: count)
    }

    /// "A", "A and B", "A, B and C".
    package static func joinList(_ items: [String]) -> String {
        switch items.count {
        case 0: return ""
        case 1: return items[0]
        default:
            var size = 5 + 2 * (items.count - 2)
            for item in items { size += item.utf8.count }
            var out = TextBuffer(capacity: size)
            for i in 0..<items.count - 1 {
                if i > 0 { out += ", " }
                out += items[i]
            }
            out += " and "
            out += items[items.count - 1]
            return out.string
        }
    }
}

/// What a group's summary line is made of, for a set of its notifications: per category, in order
/// of first appearance, the sum of their `summary-arg-count`s and their `summary-arg`s,
/// de-duplicated in order of first appearance. Built by adding notifications oldest first, so a
/// store can keep one up to date as notifications join a group instead of re-reading the group.
package struct GroupDigest: Sendable, Hashable {
    package struct Piece: Sendable, Hashable {
        package var category: String?
        package var count: Int
        package var arguments: [String]
    }

    package private(set) var pieces: [Piece] = []
    /// How many notifications were added.
    package private(set) var memberCount = 0
    /// The group id its first member carries: the string a new member reuses, so a group's
    /// members share one copy of their id in memory instead of one each.
    package private(set) var memberGroupID: String?

    package init() {}

    package init(members: some Sequence<StoredNotification>) {
        for member in members { add(member) }
    }

    package mutating func add(_ n: StoredNotification) {
        memberCount += 1
        if memberGroupID == nil { memberGroupID = n.groupID }
        let index: Int
        if let found = pieces.firstIndex(where: { $0.category == n.category }) {
            index = found
        } else {
            pieces.append(Piece(category: n.category, count: 0, arguments: []))
            index = pieces.count - 1
        }
        pieces[index].count += n.summaryArgumentCount
        if let argument = n.summaryArgument, !argument.isEmpty, !pieces[index].arguments.contains(argument) {
            pieces[index].arguments.append(argument)
        }
    }
}
