/// Someone the policy knows by name (docs/reference.md, "Contacts").
package struct Contact: Sendable, Hashable {
    package var handle: String
    package var name: String?
    package var favorite: Bool
    package var aliases: [String]

    package init(handle: String, name: String? = nil, favorite: Bool = false, aliases: [String] = []) {
        self.handle = handle
        self.name = name
        self.favorite = favorite
        self.aliases = aliases
    }

    package var handles: [String] { [handle] + aliases }
}
