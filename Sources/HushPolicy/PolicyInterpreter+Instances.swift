import CLua54
import HushCore
import Lua

/// One user's copy of a policy: the globals its files ran in, and the rules they declared there.
/// What a rule keeps between notifications (a global, an upvalue, a table reached from either)
/// lives in its user's copy, so a policy with memory never shows one person's notifications to
/// another (docs/security.md, "One user's policy memory").
struct PolicyInstance {
    /// Registry references.
    var environment: Int32
    var rules: [Int32]
    var lastUse: Int
}

/// Why a user's copy of the policy could not be made; their rules are then not run.
struct InstanceFailure: Error, CustomStringConvertible {
    var description: String
}

extension PolicyInterpreter {
    /// The copy of `user`, made on their first notification by running the policy's files again in
    /// a fresh copy of the globals (the copy made at load goes to the first user).
    func instance(for user: String) -> Result<PolicyInstance, InstanceFailure> {
        instanceUses += 1
        if let sharedInstance {
            // The name alone is compared: binding the pair copied the copy's lists for every user.
            if firstCopy?.user == user { return .success(firstCopy!.instance) }
            return .success(sharedInstance)
        }
        if let last = lastInstance, last.user == user {
            instances.values[last.index].lastUse = instanceUses
            return .success(instances.values[last.index])
        }
        if let index = instances.index(forKey: user) {
            instances.values[index].lastUse = instanceUses
            lastInstance = (user, index)
            return .success(instances.values[index])
        }
        var made: PolicyInstance
        if let template = unclaimedInstance {
            unclaimedInstance = nil
            made = template
        } else {
            if instances.count >= maxInstances { forgetInstances(keeping: maxInstances * 3 / 4) }
            // A copy whose files drew random numbers differs from the next (however `random` was
            // reached: `math["ran" .. "dom"]` passes the name rule).
            let randomBefore = sharingDecided ? [] : lua.randomState()
            switch makeInstance() {
            case .success(let instance): made = instance
            case .failure(let failure): return .failure(failure)
            }
            if !sharingDecided {
                sharingDecided = true
                if lua.randomState() == randomBefore, policyKeepsNothing(), copyHoldsNoState(made) {
                    // Every user's copy would stay as this one is: one serves them all. The first
                    // user keeps the copy made at load (its files' top level may tell the two
                    // apart: `app "x"` returns a new function there, the same one in a copy).
                    firstCopy = instances.first.map { (user: $0.key, instance: $0.value) }
                    for other in instances.values.dropFirst() { release(other) }
                    instances.removeAll()
                    lastInstance = nil
                    sharedInstance = made
                    return .success(made)
                }
            }
        }
        made.lastUse = instanceUses
        instances[user] = made
        lastInstance = (user, instances.index(forKey: user)!)
        return .success(made)
    }

    /// Runs the files in a new copy of the globals and takes the rules they declare, which must be
    /// the rules declared at load (files that declare by chance could declare others).
    private func makeInstance() -> Result<PolicyInstance, InstanceFailure> {
        // The files' top level runs for no one, as at load: the user whose notification made the
        // copy is not its context (their data would be in it, and in everyone's if it is shared).
        let context = currentContextPointer, subject = currentSubject
        currentContextPointer = nil
        currentSubject = nil
        defer {
            currentContextPointer = context
            currentSubject = subject
        }
        guard lua.pushEnvironmentCopy(copying: globalsToCopy()) else {
            return .failure(InstanceFailure(description: "no room for the globals"))
        }
        let environment = lua.reference()
        lua.setEnvironment(environment)
        // The lists hold only what this copy's files declare.
        clearList(declarationsList)
        clearList(problemsList)
        setCopying(true)
        defer {
            setCopying(false)
            lua.setEnvironment(nil)
        }
        let functions = compiledFiles()
        for (source, function) in zip(sources, functions) {
            do {
                if let function {
                    lua.pushReference(function)
                    lua.pushReference(environment)
                    try lua.callLoading(arguments: 1, results: 0)
                } else {
                    try lua.run(source.text, chunkName: source.name, environment: environment)
                }
            } catch {
                clearList(declarationsList)
                clearList(problemsList)
                lua.release(environment)
                return .failure(InstanceFailure(description: "this user's copy of the policy failed to load: \(error)"))
            }
        }
        let rules = declaredRules()
        let problems = listLength(problemsList)
        clearList(declarationsList)
        clearList(problemsList)
        guard problems == 0, rules.count == policy.rules.count,
            zip(rules, policy.rules).allSatisfy({ $0.name == $1.name })
        else {
            for rule in rules { lua.release(rule.reference) }
            lua.release(environment)
            return .failure(
                InstanceFailure(
                    description:
                        "this user's copy of the policy declared other rules than the policy did when loaded (\(rules.map(\.name)))"
                ))
        }
        return .success(PolicyInstance(environment: environment, rules: rules.map(\.reference), lastUse: 0))
    }

