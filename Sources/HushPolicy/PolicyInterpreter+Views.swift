import CLua54
import HushCore
import HushJSON
import Lua

/// The fields of the read-only `n` a rule receives (docs/reference.md, "Policy vocabulary").
enum NotificationField: String, CaseIterable {
    case id, app, user, date, title, subtitle, body, category, thread, level, relevance, badge, sound, critical
    case communication, attachments, filter_criteria, headers, payload, requested_level

    /// A plain value, whose reading does nothing but push it: the view may read it ahead. (Not the
    /// tables: a lazy payload is counted against the memory cap once made.)
    var isReadableAhead: Bool {
        switch self {
        case .communication, .attachments, .headers, .payload: false
        default: true
        }
    }
}

/// The fields of the read-only `ctx` a rule receives.
enum ContextField: String, CaseIterable {
    case now, time, focus, locked, ringer, audio, user

    /// A plain value (not `time`, a table made for each read).
    var isReadableAhead: Bool { self != .time }
}

/// The bits of the fields a view may read ahead, by position (the fields' ids).
func readableAheadMask(_ readable: [Bool]) -> UInt64 {
    var mask: UInt64 = 0
    for (id, yes) in readable.enumerated() where id < 64 && yes { mask |= 1 << UInt64(id) }
    return mask
}

// Every push here is raw and cannot raise: these run inside a Lua call, below a Swift frame.
extension PolicyInterpreter {
    // A field is read once per notification at most: the view caches what it read (see
    // `LuaState.pushView`), nested tables (payload, communication, …) included.
    func pushNotificationField(_ L: OpaquePointer, _ field: NotificationField) -> Int32 {
        // Read where the subject is, rather than from a copy of it.
        guard let s = currentSubject else { lua_pushnil(L); return 1 }
        switch field {
        case .id: lua.push(s.pointee.envelope.id)
        case .app: lua.push(s.pointee.envelope.app)
        case .user: lua.push(s.pointee.envelope.user)
        case .date: pushNumber(L, s.pointee.envelope.date ?? currentContextPointer?.pointee.now ?? 0)
        // Text fields read as "" when absent, so string methods work without a nil check.
        case .title: lua.push(s.pointee.envelope.title ?? "")
        case .subtitle: lua.push(s.pointee.envelope.subtitle ?? "")
        case .body: lua.push(s.pointee.envelope.body ?? "")
        case .category: pushOptional(L, s.pointee.envelope.category)
        case .thread: pushOptional(L, s.pointee.thread)
        case .level: lua.push(s.pointee.level.rawValue)
        case .requested_level: lua.push(s.pointee.envelope.requestedLevel.rawValue)
        case .relevance: if let r = s.pointee.relevance { lua_pushnumber(L, r) } else { lua_pushnil(L) }
        case .badge: if let b = s.pointee.envelope.badge { lua_pushinteger(L, lua_Integer(b)) } else { lua_pushnil(L) }
        case .sound: pushOptional(L, s.pointee.envelope.sound.map { $0.name ?? "default" })
        case .critical: lua_pushboolean(L, s.pointee.envelope.sound?.critical == true ? 1 : 0)
        case .filter_criteria: pushOptional(L, s.pointee.envelope.filterCriteria)
        case .communication:
            guard let c = s.pointee.envelope.communication else { lua_pushnil(L); return 1 }
            pushCommunication(L, c)
        case .attachments:
            let attachments = s.pointee.envelope.attachments
            lua_createtable(L, Int32(attachments.count), 0)
            for (i, type) in attachments.enumerated() {
                lua_createtable(L, 0, 1)
                lua.push("type"); lua.push(type); lua_rawset(L, -3)
                lua_rawseti(L, -2, lua_Integer(i + 1))
            }
        case .headers: pushLazy(L, s.pointee.envelope.headersSource)
        case .payload: pushLazy(L, s.pointee.envelope.payloadSource)
        }
        return 1
    }

    func pushContextField(_ L: OpaquePointer, _ field: ContextField) -> Int32 {
        // Read where the context is, rather than from a copy of it.
        guard let context = currentContextPointer else { lua_pushnil(L); return 1 }
        switch field {
        case .now: pushNumber(L, context.pointee.now)
        case .focus: pushOptional(L, context.pointee.focus)
        case .locked: lua_pushboolean(L, context.pointee.locked ? 1 : 0)
        case .ringer: lua.push(context.pointee.ringer.rawValue)
        case .audio: lua.push(context.pointee.audio.rawValue)
        case .user: lua.push(context.pointee.user)
        case .time:
            let local = context.pointee.local
            let date = local.date
            lua_createtable(L, 0, 7)
            for (key, value) in [
                ("year", date.year), ("month", date.month), ("day", date.day), ("hour", local.hour),
                ("min", local.minute), ("sec", local.secondOfDay % 60), ("wday", local.weekday),
            ] {
                lua.push(key)
                lua_pushinteger(L, lua_Integer(value))
                lua_rawset(L, -3)
            }
        }
        return 1
    }

