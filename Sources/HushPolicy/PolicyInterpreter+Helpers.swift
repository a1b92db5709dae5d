import CLua54
import HushCore
import Lua

/// The `hush.*` helpers rules may call (docs/reference.md, "Policy vocabulary"). Arguments are read raw: no metamethod runs.
extension PolicyInterpreter {
    static let helperNames = ["contact", "is_favorite", "recent", "interactions", "suggested", "note"]

    /// Installs the helpers into `hush` of the global table (which every user's copy of the
    /// globals copies) and of the first copy, made before them.
    func installHostHelpers() {
        installHostHelpers(into: nil)
        if let template = unclaimedInstance { installHostHelpers(into: template.environment) }
    }

    private func installHostHelpers(into environment: Int32?) {
        let L = lua.L
        if let environment { lua.pushReference(environment) } else { clua_pushglobaltable(L) }
        lua.push("hush")
        guard lua_rawget(L, -2) == LUA_TTABLE else {
            lua.pop(2)
            return
        }
        let helpers: [(String, LuaState.HostFunction)] = [
            ("contact", { [unowned self] L throws(LuaState.HostError) in try self.contactHelper(L) }),
            ("is_favorite", { [unowned self] L throws(LuaState.HostError) in try self.isFavoriteHelper(L) }),
            ("recent", { [unowned self] L throws(LuaState.HostError) in try self.recentHelper(L) }),
            ("interactions", { [unowned self] L throws(LuaState.HostError) in try self.interactionsHelper(L) }),
            ("suggested", { [unowned self] L throws(LuaState.HostError) in try self.suggestedHelper(L) }),
            ("note", { [unowned self] L throws(LuaState.HostError) in self.noteHelper(L) }),
        ]
        for (name, function) in helpers {
            lua.push(name)
            lua.pushHostFunction(lua.register(function))
            lua_rawset(L, -3)
        }
        lua.pop(2)
    }

    private var context: RuleContext {
        get throws(LuaState.HostError) {
            guard let currentContext else { throw LuaState.HostError("hush helpers can only be used inside a rule") }
            return currentContext
        }
    }

    /// Reads state for a helper. A read that fails stops the rule with a Lua error and is kept, so
    /// that `runRules` throws it: the evaluation fails rather than go on as if state were empty.
    private func readState<T>(_ function: String, _ read: () throws -> T) throws(LuaState.HostError) -> T {
        do {
            return try read()
        } catch {
            stateReadFailure = error
            throw LuaState.HostError("hush.\(function): \(error)")
        }
    }

    /// A person given as a handle string or a table with `handle`/`aliases`.
    private func person(_ L: OpaquePointer, at index: Int32, function: String) throws(LuaState.HostError) -> Person {
        switch lua_type(L, index) {
        case LUA_TSTRING:
            return Person(handle: lua.string(at: index))
        case LUA_TTABLE:
            guard let table = lua.value(at: index, depth: 2, maxValues: 10_000).tableValue else {
                throw LuaState.HostError("hush.\(function): the person table is too large")
            }
            let aliases = table["aliases"]?.tableValue?.array.compactMap(\.stringValue) ?? []
            let handle = table["handle"]?.stringValue
            guard handle != nil || !aliases.isEmpty else {
                throw LuaState.HostError("hush.\(function): the person has no handle")
            }
            return Person(handle: handle, name: table["name"]?.stringValue, aliases: aliases)
        default:
            throw LuaState.HostError(
                "hush.\(function): expected a handle or a person table, got \(String(cString: lua_typename(L, lua_type(L, index))))"
            )
        }
    }

    private func options(_ L: OpaquePointer, function: String, keys: [String]) throws(LuaState.HostError) -> LuaTable {
        let type = lua_type(L, 1)
        if type == LUA_TNONE || type == LUA_TNIL { return LuaTable() }
        guard type == LUA_TTABLE else {
            throw LuaState.HostError(
                "hush.\(function) expects a table of options { \(keys.map { "\($0) = …" }.joined(separator: ", ")) }")
        }
        guard let table = lua.value(at: 1, depth: 3, maxValues: 10_000).tableValue else {
            throw LuaState.HostError("hush.\(function): the options table is too large")
        }
        for key in table.stringKeys where !keys.contains(key) {
            throw LuaState.HostError("hush.\(function): unknown option '\(key)'\(Spelling.hint(for: key, in: keys))")
        }
        return table
    }

    func contactHelper(_ L: OpaquePointer) throws(LuaState.HostError) -> Int32 {
        let who = try person(L, at: 1, function: "contact")
        guard let contact = try context.directory.contact(for: who) else {
            lua_pushnil(L)
            return 1
        }
        lua_createtable(L, 0, 4)
        lua.push("handle"); lua.push(contact.handle); lua_rawset(L, -3)
        if let name = contact.name { lua.push("name"); lua.push(name); lua_rawset(L, -3) }
        lua.push("favorite"); lua_pushboolean(L, contact.favorite ? 1 : 0); lua_rawset(L, -3)
        lua.push("aliases")
        lua_createtable(L, Int32(contact.aliases.count), 0)
        for (i, alias) in contact.aliases.enumerated() { lua.push(alias); lua_rawseti(L, -2, lua_Integer(i + 1)) }
        lua_rawset(L, -3)
        return 1
    }

