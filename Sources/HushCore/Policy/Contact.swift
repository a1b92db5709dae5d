/// Someone the policy knows by name (docs/reference.md, "Contacts").
public struct Contact: Sendable, Hashable {
    public var handle: String
    public var name: String?
    public var favorite: Bool
    public var aliases: [String]

    public init(handle: String, name: String? = nil, favorite: Bool = false, aliases: [String] = []) {
        self.handle = handle
        self.name = name
        self.favorite = favorite
        self.aliases = aliases
    }

    public var handles: [String] { [handle] + aliases }
}
