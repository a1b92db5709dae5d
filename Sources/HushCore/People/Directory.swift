/// The people a policy knows, for matching senders against focus lists, favorites and contacts.
/// Built once per prepared policy: the contacts' handles are normalised and indexed by what
/// matching handles share (`Handle.Bucket`), and the handles listed in focuses are normalised and
/// widened by their contact's aliases ahead of time.
public struct Directory: Sendable {
    public let contacts: [Contact]
    private let contactHandles: [[Handle]]
    /// Contact indices, ascending, by the buckets of their handles.
    private let contactBuckets: [Handle.Bucket: [Int]]
    /// Listed entries (focus `people`), each as the handles it stands for.
    private let listedHandles: [String: [Handle]]

    /// - Parameter listed: handles that will be looked up as lists (`person(_:isAmong:)`), to prepare.
    public init(contacts: [Contact], listed: [String] = []) {
        self.contacts = contacts
        let contactHandles = contacts.map { $0.handles.map(Handle.init) }
        self.contactHandles = contactHandles
        var buckets: [Handle.Bucket: [Int]] = [:]
        for (i, handles) in contactHandles.enumerated() {
            for handle in handles where buckets[handle.bucket]?.last != i { buckets[handle.bucket, default: []].append(i) }
        }
        self.contactBuckets = buckets
        var listedHandles: [String: [Handle]] = [:]
        for entry in listed where listedHandles[entry] == nil {
            listedHandles[entry] = Self.expand(entry, contactHandles: contactHandles, buckets: buckets)
        }
        self.listedHandles = listedHandles
    }

    /// A person with their handles normalised and their contact found, once, for several questions.
    public struct Resolved: Sendable {
        public let person: Person
        /// The person's own handles.
        let handles: [Handle]
        public let contactIndex: Int?
    }

    public func resolve(_ person: Person) -> Resolved {
        let handles = person.handles.map(Handle.init)
        return Resolved(person: person, handles: handles, contactIndex: contactIndex(for: handles))
    }

    /// The contact one of whose handles matches one of the person's.
    public func contact(for person: Person) -> Contact? {
        contactIndex(for: person.handles.map(Handle.init)).map { contacts[$0] }
    }

    public func contact(for resolved: Resolved) -> Contact? { resolved.contactIndex.map { contacts[$0] } }

    public func contact(forHandle handle: String) -> Contact? {
        contactIndex(for: [Handle(handle)]).map { contacts[$0] }
    }

    /// The first contact (in declaration order) with a handle matching one of `handles`.
    private func contactIndex(for handles: [Handle]) -> Int? {
        Self.contactIndex(for: handles, contactHandles: contactHandles, buckets: contactBuckets)
    }

    private static func contactIndex(for handles: [Handle], contactHandles: [[Handle]],
                                     buckets: [Handle.Bucket: [Int]]) -> Int? {
        var best: Int?
        for handle in handles {
            guard let candidates = buckets[handle.bucket] else { continue }
            for i in candidates {
                if let best, best <= i { break }
                if contactHandles[i].contains(where: { $0.matches(handle) }) {
                    best = i
                    break
                }
            }
        }
        return best
    }

    /// Every handle of the person, widened by their contact's aliases.
    public func allHandles(of person: Person) -> [Handle] {
        allHandles(of: resolve(person))
    }

    func allHandles(of resolved: Resolved) -> [Handle] {
        guard let index = resolved.contactIndex else { return resolved.handles }
        return resolved.handles + contactHandles[index]
    }

    /// An entry of a list: its handle, widened by its contact's aliases.
    private func expand(_ entry: String) -> [Handle] {
        Self.expand(entry, contactHandles: contactHandles, buckets: contactBuckets)
    }

    private static func expand(_ entry: String, contactHandles: [[Handle]], buckets: [Handle.Bucket: [Int]]) -> [Handle] {
        var theirs = [Handle(entry)]
        if let index = contactIndex(for: theirs, contactHandles: contactHandles, buckets: buckets) { theirs += contactHandles[index] }
        return theirs
    }

    /// Whether the person matches any of `listed` (handles, each widened by its contact's aliases).
    public func person(_ person: Person, isAmong listed: [String]) -> Bool {
        self.person(resolve(person), isAmong: listed)
    }

    public func person(_ resolved: Resolved, isAmong listed: [String]) -> Bool {
        guard !listed.isEmpty else { return false }
        let mine = allHandles(of: resolved)
        guard !mine.isEmpty else { return false }
        for entry in listed {
            let theirs = listedHandles[entry] ?? expand(entry)
            if theirs.contains(where: { t in mine.contains { t.matches($0) } }) { return true }
        }
        return false
    }

    /// Same person: any handle in common, allowing for contacts' aliases.
    public func samePerson(_ a: Person, _ b: Person) -> Bool {
        samePerson(resolve(a), resolve(b))
    }

    public func samePerson(_ a: Resolved, _ b: Resolved) -> Bool {
        let ha = allHandles(of: a)
        let hb = allHandles(of: b)
        return ha.contains { x in hb.contains { x.matches($0) } }
    }

    public func isFavorite(_ person: Person) -> Bool { contact(for: person)?.favorite ?? false }

    public func isFavorite(_ resolved: Resolved) -> Bool { resolved.contactIndex.map { contacts[$0].favorite } ?? false }

    /// The name a person goes by: the policy's contact name, else their own, else the handle.
    public func displayName(of person: Person) -> String {
        person.name ?? contact(for: person)?.name ?? person.handle ?? "Someone"
    }

    public func displayName(of resolved: Resolved) -> String {
        resolved.person.name ?? contact(for: resolved)?.name ?? resolved.person.handle ?? "Someone"
    }
}