    func isFavoriteHelper(_ L: OpaquePointer) throws(LuaState.HostError) -> Int32 {
        let who = try person(L, at: 1, function: "is_favorite")
        lua_pushboolean(L, try context.directory.isFavorite(who) ? 1 : 0)
        return 1
    }

    /// Count of notifications in state from the last `minutes` (default 60), filtered by app,
    /// sender handle and thread.
    func recentHelper(_ L: OpaquePointer) throws(LuaState.HostError) -> Int32 {
        let o = try options(L, function: "recent", keys: ["app", "sender", "thread", "minutes"])
        let ctx = try context
        let minutes = o["minutes"]?.doubleValue ?? 60
        let app = o["app"]?.stringValue
        let thread = o["thread"]?.stringValue
        // A handle, or a person as rules see one (`n.communication.sender`): any of its handles.
        let senders: [Handle]?
        switch o["sender"] {
        case nil: senders = nil
        case .string(let s)?: senders = [Handle(s)]
        case .table(let t)?:
            let handles = ([t["handle"]?.stringValue] + (t["aliases"]?.tableValue?.array.map(\.stringValue) ?? []))
                .compactMap { $0 }
            guard !handles.isEmpty else {
                throw LuaState.HostError("hush.recent: sender must be a handle or a person with a handle")
            }
            senders = handles.map(Handle.init)
        default: throw LuaState.HostError("hush.recent: sender must be a handle or a person with a handle")
        }
        var count = 0
        let recent = try readState("recent") { try ctx.state.recent(user: ctx.user, since: ctx.now - minutes * 60) }
        for n in recent where n.date <= ctx.now {
            if let app, n.app != app { continue }
            if let thread, n.threadID != thread { continue }
            if let senders {
                guard let stored = n.sender.map(Handle.init), senders.contains(where: { stored.matches($0) }) else {
                    continue
                }
            }
            count += 1
        }
        lua_pushinteger(L, lua_Integer(count))
        return 1
    }

    /// Count of donated interactions with a person in the last `days` (default 90).
    func interactionsHelper(_ L: OpaquePointer) throws(LuaState.HostError) -> Int32 {
        let o = try options(L, function: "interactions", keys: ["person", "days", "direction"])
        let ctx = try context
        let days = o["days"]?.doubleValue ?? 90
        let direction = o["direction"]?.stringValue
        if let direction, Interaction.Direction(rawValue: direction) == nil {
            throw LuaState.HostError(
                "hush.interactions: direction must be \"outgoing\" or \"incoming\", got \"\(direction)\"")
        }
        let who: Person? =
            switch o["person"] {
            case .string(let s)?: Person(handle: s)
            case .table(let t)?:
                Person(
                    handle: t["handle"]?.stringValue,
                    aliases: t["aliases"]?.tableValue?.array.compactMap(\.stringValue) ?? [])
            default: nil
            }
        var count = 0
        let interactions = try readState("interactions") {
            try ctx.state.interactions(user: ctx.user, since: ctx.now - days * 86400)
        }
        for i in interactions where i.date <= ctx.now {
            if let direction, i.direction.rawValue != direction { continue }
            if let who, !i.people.contains(where: { ctx.directory.samePerson($0, who) }) { continue }
            count += 1
        }
        lua_pushinteger(L, lua_Integer(count))
        return 1
    }

    /// The top `n` suggested people (for the active focus, if any) as { handle, name, score }.
    func suggestedHelper(_ L: OpaquePointer) throws(LuaState.HostError) -> Int32 {
        let ctx = try context
        var limit = 5
        if lua_type(L, 1) == LUA_TNUMBER { limit = max(0, min(100, Int(lua_tointegerx(L, 1, nil)))) }
        let focus = ctx.focus.flatMap { policy.focus(named: $0) }
        let clock = policy.timezone.flatMap(ZoneClock.init(identifier:)) ?? ZoneClock.current
        let interactions = try readState("suggested") {
            try ctx.state.interactions(user: ctx.user, since: ctx.now - Suggestions.windowSeconds)
        }
        let ranked = Suggestions.rank(
            interactions: interactions,
            now: ctx.now, focus: focus, clock: clock, directory: ctx.directory,
            excludeAllowed: false
        ).prefix(limit)
        lua_createtable(L, Int32(ranked.count), 0)
        for (i, s) in ranked.enumerated() {
            pushPerson(L, s.person)
            lua.push("score"); lua_pushnumber(L, s.score); lua_rawset(L, -3)
            lua_rawseti(L, -2, lua_Integer(i + 1))
        }
        return 1
    }

    func noteHelper(_ L: OpaquePointer) -> Int32 {
        let text: String
        switch lua_type(L, 1) {
        case LUA_TSTRING: text = lua.string(at: 1, maxBytes: 4 * 1000) ?? ""  // kept: 1000 characters
        case LUA_TNUMBER:
            text = lua_isinteger(L, 1) != 0 ? String(lua_tointegerx(L, 1, nil)) : String(lua_tonumberx(L, 1, nil))
        case LUA_TBOOLEAN: text = lua_toboolean(L, 1) != 0 ? "true" : "false"
        default: text = String(cString: lua_typename(L, lua_type(L, 1)))
        }
        if notes.count < 100 { notes.append(String(text.prefix(1000))) }
        lua.requestStop()  // the note belongs to this rule's report
        return 0
    }
}
