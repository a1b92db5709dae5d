/// A notification category's presentation (docs/reference.md, "Categories").
public struct CategorySettings: Sendable, Hashable {
    public var summaryFormat: PluralFormat?
    public var hiddenPreview: PluralFormat?

    public init(summaryFormat: PluralFormat? = nil, hiddenPreview: PluralFormat? = nil) {
        self.summaryFormat = summaryFormat
        self.hiddenPreview = hiddenPreview
    }
}
