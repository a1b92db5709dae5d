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
    /// The recipients. The line reader keeps their JSON text (checked as it reads) and makes the
    /// people only when asked: the pipeline never asks, only a rule reading `n.communication`
    /// does, and a message names several.
    package var recipients: [Person] {
        get {
            switch recipientsSource {
            case .people(let people): people
            case .text(let text): Envelope.readRecipients(text)
            }
        }
        set { recipientsSource = .people(newValue) }
    }
    private var recipientsSource: RecipientsSource
    /// The speakable group name, for group conversations.
    package var group: String?
    package var conversation: String?
    package var service: String?

    private enum RecipientsSource: Sendable {
        case people([Person])
        /// A JSON array of people, each checked as `Envelope.readPerson` reads them.
        case text([UInt8])
    }

    package init(
        kind: Kind, sender: Person? = nil, recipients: [Person] = [], group: String? = nil,
        conversation: String? = nil, service: String? = nil
    ) {
        self.kind = kind
        self.sender = sender
        self.recipientsSource = .people(recipients)
        self.group = group
        self.conversation = conversation
        self.service = service
    }

    /// `recipientsText`: a JSON array of people, checked as `Envelope.readPerson` reads them.
    init(
        kind: Kind, sender: Person?, recipientsText: [UInt8], group: String?, conversation: String?,
        service: String?
    ) {
        self.kind = kind
        self.sender = sender
        self.recipientsSource = .text(recipientsText)
        self.group = group
        self.conversation = conversation
        self.service = service
    }

    // Equal and hashed by the recipients themselves, however they are kept. (A member added to
    // the struct is added here too.)
    package static func == (a: Communication, b: Communication) -> Bool {
        a.kind == b.kind && a.sender == b.sender && a.group == b.group && a.conversation == b.conversation
            && a.service == b.service && a.recipients == b.recipients
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(sender)
        hasher.combine(recipients)
        hasher.combine(group)
        hasher.combine(conversation)
        hasher.combine(service)
    }
}