    /// Each file as a function of `_ENV`, compiled once: a copy then costs a call, not a compile.
    /// The wrapper keeps every line where it was; a file it does not compile (a chunk at the limit
    /// of locals, say) is compiled anew for each copy instead.
    private func compiledFiles() -> [Int32?] {
        if let fileFunctions { return fileFunctions }
        let functions = sources.map { source -> Int32? in
            do {
                try lua.load("return function(_ENV, ...) " + source.text + "\nend", chunkName: source.name)
                // In a budget window of its own: a rule that ran out of its budget just before must
                // not make every later copy compile its files again (and never be shared).
                try lua.callLoading(arguments: 0, results: 1)
                guard lua_type(lua.L, -1) == LUA_TFUNCTION else {
                    lua.pop()
                    return nil
                }
                return lua.reference()
            } catch {
                return nil
            }
        }
        fileFunctions = functions
        return functions
    }

    /// Whether no copy of the policy can ever differ from another, so that one may serve every
    /// user: no function the files define writes an upvalue, a global, or a table it did not make
    /// in the same call (read from their bytecode), and the files name none of the ways around
    /// that check: `_G`, `_ENV` and `load` (any global, any code), `rawset`, `setmetatable` and
    /// `table` (the sandbox functions that write tables), `random` (each copy's run of the files
    /// would draw its own numbers). Each copy is then the state the files' top level left, for
    /// good. Asked once, after the second copy was made: the files declared the same rules twice.
    private func policyKeepsNothing() -> Bool {
        guard names().isDisjoint(with: ["_G", "_ENV", "load", "rawset", "setmetatable", "table", "random"]),
            let fileFunctions
        else { return false }
        for function in fileFunctions {
            guard let function else { return false }
            lua.pushReference(function)
            defer { lua.pop() }
            guard lua.functionsWithinKeepNothing(at: -1) else { return false }
        }
        return true
    }

    /// Whether what a copy's rules can reach (their upvalues, the copy's globals) holds no state a
    /// call changes without writing it in Lua, which bytecode cannot show: a `string.gmatch`
    /// iterator the files' top level made, say.
    private func copyHoldsNoState(_ instance: PolicyInstance) -> Bool {
        lua.pushReference(instance.environment)
        for rule in instance.rules { lua.pushReference(rule) }
        let count = Int32(instance.rules.count + 1)
        defer { lua.pop(count) }
        return lua.valuesHoldNoState(count: count)
    }

    private func names() -> Set<String> {
        if let namesInFiles { return namesInFiles }
        let named = Self.identifiers(in: sources)
        namesInFiles = named
        return named
    }

    /// The globals a copy needs: those the policy's code can name. A name counts wherever its
    /// letters stand alone in a file (code, string or comment: more than the code can use, never
    /// less). The code reaches the copy as a table, and any global by a name made at run time,
    /// only through `_G`, `_ENV` or `load`: a policy using one of them gets every global, as before.
    /// A copy of `Benchmarks/standard.lua` then holds 7 of the 34 globals, and none of the five
    /// tables: 709 bytes of memory where it took 4.8 KB (`PolicyCopyCostTests`).
    private func globalsToCopy() -> Int32 {
        if let copiedGlobals { return copiedGlobals }
        let named = names()
        var made = LUA_NOREF
        if named.isDisjoint(with: ["_G", "_ENV", "load"]) {
            let L = lua.L
            lua_createtable(L, 0, 0)
            clua_pushglobaltable(L)
            lua_pushnil(L)
            while lua_next(L, -2) != 0 {
                // key at -2, value at -1
                if lua_type(L, -2) == LUA_TSTRING, let name = lua.string(at: -2), named.contains(name) {
                    lua_pushvalue(L, -2)
                    lua_pushboolean(L, 1)
                    lua_rawset(L, -6)
                }
                lua.pop()
            }
            lua.pop()
            made = lua.reference()
        }
        copiedGlobals = made
        return made
    }

