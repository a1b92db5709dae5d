/// The line under a group that speaks of its *other* notifications (SPEC §5.9).
public enum GroupSummary {
    public static func line(others: [StoredNotification], categories: [String: CategorySettings]) -> String? {
        line(GroupDigest(members: others), categories: categories)
    }

    /// The line for a group whose other notifications are summed up in `digest`.
    public static func line(_ digest: GroupDigest, categories: [String: CategorySettings]) -> String? {
        let pieces = digest.pieces
        guard !pieces.isEmpty else { return nil }
        func format(of piece: GroupDigest.Piece) -> PluralFormat {
            piece.category.flatMap { categories[$0]?.summaryFormat } ?? .defaultSummary
        }
        if pieces.count == 1 {
            return render(format(of: pieces[0]), count: pieces[0].count, arguments: pieces[0].arguments)
        }
        if pieces.contains(where: { format(of: $0).mentionsArguments }) {
            return PluralFormat.defaultSummary.render(count: pieces.reduce(0) { $0 + $1.count })
        }
        return joinList(pieces.map { format(of: $0).render(count: $0.count) })
    }

    static func render(_ format: PluralFormat, count: Int, arguments: [String]) -> String {
        if format.mentionsArguments {
            if arguments.isEmpty { return PluralFormat.defaultSummary.render(count: count) }
            return format.render(count: count, arguments: joinList(arguments))
        }
        return format.render(count: count)
    }

    /// "A", "A and B", "A, B and C".
    public static func joinList(_ items: [String]) -> String {
        switch items.count {
        case 0: return ""
        case 1: return items[0]
        case 2: return items[0] + " and " + items[1]
        default:
            var size = 5 + 2 * (items.count - 2)
            for item in items { size += item.utf8.count }
            var out = ""
            out.reserveCapacity(size)
            for i in 0..<items.count - 1 {
                if i > 0 { out += ", " }
                out += items[i]
            }
            out += " and "
            out += items[items.count - 1]
            return out
        }
    }
}

/// What a group's summary line is made of, for a set of its notifications: per category, in order
/// of first appearance, the sum of their `summary-arg-count`s and their `summary-arg`s,
/// de-duplicated in order of first appearance. Built by adding notifications oldest first, so a
/// store can keep one up to date as notifications join a group instead of re-reading the group.
public struct GroupDigest: Sendable, Hashable {
    public struct Piece: Sendable, Hashable {
        public var category: String?
        public var count: Int
        public var arguments: [String]
    }

    public private(set) var pieces: [Piece] = []
    /// How many notifications were added.
    public private(set) var memberCount = 0

    public init() {}

    public init(members: some Sequence<StoredNotification>) {
        for member in members { add(member) }
    }

    public mutating func add(_ n: StoredNotification) {
        memberCount += 1
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
