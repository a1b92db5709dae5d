/// A format with an optional singular form: `"%u more"` or `{ one = "%u more message", other = … }`.
public struct PluralFormat: Sendable, Hashable {
    public var one: String?
    public var other: String

    public init(one: String? = nil, other: String) {
        self.one = one
        self.other = other
    }

    public func form(for count: Int) -> String { count == 1 ? (one ?? other) : other }

    /// Whether either form speaks of the summary arguments (`%@`).
    public var mentionsArguments: Bool { (one?.contains("%@") ?? false) || other.contains("%@") }

    public static let defaultSummary = PluralFormat(one: "%u more notification", other: "%u more notifications")
    public static let defaultPlaceholder = PluralFormat(other: "Notification")

    /// Replaces `%u` with the count and `%@` with the arguments; `%%` is a percent sign.
    public func render(count: Int, arguments: String? = nil) -> String {
        let format = form(for: count)
        var out = ""
        var iterator = format.makeIterator()
        while let c = iterator.next() {
            guard c == "%" else { out.append(c); continue }
            switch iterator.next() {
            case "u": out += String(count)
            case "@": out += arguments ?? ""
            case "%": out.append("%")
            case let other?: out.append("%"); out.append(other)
            case nil: out.append("%")
            }
        }
        return out
    }
}
