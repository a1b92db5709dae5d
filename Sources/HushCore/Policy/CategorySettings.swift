/// A notification category's presentation (docs/reference.md, "Categories").
package struct CategorySettings: Sendable, Hashable {
    package var summaryFormat: PluralFormat?
    package var hiddenPreview: PluralFormat?

    package init(summaryFormat: PluralFormat? = nil, hiddenPreview: PluralFormat? = nil) {
        self.summaryFormat = summaryFormat
        self.hiddenPreview = hiddenPreview
    }
}
