/// One policy file: its name (as shown in errors) and its text.
package struct PolicySource: Sendable, Hashable {
    package var name: String
    package var text: String

    package init(name: String, text: String) {
        self.name = name
        self.text = text
    }
}
