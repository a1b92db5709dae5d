/// One policy file: its name (as shown in errors) and its text.
public struct PolicySource: Sendable, Hashable {
    public var name: String
    public var text: String

    public init(name: String, text: String) {
        self.name = name
        self.text = text
    }
}
