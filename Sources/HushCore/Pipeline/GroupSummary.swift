/// The line under a group that speaks of its *other* notifications (SPEC §5.9).
public enum GroupSummary {
    public static func line(others: [StoredNotification], categories: [String: CategorySettings]) -> String? {
        guard !others.isEmpty else { return nil }
        struct Piece {
            var category: String?
            var count = 0
            var arguments: [String] = []
        }
        var pieces: [Piece] = []
        for other in others {
            let index: Int
            if let found = pieces.firstIndex(where: { $0.category == other.category }) {
                index = found
            } else {
                pieces.append(Piece(category: other.category))
                index = pieces.count - 1
            }
            pieces[index].count += other.summaryArgumentCount
            if let argument = other.summaryArgument, !argument.isEmpty, !pieces[index].arguments.contains(argument) {
                pieces[index].arguments.append(argument)
            }
        }
        func format(of piece: Piece) -> PluralFormat {
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
        default: return items.dropLast().joined(separator: ", ") + " and " + items[items.count - 1]
        }
    }
}