    /// Every run of letters, digits and `_` not starting with a digit, in all files: a superset of
    /// the names their code uses (a Lua name is such a run wherever it stands).
    package static func identifiers(in sources: [PolicySource]) -> Set<String> {
        var names = Set<String>()
        for source in sources {
            var utf8 = source.text.utf8[...]
            while let start = utf8.firstIndex(where: isNameByte) {
                let rest = utf8[start...]
                let end = rest.firstIndex { !isNameByte($0) } ?? rest.endIndex
                if !(0x30...0x39).contains(rest[start]) {
                    names.insert(String(decoding: rest[start..<end], as: UTF8.self))
                }
                utf8 = rest[end...]
            }
        }
        return names
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x5F
    }

    /// The rules in the prelude's list of declarations, in order: (name, registry reference).
    private func declaredRules() -> [(name: String, reference: Int32)] {
        let L = lua.L
        var rules: [(name: String, reference: Int32)] = []
        lua.pushReference(declarationsList)
        let count = lua_rawlen(L, -1)
        if count > 0 {
            for i in 1...count {
                guard lua_rawgeti(L, -1, lua_Integer(i)) == LUA_TTABLE else {
                    lua.pop()
                    continue
                }
                lua.push("kind")
                _ = lua_rawget(L, -2)
                let isRule = lua.string(at: -1) == "rule"
                lua.pop()
                if isRule {
                    lua.push("name")
                    _ = lua_rawget(L, -2)
                    let name = lua.string(at: -1)
                    lua.pop()
                    lua.push("body")
                    if lua_rawget(L, -2) == LUA_TFUNCTION, let name {
                        rules.append((name, lua.reference()))
                    } else {
                        lua.pop()
                    }
                }
                lua.pop()
            }
        }
        lua.pop()
        return rules
    }

    /// `loading.copy` and `loading.active` (a copy's files are running: they may declare).
    private func setCopying(_ copying: Bool) {
        lua.pushReference(loadingState)
        for key in ["copy", "active"] {
            lua.push(key)
            lua_pushboolean(lua.L, copying ? 1 : 0)
            lua_rawset(lua.L, -3)
        }
        lua.pop()
    }

    private func listLength(_ list: Int32) -> Int {
        lua.pushReference(list)
        defer { lua.pop() }
        return Int(lua_rawlen(lua.L, -1))
    }

    /// Empties one of the prelude's lists (what a copy's files declared has been read).
    func clearList(_ list: Int32) {
        let L = lua.L
        lua.pushReference(list)
        var i = lua_rawlen(L, -1)
        while i > 0 {
            lua_pushnil(L)
            lua_rawseti(L, -2, lua_Integer(i))
            i -= 1
        }
        lua.pop()
    }

    /// Forgets `user`'s copy, if they have one.
    package func forgetInstance(of user: String) {
        if let firstCopy, firstCopy.user == user {
            release(firstCopy.instance)
            self.firstCopy = nil
        }
        guard let instance = instances.removeValue(forKey: user) else { return }
        release(instance)
        lastInstance = nil
    }

    private func release(_ instance: PolicyInstance) {
        lua.release(instance.environment)
        for rule in instance.rules { lua.release(rule) }
    }

    /// Forgets the least recently used copies, keeping `count`: their users' next notification
    /// makes them anew (their policy's memory starts over).
    func forgetInstances(keeping count: Int) {
        guard instances.count > count else { return }
        let oldest = instances.sorted { $0.value.lastUse < $1.value.lastUse }.prefix(instances.count - count)
        for (user, instance) in oldest {
            release(instance)
            instances.removeValue(forKey: user)
        }
        lastInstance = nil
    }

    /// All copies share the interpreter's memory cap: when they fill more than half of it, the
    /// least recently used half go (the user evaluated last stays). Not again before memory has
    /// grown by an eighth of the cap since: one user's large copy must not make every evaluation
    /// collect.
    func keepInstancesWithinMemory() {
        let cap = lua.limits.memoryBytes
        guard instances.count > 1, lua.memoryInUse > max(cap / 2, memoryAfterForgetting + cap / 8) else { return }
        forgetInstances(keeping: max(1, instances.count / 2))
        lua.collectGarbage()
        memoryAfterForgetting = lua.memoryInUse
    }

    /// The interpreter's memory in use after a full collection (what all copies hold together).
    package func memoryInUseAfterCollecting() -> Int {
        lua.collectGarbage()
        return lua.memoryInUse
    }

    /// How many users have a copy of the policy now.
    package var instanceCount: Int {
        instances.count + (unclaimedInstance == nil ? 0 : 1) + (sharedInstance == nil ? 0 : 1)
            + (firstCopy == nil ? 0 : 1)
    }

    /// Whether one copy of the policy serves every user (it can keep nothing between calls).
    package var sharesOneCopy: Bool { sharedInstance != nil }
}
