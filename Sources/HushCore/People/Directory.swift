import Synchronization

/// The people a policy knows, for matching senders against focus lists, favorites and contacts.
/// Built once per prepared policy: the contacts' handles are normalised and indexed by what
/// matching handles share (`Handle.Bucket`), and the handles listed in focuses are normalised and
/// widened by their contact's aliases ahead of time.
package struct Directory: Sendable {
    /// What a directory holds, in one object: a directory is copied into every evaluation (its
    /// rule context, the focus step), one retain and release each, where its four lists took four.
    private final class Tables: Sendable {
        let contacts: [Contact]
        let id: Int
        let contactHandles: [[Handle]]
        let contactBuckets: [Handle.Bucket: [Int]]
        let listedHandles: [String: [Handle]]

        init(
            contacts: [Contact], id: Int, contactHandles: [[Handle]], contactBuckets: [Handle.Bucket: [Int]],
            listedHandles: [String: [Handle]]
        ) {
            self.contacts = contacts
            self.id = id
            self.contactHandles = contactHandles
            self.contactBuckets = contactBuckets
            self.listedHandles = listedHandles
        }
    }

    private let tables: Tables

    package var contacts: [Contact] { tables.contacts }
    /// This directory among those built in the process (never given twice): what a thread's
    /// cached resolutions are keyed by, as a directory's contacts never change.
    private var id: Int { tables.id }
    private var contactHandles: [[Handle]] { tables.contactHandles }
    /// Contact indices, ascending, by the buckets of their handles.
    private var contactBuckets: [Handle.Bucket: [Int]] { tables.contactBuckets }
    /// Listed entries (focus `people`), each as the handles it stands for.
    private var listedHandles: [String: [Handle]] { tables.listedHandles }

    /// - Parameter listed: handles that will be looked up as lists (`person(_:isAmong:)`), to prepare.
    package init(contacts: [Contact], listed: [String] = []) {
        let contactHandles = contacts.map { $0.handles.map(Handle.init) }
        var buckets: [Handle.Bucket: [Int]] = [:]
        for (i, handles) in contactHandles.enumerated() {
            for handle in handles where buckets[handle.bucket]?.last != i {
                buckets[handle.bucket, default: []].append(i)
            }
        }
        var listedHandles: [String: [Handle]] = [:]
        for entry in listed where listedHandles[entry] == nil {
            listedHandles[entry] = Self.expand(entry, contactHandles: contactHandles, buckets: buckets)
        }
        tables = Tables(
            contacts: contacts, id: Self.lastID.add(1, ordering: .relaxed).newValue, contactHandles: contactHandles,
            contactBuckets: buckets, listedHandles: listedHandles)
    }

    /// A person with their handles normalised and their contact found, once, for several questions.
    package struct Resolved: Sendable {
        package let person: Person
        /// The person's own handles.
        let handles: [Handle]
        package let contactIndex: Int?
    }

    package func resolve(_ person: Person) -> Resolved {
        if person.aliases.isEmpty, let handle = person.handle, let slots = Self.resolvedByHandle.slots() {
            // The slot holds its handle, so equal words are the same text (`TextWords`): the
            // JSON reader makes one text per repeated value, and a stream repeats its senders.
            let words = TextWords(handle)
            let slot = slots + words.slot(owner: id, bits: Self.resolvedSlotBits)
            if slot.pointee.directory == id, TextWords(slot.pointee.handle) == words {
                return Resolved(person: person, handles: slot.pointee.handles, contactIndex: slot.pointee.contactIndex)
            }
            let handles = [Handle(handle)]
            let index = contactIndex(for: handles)
            slot.pointee = ResolvedHandle(directory: id, handle: handle, handles: handles, contactIndex: index)
            return Resolved(person: person, handles: handles, contactIndex: index)
        }
        // `person.handles`, normalised, without making the array of raw handles first.
        var handles: [Handle] = []
        handles.reserveCapacity((person.handle == nil ? 0 : 1) + person.aliases.count)
        if let handle = person.handle { handles.append(Handle(handle)) }
        for alias in person.aliases { handles.append(Handle(alias)) }
        return Resolved(person: person, handles: handles, contactIndex: contactIndex(for: handles))
    }

    private static let lastID = Atomic<Int>(0)

    /// A person known by one handle, resolved by a directory: a sender's handle normalised and
    /// their contact found cost a thousand instructions, asked again for each of their messages.
    private struct ResolvedHandle: Sendable {
        var directory: Int
        var handle: String
        var handles: [Handle]
        var contactIndex: Int?
    }

    /// Each thread's last resolutions, 256 slots (direct-mapped by handle and directory).
    private static let resolvedSlotBits = 8
    private static let resolvedByHandle = ThreadSlots(
        count: 1 << resolvedSlotBits, empty: ResolvedHandle(directory: 0, handle: "", handles: [], contactIndex: nil))

    /// The contact one of whose handles matches one of the person's.
    package func contact(for person: Person) -> Contact? {
        contactIndex(for: person.handles.map(Handle.init)).map { contacts[$0] }
    }

    package func contact(for resolved: Resolved) -> Contact? { resolved.contactIndex.map { contacts[$0] } }

    package func contact(forHandle handle: String) -> Contact? {
        contactIndex(for: [Handle(handle)]).map { contacts[$0] }
    }

    /// The first contact (in declaration order) with a handle matching one of `handles`.
    private func contactIndex(for handles: [Handle]) -> Int? {
        Self.contactIndex(for: handles, contactHandles: contactHandles, buckets: contactBuckets)
    }

    private static func contactIndex(
        for handles: [Handle], contactHandles: [[Handle]],
        buckets: [Handle.Bucket: [Int]]
    ) -> Int? {
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
    package func allHandles(of person: Person) -> [Handle] {
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

    private static func expand(_ entry: String, contactHandles: [[Handle]], buckets: [Handle.Bucket: [Int]]) -> [Handle]
    {
        var theirs = [Handle(entry)]
        if let index = contactIndex(for: theirs, contactHandles: contactHandles, buckets: buckets) {
            theirs += contactHandles[index]
        }
        return theirs
    }

    /// Whether the person matches any of `listed` (handles, each widened by its contact's aliases).
    package func person(_ person: Person, isAmong listed: [String]) -> Bool {
        self.person(resolve(person), isAmong: listed)
    }

    package func person(_ resolved: Resolved, isAmong listed: [String]) -> Bool {
        guard !listed.isEmpty else { return false }
        let mine = allHandles(of: resolved)
        guard !mine.isEmpty else { return false }
        for entry in listed {
            let theirs = listedHandles[entry] ?? expand(entry)
            if theirs.contains(where: { t in mine.contains { t.matches($0) } }) { return true }
        }
        return false
    }

    /// A list of people (a focus's `people`) prepared, once per policy, for asking of many senders
    /// whether they are among it: `person(_:isIn:)` answers as `person(_:isAmong: entries)`.
    package struct PeopleList: Sendable {
        /// The entries the list was prepared from.
        package let entries: [String]
        /// Per contact (by index): whether one of the contact's handles matches a listed handle,
        /// entries widened by their contact's aliases (always so for a contact the list names).
        let contactListed: [Bool]
        /// The listed handles, widened by their contacts' aliases, by bucket (matching handles
        /// always share one), each once, in list order.
        let handles: [Handle.Bucket: [Handle]]
    }

    package func peopleList(_ entries: [String]) -> PeopleList {
        var listed: [Handle] = []
        var seen: Set<Handle> = []
        for entry in entries {
            for handle in listedHandles[entry] ?? expand(entry) where seen.insert(handle).inserted {
                listed.append(handle)
            }
        }
        var handles: [Handle.Bucket: [Handle]] = [:]
        for handle in listed { handles[handle.bucket, default: []].append(handle) }
        // A listed handle `t` matches a handle `m` of the person as `t.matches(m)`, as in `person(_:isAmong:)`.
        let contactListed = contactHandles.map { mine in
            mine.contains { m in handles[m.bucket]?.contains { $0.matches(m) } ?? false }
        }
        return PeopleList(entries: entries, contactListed: contactListed, handles: handles)
    }

    /// Whether the person is among the list: the same answer as `person(_:isAmong: list.entries)`.
    package func person(_ resolved: Resolved, isIn list: PeopleList) -> Bool {
        if let index = resolved.contactIndex, list.contactListed[index] { return true }
        guard !list.handles.isEmpty else { return false }
        for m in resolved.handles {
            if let candidates = list.handles[m.bucket], candidates.contains(where: { $0.matches(m) }) { return true }
        }
        return false
    }

    /// Same person: any handle in common, allowing for contacts' aliases.
    package func samePerson(_ a: Person, _ b: Person) -> Bool {
        samePerson(resolve(a), resolve(b))
    }

    package func samePerson(_ a: Resolved, _ b: Resolved) -> Bool {
        let ha = allHandles(of: a)
        let hb = allHandles(of: b)
        return ha.contains { x in hb.contains { x.matches($0) } }
    }

    package func isFavorite(_ person: Person) -> Bool { contact(for: person)?.favorite ?? false }

    package func isFavorite(_ resolved: Resolved) -> Bool {
        resolved.contactIndex.map { contacts[$0].favorite } ?? false
    }

    /// The name a person goes by: the policy's contact name, else their own, else the handle.
    package func displayName(of person: Person) -> String {
        person.name ?? contact(for: person)?.name ?? person.handle ?? "Someone"
    }

    package func displayName(of resolved: Resolved) -> String {
        resolved.person.name ?? contact(for: resolved)?.name ?? resolved.person.handle ?? "Someone"
    }
}
