import HushCore

/// A notification's key in a user's lists: its app and its id.
struct AppAndID: Hashable {
    var app: String
    var id: String

    // Ids rarely repeat across apps: hashing the id alone is enough, and half the work.
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// What `ByAppAndID` holds: something that knows its app and id.
protocol HeldByAppAndID {
    var heldApp: String { get }
    var heldID: String { get }
    /// Whether its app and id are these: compared in place, where `heldApp` and `heldID` hand out
    /// copies (a retain and a release each). A scan of a short list asks it of every entry.
    func isHeld(under key: AppAndID) -> Bool
}

/// Values by (app, id). Up to `fewLimit` of them in a plain list, searched in turn: most users
/// of a stream with many users hold a few notifications, and the smallest dictionary that holds
/// 10 took 460 bytes where the list takes 192 (5 MB on 20,000 users). Each entry of the list
/// carries a short hash of its id beside its value, so that a search reads one run of memory and
/// looks into a value only when the hash matches: looking into each entry's notification was a
/// cache miss and a retain and release per entry, on a user not seen for a while. Beyond, in a
/// dictionary keyed by the id alone: a key of two texts made every bucket 16 bytes larger, 5 MB on 200,000
/// notifications kept. There, a value whose id another app's value already holds (rare) goes in
/// `sharingID`, and only while that id is held: a lookup that finds the id with another app
/// looks there.
struct ByAppAndID<Value: HeldByAppAndID> {
    /// A value of the short list, with `idHash(_:)` of its id (a value is held under its own
    /// app and id, so the key's hash is the value's).
    private struct Entry {
        var idHash: UInt32
        var value: Value
    }

    /// The values while there are `fewLimit` or fewer and `byID` is empty.
    private var few: [Entry] = []
    private var byID: [String: Value] = [:]
    private var sharingID: [AppAndID: Value] = [:]

    static var fewLimit: Int { 16 }

    var isEmpty: Bool { few.isEmpty && byID.isEmpty }

    private var isFew: Bool { byID.isEmpty }

    /// FNV-1a of the id's UTF-8: a few instructions a byte, and the same in every run.
    private static func idHash(_ id: String) -> UInt32 {
        var hash: UInt32 = 0x811c_9dc5
        for byte in id.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return hash
    }

    private func indexInFew(_ key: AppAndID, idHash: UInt32) -> Int? {
        few.withUnsafeBufferPointer { entries in
            for i in entries.indices where entries[i].idHash == idHash && entries[i].value.isHeld(under: key) {
                return i
            }
            return nil
        }
    }

    subscript(key: AppAndID) -> Value? {
        if isFew { return indexInFew(key, idHash: Self.idHash(key.id)).map { few[$0].value } }
        guard let found = byID[key.id] else { return nil }
        if found.isHeld(under: key) { return found }
        return sharingID.isEmpty ? nil : sharingID[key]
    }

    /// Adds `value` under `key`, or replaces what is there; returns what was replaced.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: AppAndID) -> Value? {
        if isFew {
            let idHash = Self.idHash(key.id)
            if let i = indexInFew(key, idHash: idHash) {
                let held = few[i].value
                few[i].value = value
                return held
            }
            if few.count < Self.fewLimit {
                few.append(Entry(idHash: idHash, value: value))
                return nil
            }
            spill()
        }
        // One lookup for an id new to the list, the usual case.
        guard let held = byID.updateValue(value, forKey: key.id) else { return nil }
        if held.isHeld(under: key) { return held }
        byID[key.id] = held
        return sharingID.updateValue(value, forKey: key)
    }

    /// The value under `key`, or `make()` put there (and whether it was).
    mutating func value(forKey key: AppAndID, orInsert make: () -> Value) -> (Value, isNew: Bool) {
        if isFew {
            let idHash = Self.idHash(key.id)
            if let i = indexInFew(key, idHash: idHash) { return (few[i].value, false) }
            if few.count < Self.fewLimit {
                let made = make()
                few.append(Entry(idHash: idHash, value: made))
                return (made, true)
            }
            spill()
        }
        // One lookup for an id new to the list: the value is put in the slot found for it.
        let (found, isNew) = Self.value(in: &byID[key.id], orInsert: make)
        if isNew || found.isHeld(under: key) { return (found, isNew) }
        return Self.value(in: &sharingID[key], orInsert: make)
    }

    private static func value(in slot: inout Value?, orInsert make: () -> Value) -> (Value, isNew: Bool) {
        if let found = slot { return (found, false) }
        let made = make()
        slot = made
        return (made, true)
    }

    /// The list grown past `fewLimit`: into the dictionaries.
    private mutating func spill() {
        for entry in few {
            let value = entry.value
            let key = AppAndID(app: value.heldApp, id: value.heldID)
            if let held = byID[key.id], held.heldApp != key.app {
                sharingID[key] = value
            } else {
                byID[key.id] = value
            }
        }
        few = []
    }

    @discardableResult
    mutating func removeValue(forKey key: AppAndID) -> Value? {
        if isFew {
            guard let i = indexInFew(key, idHash: Self.idHash(key.id)) else { return nil }
            return few.remove(at: i).value
        }
        guard let held = byID[key.id] else { return nil }
        guard held.isHeld(under: key) else { return sharingID.isEmpty ? nil : sharingID.removeValue(forKey: key) }
        byID[key.id] = nil
        // Another app's value with this id takes its place.
        if !sharingID.isEmpty, let other = sharingID.first(where: { $0.key.id == key.id }) {
            sharingID[other.key] = nil
            byID[key.id] = other.value
        }
        return held
    }

    /// Every key and value, in no particular order.
    func forEach(_ body: (AppAndID, Value) throws -> Void) rethrows {
        for entry in few { try body(AppAndID(app: entry.value.heldApp, id: entry.value.heldID), entry.value) }
        for (id, value) in byID { try body(AppAndID(app: value.heldApp, id: id), value) }
        for (key, value) in sharingID { try body(key, value) }
    }
}

extension StoredNotification: HeldByAppAndID {
    var heldApp: String { app }
    var heldID: String { id }
    func isHeld(under key: AppAndID) -> Bool { hasKey(app: key.app, id: key.id) }
}
