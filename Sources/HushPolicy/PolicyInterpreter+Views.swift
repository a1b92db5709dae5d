import CLua54
import HushCore
import Lua

/// The fields of the read-only `n` a rule receives (SPEC §4).
enum NotificationField: String, CaseIterable {
    case id, app, user, date, title, subtitle, body, category, thread, level, relevance, badge, sound, critical
    case communication, attachments, filter_criteria, headers, payload, requested_level
}

/// The fields of the read-only `ctx` a rule receives.
enum ContextField: String, CaseIterable {
    case now, time, focus, locked, ringer, audio, user
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
        case .date: pushNumber(L, s.pointee.envelope.date ?? currentContext?.now ?? 0)
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
        case .headers: pushJSON(L, s.pointee.envelope.headers, depth: 0)
        case .payload: pushJSON(L, s.pointee.envelope.payload, depth: 0)
        }
        return 1
    }

    func pushContextField(_ L: OpaquePointer, _ field: ContextField) -> Int32 {
        guard let context = currentContext else { lua_pushnil(L); return 1 }
        switch field {
        case .now: pushNumber(L, context.now)
        case .focus: pushOptional(L, context.focus)
        case .locked: lua_pushboolean(L, context.locked ? 1 : 0)
        case .ringer: lua.push(context.ringer.rawValue)
        case .audio: lua.push(context.audio.rawValue)
        case .user: lua.push(context.user)
        case .time:
            let local = context.local
            let date = local.date
            lua_createtable(L, 0, 7)
            for (key, value) in [("year", date.year), ("month", date.month), ("day", date.day), ("hour", local.hour),
                                 ("min", local.minute), ("sec", local.secondOfDay % 60), ("wday", local.weekday)] {
                lua.push(key)
                lua_pushinteger(L, lua_Integer(value))
                lua_rawset(L, -3)
            }
        }
        return 1
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
        let name = currentContext?.directory.displayName(of: person) ?? person.name
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