    /// A view's JSON field as a lazy table. Its node keeps the JSON tree alive; a tree whose tables
    /// a policy keeps (found still alive after collections that would have freed them) is counted
    /// against the memory cap from then on, as its tables would have been (see `countKeptTrees`).
    func pushLazy(_ L: OpaquePointer, _ object: DeferredJSONObject) {
        guard let root = LazyJSON.push(L, object) else { return }
        lazyRoots.append((root, lua.collections))
    }

    /// Called before each run of the rules; does something only after a collection has finished.
    /// A tree is kept once it is still alive three collections after it was made (the first may
    /// have started while the rules still had it, and finalizers run after their collection ends).
    func countKeptTrees() {
        let collections = lua.collections
        guard collections != lazyRootsCheckedAt, !lazyRoots.isEmpty else {
            if lazyRoots.count >= 4096 {
                // Collections come from Lua's own allocations, which lazy tables keep small: step
                // as building the tables would have made it.
                _ = clua_gc(lua.L, LUA_GCSTEP, 64)
            }
            return
        }
        lazyRootsCheckedAt = collections
        var kept = 0
        for i in lazyRoots.indices {
            if isKnownUniquelyReferenced(&lazyRoots[i].node) { continue }  // its tables are gone
            if lazyRoots[i].madeAt + 3 <= collections {
                lazyRoots[i].node.count(against: lua.memoryAccount)
                continue
            }
            lazyRoots.swapAt(i, kept)
            kept += 1
        }
        lazyRoots.removeSubrange(kept...)
    }

    func pushNumber(_ L: OpaquePointer, _ d: Double) {
        if d.rounded() == d && abs(d) < 9e15 { lua_pushinteger(L, lua_Integer(d)) } else { lua_pushnumber(L, d) }
    }

    func pushOptional(_ L: OpaquePointer, _ s: String?) {
        if let s { lua.push(s) } else { lua_pushnil(L) }
    }

    /// Builds a JSON value as Lua tables, at most 64 levels deep. Each level holds a table and a key
    /// on the stack while the next is built: a host function may only use the LUA_MINSTACK (20)
    /// slots Lua guarantees, and lua_push* never grow the stack (beyond it they write past its end,
    /// corrupting the heap), so every level makes room first (lua_checkstack grows without raising).
    func pushJSON(_ L: OpaquePointer, _ object: JSONObject, depth: Int) {
        lua_createtable(L, 0, Int32(object.count))
        for (key, item) in object {
            lua.push(key)
            pushJSON(L, item, depth: depth + 1)
            lua_rawset(L, -3)
        }
    }

    func pushJSON(_ L: OpaquePointer, _ value: JSONValue, depth: Int) {
        switch value {
        case .null: lua_pushnil(L)
        case .bool(let b): lua_pushboolean(L, b ? 1 : 0)
        case .number(let d): pushNumber(L, d)
        case .string(let s): lua.push(s)
        case .array(let items):
            guard depth < 64, lua_checkstack(L, 3) != 0 else { lua_pushnil(L); return }
            lua_createtable(L, Int32(items.count), 0)
            for (i, item) in items.enumerated() {
                pushJSON(L, item, depth: depth + 1)
                lua_rawseti(L, -2, lua_Integer(i + 1))
            }
        case .object(let object):
            guard depth < 64, lua_checkstack(L, 3) != 0 else { lua_pushnil(L); return }
            lua_createtable(L, 0, Int32(object.count))
            for (key, item) in object {
                lua.push(key)
                pushJSON(L, item, depth: depth + 1)
                lua_rawset(L, -3)
            }
        }
    }

    func pushPerson(_ L: OpaquePointer, _ person: Person) {
        lua_createtable(L, 0, 4)
        if let handle = person.handle { lua.push("handle"); lua.push(handle); lua_rawset(L, -3) }
        let name = currentContextPointer?.pointee.directory.displayName(of: person) ?? person.name
        if let name { lua.push("name"); lua.push(name); lua_rawset(L, -3) }
        if let contact = person.contact { lua.push("contact"); lua.push(contact); lua_rawset(L, -3) }
        lua.push("aliases")
        lua_createtable(L, Int32(person.aliases.count), 0)
        for (i, alias) in person.aliases.enumerated() {
            lua.push(alias)
            lua_rawseti(L, -2, lua_Integer(i + 1))
        }
        lua_rawset(L, -3)
    }

