/// Someone a communication notification or an interaction names.
public struct Person: Sendable, Hashable {
    public var handle: String?
    public var name: String?
    /// An address-book id, when the app knows it.
    public var contact: String?
    public var aliases: [String]

    public init(handle: String? = nil, name: String? = nil, contact: String? = nil, aliases: [String] = []) {
        self.handle = handle
        self.name = name
        self.contact = contact
        self.aliases = aliases
    }

    /// Every handle this person is reachable by.
    public var handles: [String] { (handle.map { [$0] } ?? []) + aliases }

    /// What to call this person in a sentence: the name, else the handle.
    public var displayName: String { name ?? handle ?? contact ?? "Someone" }
}

/// The SiriKit intent attached to a communication notification.
public struct Communication: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable { case message, call }

    public var kind: Kind
    public var sender: Person?
    public var recipients: [Person]
    /// The speakable group name, for group conversations.
    public var group: String?
    public var conversation: String?
    public var service: String?

    public init(kind: Kind, sender: Person? = nil, recipients: [Person] = [], group: String? = nil,
                conversation: String? = nil, service: String? = nil) {
        self.kind = kind
        self.sender = sender
        self.recipients = recipients
        self.group = group
        self.conversation = conversation
        self.service = service
    }
}
