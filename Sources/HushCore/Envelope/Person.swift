/// Someone a communication notification or an interaction names.
package struct Person: Sendable, Hashable {
    package var handle: String?
    package var name: String?
    /// An address-book id, when the app knows it.
    package var contact: String?
    package var aliases: [String]

    package init(handle: String? = nil, name: String? = nil, contact: String? = nil, aliases: [String] = []) {
        self.handle = handle
        self.name = name
        self.contact = contact
        self.aliases = aliases
    }

    /// Every handle this person is reachable by.
    package var handles: [String] { (handle.map { [$0] } ?? []) + aliases }

    /// What to call this person in a sentence: the name, else the handle.
    package var displayName: String { name ?? handle ?? contact ?? "Someone" }
}

/// The SiriKit intent attached to a communication notification.
package struct Communication: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable { case message, call }

    package var kind: Kind
    package var sender: Person?
    package var recipients: [Person]
    /// The speakable group name, for group conversations.
    package var group: String?
    package var conversation: String?
    package var service: String?

    package init(
        kind: Kind, sender: Person? = nil, recipients: [Person] = [], group: String? = nil,
        conversation: String? = nil, service: String? = nil
    ) {
        self.kind = kind
        self.sender = sender
        self.recipients = recipients
        self.group = group
        self.conversation = conversation
        self.service = service
    }
}
