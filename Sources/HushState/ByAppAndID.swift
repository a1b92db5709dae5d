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
/// 10 took 460 bytes where the list takes 112 (7 MB on 20,000 users). Beyond, in a dictionary
/// keyed by the id alone: a key of two texts made every bucket 16 bytes larger, 5 MB on 200,000
/// notifications kept. There, a value whose id another app's value already holds (rare) goes in
/// `sharingID`, and only while that id is held: a lookup that finds the id with another app
/// looks there.
struct ByAppAndID<Value: HeldByAppAndID> {
    /// The values while there are `fewLimit` or fewer and `byID` is empty.
    private var few: [Value] = []
    private var byID: [String: Value] = [:]
    private var sharingID: [AppAndID: Value] = [:]

    static var fewLimit: Int { 16 }

    var isEmpty: Bool { few.isEmpty && byID.isEmpty }

    private var isFew: Bool { byID.isEmpty }

    private func indexInFew(_ key: AppAndID) -> Int? {
        few.firstIndex { $0.isHeld(under: key) }
    }

    subscript(key: AppAndID) -> Value? {
        if isFew { return indexInFew(key).map { few[$0] } }
        guard let found = byID[key.id] else { return nil }
        if found.isHeld(under: key) { return found }
        return sharingID.isEmpty ? nil : sharingID[key]
    }

    /// Adds `value` under `key`, or replaces what is there; returns what was replaced.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: AppAndID) -> Value? {
        if isFew {
            if let i = indexInFew(key) {
                let held = few[i]
                few[i] = value
                return held
            }
            if few.count < Self.fewLimit {
                few.append(value)
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
            if let i = indexInFew(key) { return (few[i], false) }
            if few.count < Self.fewLimit {
                let made = make()
                few.append(made)
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
        for value in few {
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
            guard let i = indexInFew(key) else { return nil }
            return few.remove(at: i)
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
        for value in few { try body(AppAndID(app: value.heldApp, id: value.heldID), value) }
        for (id, value) in byID { try body(AppAndID(app: value.heldApp, id: id), value) }
        for (key, value) in sharingID { try body(key, value) }
    }
}

extension StoredNotification: HeldByAppAndID {
    var heldApp: String { app }
    var heldID: String { id }
    func isHeld(under key: AppAndID) -> Bool { hasKey(app: key.app, id: key.id) }
}
