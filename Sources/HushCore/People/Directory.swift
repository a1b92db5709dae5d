/// The people a policy knows, for matching senders against focus lists, favorites and contacts.
/// Built once per prepared policy.
public struct Directory: Sendable {
    public let contacts: [Contact]
    private let contactHandles: [[Handle]]

    public init(contacts: [Contact]) {
        self.contacts = contacts
        self.contactHandles = contacts.map { $0.handles.map(Handle.init) }
    }

    /// The contact one of whose handles matches one of the person's.
    public func contact(for person: Person) -> Contact? {
        let handles = person.handles.map(Handle.init)
        return contactIndex(for: handles).map { contacts[$0] }
    }

    public func contact(forHandle handle: String) -> Contact? {
        contactIndex(for: [Handle(handle)]).map { contacts[$0] }
    }

    private func contactIndex(for handles: [Handle]) -> Int? {
        for (i, known) in contactHandles.enumerated() where known.contains(where: { k in handles.contains { k.matches($0) } }) {
            return i
        }
        return nil
    }

    /// Every handle of the person, widened by their contact's aliases.
    public func allHandles(of person: Person) -> [Handle] {
        var handles = person.handles.map(Handle.init)
        if let index = contactIndex(for: handles) { handles += contactHandles[index] }
        return handles
    }

    /// Whether the person matches any of `listed` (handles, each widened by its contact's aliases).
    public func person(_ person: Person, isAmong listed: [String]) -> Bool {
        let mine = allHandles(of: person)
        guard !mine.isEmpty else { return false }
        for entry in listed {
            var theirs = [Handle(entry)]
            if let index = contactIndex(for: theirs) { theirs += contactHandles[index] }
            if theirs.contains(where: { t in mine.contains { t.matches($0) } }) { return true }
        }
        return false
    }

    /// Same person: any handle in common, allowing for contacts' aliases.
    public func samePerson(_ a: Person, _ b: Person) -> Bool {
        let ha = allHandles(of: a)
        let hb = allHandles(of: b)
        return ha.contains { x in hb.contains { x.matches($0) } }
    }

    public func isFavorite(_ person: Person) -> Bool { contact(for: person)?.favorite ?? false }

    /// The name a person goes by: the policy's contact name, else their own, else the handle.
    public func displayName(of person: Person) -> String {
        person.name ?? contact(for: person)?.name ?? person.handle ?? "Someone"
    }
}
