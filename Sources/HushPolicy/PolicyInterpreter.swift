import CLua54
package import HushCore
package import Lua

/// A loaded policy in its own sandboxed interpreter: the declarations as a `Policy`, and the rules
/// ready to run. Not thread-safe: make one per thread from the same sources (they are cheap to load).
package final class PolicyInterpreter: RuleRunning, LuaFieldSource {
    package let policy: Policy
    package let sources: [PolicySource]
    let lua: LuaState
    /// The prelude's lists of declarations and problems: read at load, and again for each user's
    /// copy of the policy.
    var declarationsList: Int32 = LUA_NOREF
    var problemsList: Int32 = LUA_NOREF
    /// The prelude's `loading` table: `copy` is true while a user's copy is made.
    var loadingState: Int32 = LUA_NOREF
    // Read and written at every evaluation, by one thread at a time: the run-time exclusivity
    // checks of these are left out too.
    /// Each user's copy of the policy (see PolicyInterpreter+Instances.swift).
    @exclusivity(unchecked) var instances: [String: PolicyInstance] = [:]
    /// The copy made at load: the first user's.
    @exclusivity(unchecked) var unclaimedInstance: PolicyInstance?
    /// The last user's place in `instances` (nil after an insertion or removal).
    @exclusivity(unchecked) var lastInstance: (user: String, index: Dictionary<String, PolicyInstance>.Index)?
    @exclusivity(unchecked) var instanceUses = 0
    @exclusivity(unchecked) var memoryAfterForgetting = 0
    /// Per file: a function of `_ENV` running the file's code, compiled once for every later copy
    /// (nil before the second user; an entry is nil where the file must be compiled per copy).
    @exclusivity(unchecked) var fileFunctions: [Int32?]?
    /// The globals a user's copy has: a registry reference to a table of their names, or
    /// LUA_NOREF for all (nil before the second user).
    @exclusivity(unchecked) var copiedGlobals: Int32?
    /// The names that stand in the policy's files (nil before the second user).
    @exclusivity(unchecked) var namesInFiles: Set<String>?
    /// The one copy every user's rules run in, when the policy can keep nothing between calls
    /// (decided at the second user's first notification; see PolicyInterpreter+Instances.swift).
    @exclusivity(unchecked) var sharedInstance: PolicyInstance?
    /// With `sharedInstance`: the first user's own copy, the one made at load.
    @exclusivity(unchecked) var firstCopy: (user: String, instance: PolicyInstance)?
    @exclusivity(unchecked) var sharingDecided = false
    /// Copies kept at most; the least recently used go first (also when memory runs short, which
    /// usually comes first: half the default cap holds about 47,000 copies of a small policy).
    package var maxInstances = 50_000
    /// The milliseconds the next evaluation's rules may take, when a service gives each user a
    /// share of its time (below the time limit, it lowers it for that evaluation; below
    /// `minimumTimeAllowance` the rules are not run). nil: the limits alone.
    @exclusivity(unchecked) package var timeAllowance: Double?
    /// Less would be spent before the time limit is even checked (the grace period).
    package var minimumTimeAllowance: Double { lua.limits.graceMilliseconds + 1 }
    /// A report per rule that returned nothing, in order.
    @exclusivity(unchecked) private var blankReports: [RuleReport] = []
    @exclusivity(unchecked) private var notificationView: Int32 = LUA_NOREF
    @exclusivity(unchecked) private var contextView: Int32 = LUA_NOREF

    /// The pipeline evaluated with this interpreter, rebuilt from its own policy (one per thread).
    let pipelineCopies = PipelineCopies()

    package func pipelineCopy(of shared: Pipeline) -> Pipeline? {
        pipelineCopies.copy(of: shared) { policy }
    }

    // What the views read during a run of the rules. One thread at a time: the run-time
    // exclusivity checks of these hot properties are left out.
    /// The subject of the rules running now, where `runRules` was given it (no copy).
    @exclusivity(unchecked) var currentSubject: UnsafeMutablePointer<RuleSubject>?
    /// The context of the rules running now, where `runRules` was given it (no copy).
    @exclusivity(unchecked) var currentContextPointer: UnsafePointer<RuleContext>?
    var currentContext: RuleContext? { currentContextPointer?.pointee }
    @exclusivity(unchecked) var notes: [String] = []
    /// A state read a helper made that failed: raised in Lua to stop the rule, then thrown by
    /// `runRules`, even when the rule caught the Lua error (pcall).
    @exclusivity(unchecked) var stateReadFailure: (any Error)?
    /// The trees of the lazy tables made for views (payload, headers) not known to be gone or
    /// kept yet, with `lua.collections` when each was made (see `countKeptTrees`).
    @exclusivity(unchecked) var lazyRoots: [(node: LazyJSON, madeAt: Int)] = []
    @exclusivity(unchecked) var lazyRootsCheckedAt = 0

    deinit {
        // A tree gives back what was counted for it when it goes, to `lua`'s sandbox: let these go
        // while it is still there (stored properties are destroyed after this, `lua` first).
        lazyRoots.removeAll()
    }

    /// Loads the sources in order. Throws every problem found, with `file:line`.
    package init(sources: [PolicySource], limits: LuaLimits = LuaLimits()) throws(PolicyLoadError) {
        self.sources = sources
        let problems = ProblemList(sources: sources)
        let lua: LuaState
        do {
            lua = try LuaState(limits: limits)
        } catch {
            throw PolicyLoadError(problems: [
                PolicyProblem(file: sources.first?.name ?? "policy", line: 0, message: error.message)
            ])
        }
        self.lua = lua

        // The prelude receives the callsite function and two tables to fill.
        lua_createtable(lua.L, 16, 0)
        let declarationsRef = lua.reference()
        lua_createtable(lua.L, 4, 0)
        let problemsRef = lua.reference()
        // `loading.active`: the files are running (declarations are allowed); `loading.copy`: for a
        // user's copy.
        lua_createtable(lua.L, 0, 2)
        lua.push("active")
        lua_pushboolean(lua.L, 1)
        lua_rawset(lua.L, -3)
        let loadingRef = lua.reference()
        do {
            try lua.load(Prelude.source, chunkName: Prelude.chunkName)
            lua.pushCallsiteFunction()
            lua.pushReference(declarationsRef)
            lua.pushReference(problemsRef)
            lua.pushReference(loadingRef)
            lua.beginBudget()
            defer { lua.endBudget() }
            try lua.call(arguments: 4, results: 0)
        } catch {
            throw PolicyLoadError(problems: [
                PolicyProblem(
                    file: "hush", line: error.line ?? 0, message: "internal: the policy prelude failed: \(error)")
            ])
        }

        // The files run in a copy of the globals, never in the global table itself: every later
        // user's copy is made from it as the prelude left it.
        guard lua.pushEnvironmentCopy() else {
            throw PolicyLoadError(problems: [
                PolicyProblem(
                    file: sources.first?.name ?? "policy", line: 0, message: "internal: no room for the globals")
            ])
        }
        let environment = lua.reference()
        for source in sources {
            do {
                try lua.run(source.text, chunkName: source.name, environment: environment)
            } catch {
                problems.add(error.file ?? source.name, error.line ?? 0, Self.explain(error))
                throw PolicyLoadError(problems: problems.problems)
            }
        }
        lua.pushReference(loadingRef)
        lua.push("active")
        lua_pushboolean(lua.L, 0)
        lua_rawset(lua.L, -3)
        lua.pop()

        // Read what the files declared, with raw reads only, copying at most `Self.maxDeclaredValues`
        // values in all (tables sharing subtables could otherwise make exponentially many).
        lua.pushReference(problemsRef)
        let recordedProblems = lua.value(at: -1, depth: 3)
        lua.pop()
        if recordedProblems == LuaState.tooLarge {
            problems.add(
                sources.first?.name ?? "policy", 0, "too many problems to list; fix the first ones and check again")
        }
        for item in recordedProblems.tableValue?.array ?? [] {
            guard let t = item.tableValue else { continue }
            problems.add(
                t["file"]?.stringValue ?? "policy", t["line"]?.intValue ?? 0,
                t["message"]?.stringValue ?? "invalid declaration")
        }
        lua.pushReference(declarationsRef)
        let count = lua_rawlen(lua.L, -1)
        var builder = PolicyBuilder(problems: problems)
        var budget = Self.maxDeclaredValues
        if count > 0 {
            for i in 1...count {
                _ = lua_rawgeti(lua.L, -1, lua_Integer(i))
                let entry = lua.value(at: -1, depth: 12, budget: &budget)
                if entry == LuaState.tooLarge {
                    var small = 16
                    let head = lua.value(at: -1, depth: 1, budget: &small).tableValue
                    lua.pop()
                    let what = [head?["kind"]?.stringValue, head?["name"]?.stringValue.map { "\"\($0)\"" }].compactMap {
                        $0
                    }.joined(separator: " ")
                    problems.add(
                        head?["file"]?.stringValue ?? "policy", head?["line"]?.intValue ?? 0,
                        "\(what.isEmpty ? "a declaration" : what): too large to read (a policy's declarations may hold \(Self.maxDeclaredValues) values in all)"
                    )
                    break
                }
                lua.pop()
                guard let t = entry.tableValue, let kind = t["kind"]?.stringValue else { continue }
                builder.add(
                    Declaration(
                        kind: kind, name: t["name"]?.stringValue, body: t["body"],
                        file: t["file"]?.stringValue ?? "policy", line: t["line"]?.intValue ?? 0))
            }
        }
        lua.pop()
        guard builder.problems.problems.isEmpty else { throw PolicyLoadError(problems: builder.problems.problems) }
        self.policy = builder.policy
        self.declarationsList = declarationsRef
        self.problemsList = problemsRef
        self.loadingState = loadingRef
        clearList(declarationsRef)
        self.unclaimedInstance = PolicyInstance(
            environment: environment, rules: builder.ruleFunctions.map(\.reference), lastUse: 0)
        self.blankReports = policy.rules.map { RuleReport(rule: $0) }
        setUpViews()
        lua.printHandler = { [unowned self] line in
            // Like hush.note: 100 lines of 1000 characters per rule (a loop of prints would
            // otherwise pile up memory no cap counts).
            if self.notes.count < 100 { self.notes.append(String(line.prefix(1000))) }
            self.lua.requestStop()
        }
    }

    /// A new interpreter for the same policy (for another thread).
    package func copy() throws(PolicyLoadError) -> PolicyInterpreter {
        try PolicyInterpreter(sources: sources, limits: lua.limits)
    }

    /// How many values all of a policy's declarations may hold together.
    static let maxDeclaredValues = 1_000_000

    static func explain(_ error: LuaError) -> String {
        switch error.kind {
        case .syntax: return "syntax error: \(error.message)"
        case .budget: return "the policy took too long to load: \(error.message)"
        case .memory: return "the policy used more memory than allowed while loading"
        case .runtime: return error.message + misspeltGlobalHint(error.message)
        }
    }

    static let vocabulary = ["timezone", "app", "category", "summary", "contact", "focus", "announce", "rule", "hush"]

    /// "attempt to call a nil value (global 'focuss')" → " (did you mean 'focus'?)"
    static func misspeltGlobalHint(_ message: String) -> String {
        guard let start = message.firstRange(of: "(global '")?.upperBound,
            let end = message[start...].firstIndex(of: "'")
        else { return "" }
        let name = String(message[start..<end])
        return Spelling.hint(for: name, in: vocabulary)
    }

    // MARK: running rules

    package func runRules(subject: inout RuleSubject, context: RuleContext) throws -> [RuleReport] {
        let rules = policy.rules
        guard !rules.isEmpty else { return [] }
        countKeptTrees()
        return try withUnsafePointer(to: context) { context in
            currentContextPointer = context
            defer { currentContextPointer = nil }
            return try withUnsafeMutablePointer(to: &subject) { subject in
                currentSubject = subject
                defer { currentSubject = nil }
                return try runRules(rules, subject: subject)
            }
        }
    }

    private func runRules(_ rules: [Policy.RuleInfo], subject: UnsafeMutablePointer<RuleSubject>) throws -> [RuleReport]
    {
        // Most runs change nothing: the reports are then the blank ones, shared (no copy).
        var reports = rules.count == blankReports.count ? blankReports : rules.map { RuleReport(rule: $0) }
        // The user's own copy of the policy (made before the window: its files run in their own).
        let ruleReferences: [Int32]
        switch instance(for: subject.pointee.envelope.user) {
        case .success(let instance):
            ruleReferences = instance.rules
            lua.setEnvironment(instance.environment)
        case .failure(let failure):
            for (index, info) in rules.enumerated() { reports[index].error = "\(info.location): not run: \(failure)" }
            return reports
        }
        defer {
            lua.setEnvironment(nil)
            keepInstancesWithinMemory()
        }
        if let allowance = timeAllowance {
            guard allowance >= minimumTimeAllowance else {
                for (index, info) in rules.enumerated() {
                    reports[index].error =
                        "\(info.location): not run: this user's rules used their share of time (the built-in behaviour decides)"
                }
                return reports
            }
            let limits = lua.limits
            if limits.timeLimitMilliseconds == 0 || allowance < limits.timeLimitMilliseconds {
                var lowered = limits
                lowered.timeLimitMilliseconds = allowance
                lua.setLimits(lowered)
                defer { lua.setLimits(limits) }
                return try runRules(rules, subject: subject, references: ruleReferences, reports: reports)
            }
        }
        return try runRules(rules, subject: subject, references: ruleReferences, reports: reports)
    }

    private func runRules(
        _ rules: [Policy.RuleInfo], subject: UnsafeMutablePointer<RuleSubject>, references ruleReferences: [Int32],
        reports: [RuleReport]
    ) throws -> [RuleReport] {
        var reports = reports
        let top = lua.top
        // The views, below the rules' calls; what they cached for the last notification is gone.
        lua.pushReference(notificationView)
        lua.pushReference(contextView)
        let n = top + 1, ctx = top + 2
        lua.prepareView(at: n)
        lua.prepareView(at: ctx)
        lua.beginBudget()
        defer {
            lua.endBudget()
            lua.top = top
        }
        // The rules run in C one after another while they return nil; Swift takes over for one
        // that returns changes, fails, or noted something.
        var next = 0
        while next < rules.count {
            notes.removeAll(keepingCapacity: true)
            let (index, error, exhaustedBefore) = lua.callUntilResult(ruleReferences, from: next, arguments: n, ctx)
            if let failure = stateReadFailure {
                stateReadFailure = nil
                throw failure
            }
            // (The rules before `index` returned nil: their blank reports stand.)
            guard index < rules.count else { break }
            let info = rules[index]
            var report = RuleReport(rule: info)
            if let error {
                // Every error names a place: the rule's own when Lua gave none.
                if exhaustedBefore {
                    report.error = "\(info.location): not run: \(error.message)"
                } else if error.file == nil {
                    report.error = "\(info.location): \(error.message)"
                } else {
                    report.error = error.description
                }
            } else {
                switch readChanges() {
                case .success(let changes):
                    report.changes = changes
                    if let changes {
                        subject.pointee.apply(changes)
                        // What the notification view shows of the changes is read anew.
                        if changes.level != nil { lua.forgetViewField(at: n, field: Self.levelField) }
                        if changes.relevance != nil { lua.forgetViewField(at: n, field: Self.relevanceField) }
                        if changes.thread != nil { lua.forgetViewField(at: n, field: Self.threadField) }
                    }
                case .failure(let message):
                    report.error = "\(info.location): \(message)"
                }
            }
            lua.top = ctx
            report.notes = notes
            reports[index] = report
            next = index + 1
        }
        return reports
    }

    static let levelField = Int32(NotificationField.allCases.firstIndex(of: .level)!)
    static let relevanceField = Int32(NotificationField.allCases.firstIndex(of: .relevance)!)
    static let threadField = Int32(NotificationField.allCases.firstIndex(of: .thread)!)

    enum ChangesResult {
        case success(RuleChanges?)
        case failure(String)
    }

    static let changeKeys = ["level", "delivery", "allow", "summary", "announce", "relevance", "thread", "reason"]

    /// Reads the table a rule returned, raw (no metamethods), validating every change.
    private func readChanges() -> ChangesResult {
        let L = lua.L
        let type = lua_type(L, -1)
        if type == LUA_TNIL { return .success(nil) }
        guard type == LUA_TTABLE else {
            return .failure("a rule returns nil or a table of changes, got a \(String(cString: lua_typename(L, type)))")
        }
        lua.settleLazyTable(at: -1)  // (a rule returning n.payload itself) read as the table it is
        var changes = RuleChanges()
        var seen = 0
        lua_pushnil(L)
        while lua_next(L, -2) != 0 {
            seen += 1
            guard seen <= 32, lua_type(L, -2) == LUA_TSTRING, let key = lua.string(at: -2) else {
                lua.pop(2)
                return .failure(
                    "a rule's changes are written key = value with keys among \(Self.changeKeys.joined(separator: ", "))"
                )
            }
            let value = lua.value(at: -1, depth: 0)
            lua.pop()
            func wrong(_ expected: String) -> ChangesResult {
                lua.pop()
                return .failure("change '\(key)' must be \(expected), got \(describe(value))")
            }
            switch key {
            case "level":
                guard let s = value.stringValue, let level = InterruptionLevel(rawValue: s) else {
                    return wrong("passive, active, time-sensitive or critical")
                }
                changes.level = level
            case "delivery":
                // Withdrawing is the app's act, never a rule's.
                guard let s = value.stringValue, let d = Decision.Delivery(rawValue: s), d != .withdrawn else {
                    return wrong("alert, quiet, summary, silenced, dropped or background")
                }
                changes.delivery = d
            case "allow":
                guard let b = value.boolValue else { return wrong("true or false") }
                changes.allow = b
            case "summary":
                guard let b = value.boolValue else { return wrong("true or false") }
                changes.summary = b
            case "announce":
                guard let b = value.boolValue else { return wrong("true or false") }
                changes.announce = b
            case "relevance":
                guard let d = value.doubleValue, d >= 0, d <= 1 else { return wrong("a number from 0 to 1") }
                changes.relevance = d
            case "thread":
                guard let s = value.stringValue else { return wrong("a string") }
                changes.thread = s
            case "reason":
                guard let s = value.stringValue else { return wrong("a string") }
                changes.reason = s
            default:
                lua.pop()
                return .failure(
                    "unknown change '\(key)'\(Spelling.hint(for: key, in: Self.changeKeys)); a rule may return \(Self.changeKeys.joined(separator: ", "))"
                )
            }
        }
        return .success(changes)
    }

    private func describe(_ value: LuaValue) -> String {
        switch value {
        case .string(let s): "\"\(s)\""
        case .integer(let i): String(i)
        case .number(let d): String(d)
        case .boolean(let b): String(b)
        default: "a \(value.typeName)"
        }
    }

    // MARK: views

    private func setUpViews() {
        lua.setLazyTableCallback(LazyJSON.callback)
        // The interpreter owns `lua`, so it outlives every read.
        lua.setFieldCallback(Self.fieldCallback, context: Unmanaged.passUnretained(self).toOpaque())
        let nBase = lua.reserveFields(NotificationField.allCases.count, source: self)
        notificationBase = nBase
        pushFieldMap(NotificationField.allCases.map(\.rawValue))
        lua.pushView(
            fieldMap: -1, baseID: nBase, name: "notification (read-only)",
            readableAhead: readableAheadMask(NotificationField.allCases.map(\.isReadableAhead)))
        notificationView = lua.reference()
        lua.pop()

        let cBase = lua.reserveFields(ContextField.allCases.count, source: self)
        contextBase = cBase
        pushFieldMap(ContextField.allCases.map(\.rawValue))
        lua.pushView(
            fieldMap: -1, baseID: cBase, name: "context (read-only)",
            readableAhead: readableAheadMask(ContextField.allCases.map(\.isReadableAhead)))
        contextView = lua.reference()
        lua.pop()
        installHostHelpers()
    }

    var notificationBase: Int32 = 0
    var contextBase: Int32 = 0
    static let notificationFields = NotificationField.allCases
    static let contextFields = ContextField.allCases

    /// Views' reads come here straight from C: no existential, no retain.
    static let fieldCallback: LuaState.FieldCallback = { context, L, id in
        guard let context, let L else { return 0 }
        return Unmanaged<PolicyInterpreter>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.pushField(L, id: id) }
    }

    @inline(__always)
    package func pushField(_ L: OpaquePointer, id: Int32) -> Int32 {
        let n = Int(id - notificationBase)
        if n >= 0 && n < Self.notificationFields.count { return pushNotificationField(L, Self.notificationFields[n]) }
        let c = Int(id - contextBase)
        if c >= 0 && c < Self.contextFields.count { return pushContextField(L, Self.contextFields[c]) }
        lua_pushnil(L)
        return 1
    }

    private func pushFieldMap(_ names: [String]) {
        lua_createtable(lua.L, 0, Int32(names.count))
        for (i, name) in names.enumerated() {
            lua.push(name)
            lua_pushinteger(lua.L, lua_Integer(i))
            lua_rawset(lua.L, -3)
        }
    }
}