    func pushCommunication(_ L: OpaquePointer, _ c: Communication) {
        lua_createtable(L, 0, 6)
        lua.push("kind"); lua.push(c.kind.rawValue); lua_rawset(L, -3)
        if let sender = c.sender { lua.push("sender"); pushPerson(L, sender); lua_rawset(L, -3) }
        lua.push("recipients")
        lua_createtable(L, Int32(c.recipients.count), 0)
        for (i, person) in c.recipients.enumerated() {
            pushPerson(L, person)
            lua_rawseti(L, -2, lua_Integer(i + 1))
        }
        lua_rawset(L, -3)
        for (key, value) in [("group", c.group), ("conversation", c.conversation), ("service", c.service)] {
            if let value { lua.push(key); lua.push(value); lua_rawset(L, -3) }
        }
    }
}

/// `n.payload` and `n.headers` as lazy tables (see `hush_push_lazy`): a rule reads a key or two of
/// a payload far more often than all of it, so each object or array becomes a table only as far as
/// it is read. Anything that could tell it from the copy it stands for (pairs, next, #, a write,
/// rawget, getmetatable, …) first fills it with what is left, as `pushJSON` built that copy, so
/// rules see the same tables (at most 64 levels deep, JSON null as nil) as before.
final class LazyJSON {
    /// A view field's object still as its text: members are read from it one at a time, and the
    /// tree is made only when the whole object is needed (`object`).
    private var source: DeferredJSONObject?
    private var tree: JSONObject
    /// The object (made from its text the first time it is asked for).
    var object: JSONObject {
        if let source {
            tree = source.object
            self.source = nil
        }
        return tree
    }
    let items: [JSONValue]
    let isArray: Bool
    /// Levels below the view's field (the payload itself is 0).
    let depth: Int
    /// The view field's node, which every node of its tree keeps alive: it holds the whole tree,
    /// and counts it against the memory cap until the last of them is gone.
    let root: LazyJSON?
    /// The keys (objects) or positions (arrays) whose values were handed out: they are in the table.
    var loadedKeys: Set<String> = []
    var loadedPositions: Set<Int> = []
    /// For the root: the memory counted for the tree (as Lua tables it would be about this big).
    private var account: OpaquePointer?
    private var accountedBytes = 0

    init(object: JSONObject, depth: Int, root: LazyJSON?) {
        self.tree = object
        self.items = []
        self.isArray = false
        self.depth = depth
        self.root = root
    }

    init(source: DeferredJSONObject) {
        self.source = source
        self.tree = JSONObject()
        self.items = []
        self.isArray = false
        self.depth = 0
        self.root = nil
    }

    init(items: [JSONValue], depth: Int, root: LazyJSON?) {
        self.tree = JSONObject()
        self.items = items
        self.isArray = true
        self.depth = depth
        self.root = root
    }

    deinit {
        if let account { LuaState.account(account, bytes: -accountedBytes) }
    }

    /// Pushes a whole object (a view's field, level 0); returns its node (nil for an empty one).
    static func push(_ L: OpaquePointer, _ object: DeferredJSONObject) -> LazyJSON? {
        let count = object.count
        if count == 0 {
            lua_createtable(L, 0, 0)
            return nil
        }
        let node = object.isText ? LazyJSON(source: object) : LazyJSON(object: object.object, depth: 0, root: nil)
        LuaState.pushLazyTable(L, node: Unmanaged.passRetained(node).toOpaque(), isArray: false, count: count)
        return node
    }

    /// Counts the tree (as tables it would be about this big) against the memory cap of `account`
    /// until this node is gone.
    func count(against account: OpaquePointer) {
        guard self.account == nil else { return }
        let bytes = Self.estimate(object, depth: 0)
        self.account = account
        accountedBytes = bytes
        LuaState.account(account, bytes: bytes)
    }

    /// About the memory `pushJSON` would have built for an object `depth` levels down.
    static func estimate(_ object: JSONObject, depth: Int) -> Int {
        var bytes = 56 + 40 * object.count
        for (key, value) in object { bytes += 25 + key.utf8.count + estimate(value, depth: depth + 1) }
        return bytes
    }

    static func estimate(_ value: JSONValue, depth: Int) -> Int {
        switch value {
        case .string(let s): return 25 + s.utf8.count
        case .array(let items):
            guard depth < 64 else { return 0 }
            var bytes = 56 + 16 * items.count
            for item in items { bytes += estimate(item, depth: depth + 1) }
            return bytes
        case .object(let object):
            guard depth < 64 else { return 0 }
            return estimate(object, depth: depth)
        default: return 0
        }
    }

    /// Pushes a value `depth` levels below the view's field; returns false (pushing nil) for null,
    /// and for an object or array 64 or more levels down, as `pushJSON` did.
    @discardableResult
    static func push(_ L: OpaquePointer, _ value: JSONValue, depth: Int, root: LazyJSON) -> Bool {
        switch value {
        case .null:
            lua_pushnil(L)
            return false
        case .bool(let b): lua_pushboolean(L, b ? 1 : 0)
        case .number(let d):
            if d.rounded() == d && abs(d) < 9e15 { lua_pushinteger(L, lua_Integer(d)) } else { lua_pushnumber(L, d) }
        case .string(let s): LuaState.push(L, s)
        case .array(let items):
            guard depth < 64 else { lua_pushnil(L); return false }
            if items.isEmpty {
                lua_createtable(L, 0, 0)
            } else {
                let node = Unmanaged.passRetained(LazyJSON(items: items, depth: depth, root: root)).toOpaque()
                LuaState.pushLazyTable(L, node: node, isArray: true, count: items.count)
            }
        case .object(let object):
            guard depth < 64 else { lua_pushnil(L); return false }
            if object.isEmpty {
                lua_createtable(L, 0, 0)
            } else {
                let node = Unmanaged.passRetained(LazyJSON(object: object, depth: depth, root: root)).toOpaque()
                LuaState.pushLazyTable(L, node: node, isArray: false, count: object.count)
            }
        }
        return true
    }

    /// HUSH_LAZY_GET: the value under the key at stack index `key`, unless handed out before.
    func get(_ L: OpaquePointer, key: Int32) -> Int32 {
        let type = lua_type(L, key)
        if isArray {
            guard type == LUA_TNUMBER else { return 0 }
            var exact: Int32 = 0
            let i = lua_tointegerx(L, key, &exact)
            guard exact != 0, i >= 1, i <= items.count, loadedPositions.insert(Int(i)).inserted else { return 0 }
            return Self.push(L, items[Int(i) - 1], depth: depth + 1, root: root ?? self) ? 1 : 0
        }
        guard type == LUA_TSTRING else { return 0 }
        var length = 0
        guard let chars = lua_tolstring(L, key, &length) else { return 0 }
        let bytes = UnsafeRawBufferPointer(start: chars, count: length)
        // A Lua key is its bytes. Decoding would repair bytes that are not UTF-8 (into U+FFFD) and
        // String equality is canonical equivalence (U+212A KELVIN SIGN == "K"): either would find
        // a member the table it stands for does not have under this key, and hide the real one.
        // ASCII (nearly every key) is valid as it is: the general validation cost as much as the
        // lookup, and the name is made only when there is a member to hand out.
        let isASCII = bytes.allSatisfy { $0 < 0x80 }
        guard isASCII || String(validating: bytes, as: UTF8.self) != nil else { return 0 }
        func name() -> String { String(decoding: bytes, as: UTF8.self) }
        let value: JSONValue
        if let source {
            // Still text: only this member is read from it.
            guard let member = source.member(exactly: bytes) else { return 0 }
            value = member
        } else {
            guard let member = Self.member(object, exactly: name()) else { return 0 }
            value = member
        }
        guard loadedKeys.insert(name()).inserted else { return 0 }
        return Self.push(L, value, depth: depth + 1, root: root ?? self) ? 1 : 0
    }

    /// The member whose key has exactly the bytes of `name`.
    static func member(_ object: JSONObject, exactly name: String) -> JSONValue? {
        guard let value = object[name] else { return nil }  // (no member is even equivalent)
        // ASCII other than K ; ` is canonically equivalent only to itself (see JSONObject).
        if name.utf8.allSatisfy({ $0 < 0x80 && $0 != 0x4B && $0 != 0x3B && $0 != 0x60 }) { return value }
        for (key, value) in object where key.utf8.elementsEqual(name.utf8) { return value }
        return nil
    }

    /// HUSH_LAZY_FILL: the entries not handed out yet into the table at `table`, in order, as
    /// `pushJSON` set them.
    func fill(_ L: OpaquePointer, table: Int32) {
        guard lua_checkstack(L, 8) != 0 else { return }
        if isArray {
            for (i, item) in items.enumerated() where loadedPositions.isEmpty || !loadedPositions.contains(i + 1) {
                Self.push(L, item, depth: depth + 1, root: root ?? self)
                lua_rawseti(L, table, lua_Integer(i + 1))
            }
        } else {
            for (key, item) in object where loadedKeys.isEmpty || !loadedKeys.contains(key) {
                LuaState.push(L, key)
                Self.push(L, item, depth: depth + 1, root: root ?? self)
                lua_rawset(L, table)
            }
        }
    }

    static let callback: LuaState.LazyTableCallback = { node, L, op, _, a, _ in
        guard let node, let L else { return 0 }
        let unmanaged = Unmanaged<LazyJSON>.fromOpaque(node)
        switch op {
        case LuaState.lazyGet:
            return unmanaged._withUnsafeGuaranteedRef { $0.get(L, key: a) }
        case LuaState.lazyFill:
            unmanaged._withUnsafeGuaranteedRef { $0.fill(L, table: a) }
            return 0
        default:
            unmanaged.release()
            return 0
        }
    }
}
