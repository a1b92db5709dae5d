public import HushCore
package import HushPolicy
public import HushState
public import Logging
package import Lua

/// A prepared policy: load once, then evaluate many notifications from any number of sessions
/// (one per thread). Immutable and `Sendable`.
///
/// ```swift
/// let engine = try Engine(policyFiles: ["policies/work.lua"])
/// let session = try engine.makeSession()
/// ```
public final class Engine: Sendable {
    package let pipeline: Pipeline
    package let sources: [PolicySource]
    package let limits: LuaLimits
    /// Where the engine says what it does: policy loads at info, rule errors and budget overruns
    /// at debug, store failures at error. Never printed by the library itself.
    public let logger: Logger

    package var policy: Policy { pipeline.policy }

    /// Loads and validates the policy. Every problem is reported at once, each with `file:line`.
    package init(sources: [PolicySource], limits: LuaLimits = LuaLimits(), logger: Logger = Engine.silentLogger)
        throws(PolicyLoadError)
    {
        do {
            let interpreter = try PolicyInterpreter(sources: sources, limits: limits)
            self.pipeline = Pipeline(policy: interpreter.policy)
        } catch {
            logger.debug(
                "policy refused", metadata: ["files": "\(sources.map(\.name))", "problems": "\(error.problems.count)"])
            throw error
        }
        self.sources = sources
        self.limits = limits
        self.logger = logger
        logger.info(
            "policy loaded",
            metadata: ["files": "\(sources.map(\.name))", "focuses": "\(pipeline.policy.focuses.count)"])
    }

    /// Loads the policy in these files; a directory stands for every `*.lua` file in it, tests
    /// (`*_test.lua`) aside, in name order.
    /// - Throws: `HushError` `invalid_policy` with every problem as `file:line: message`, or
    ///   `unreadable_policy` when a file cannot be read.
    public convenience init(
        policyFiles paths: [String], limits: Limits = Limits(), logger: Logger = Engine.silentLogger
    )
        throws(HushError)
    {
        let sources: [PolicySource]
        do { sources = try PolicyFiles.sources(paths: paths) } catch {
            throw HushError(code: .unreadablePolicy, message: error.description)
        }
        try self.init(checking: sources, limits: limits, logger: logger)
    }

    /// Loads a policy from its text; `name` is the file name its problems are reported under.
    /// - Throws: `HushError` `invalid_policy` with every problem as `file:line: message`.
    public convenience init(
        policy text: String, name: String = "policy.lua", limits: Limits = Limits(),
        logger: Logger = Engine.silentLogger
    ) throws(HushError) {
        try self.init(checking: [PolicySource(name: name, text: text)], limits: limits, logger: logger)
    }

    /// The built-in default policy: every app with its defaults, no focus, no scheduled summary.
    public convenience init(limits: Limits = Limits(), logger: Logger = Engine.silentLogger) throws(HushError) {
        try self.init(checking: [Engine.defaultPolicySource], limits: limits, logger: logger)
    }

    private convenience init(checking sources: [PolicySource], limits: Limits, logger: Logger) throws(HushError) {
        do { try self.init(sources: sources, limits: limits.lua, logger: logger) } catch {
            throw HushError(policy: error)
        }
    }

    /// The same kind of engine (limits, logger) from the policy in these files now: a policy
    /// file changed on disk.
    /// - Throws: `HushError` as ``init(policyFiles:limits:logger:)``.
    package func reloaded(from paths: [String]) throws(HushError) -> Engine {
        let sources: [PolicySource]
        do { sources = try PolicyFiles.sources(paths: paths) } catch {
            throw HushError(code: .unreadablePolicy, message: error.description)
        }
        do { return try Engine(sources: sources, limits: limits, logger: logger) } catch {
            throw HushError(policy: error)
        }
    }

    /// The policy used when none is given: no focus, no summary, every app with its defaults.
    package static let defaultPolicySource = PolicySource(
        name: "(built-in default policy)",
        text: """
            -- Hush's default policy: every app with its defaults, no focus, no scheduled summary.
            app "*" { grouping = "automatic" }
            """)

    /// A logger that drops everything: the default, so the library stays quiet unless given one.
    public static let silentLogger = Logger(label: "hush", factory: { _ in SwiftLogNoOpLogHandler() })

    /// A session that keeps state in memory (lost when the session goes).
    public func makeSession() throws(HushError) -> Session {
        try makeSession(storing: InMemoryStateStore())
    }

    /// A session that keeps state in this store.
    public func makeSession(store: InMemoryStateStore) throws(HushError) -> Session {
        try makeSession(storing: store)
    }

    /// A session that keeps state in this SQLite file; give each session its own store.
    public func makeSession(store: SQLiteStateStore) throws(HushError) -> Session {
        try makeSession(storing: store)
    }

    /// A session that keeps state in PostgreSQL, shared with other processes (each user's
    /// evaluations are serialized across them); give each session its own store.
    public func makeSession(store: PostgresStateStore) throws(HushError) -> Session {
        try makeSession(storing: store)
    }

    /// A session with its own interpreter and the given store. Sessions are not thread-safe; make
    /// one per thread.
    package func makeSession(storing store: any StateStore) throws(HushError) -> Session {
        do { return try Session(engine: self, store: store) } catch { throw HushError(policy: error) }
    }
}

extension Engine {
    /// What one policy may use while it loads and runs: memory, instructions, time. The defaults
    /// suit a person's own policy; tighten them for policies written by others (docs/security.md).
    public struct Limits: Sendable, Hashable {
        /// The sandbox's own limits, which these name.
        package var lua = LuaLimits()

        /// The defaults, which suit a person's own policy; set the fields to tighten them.
        public init() {}

        /// Memory the policy's interpreter may hold while Lua code runs, in bytes (default 64 MiB).
        public var memoryBytes: Int {
            get { lua.memoryBytes }
            set { lua.memoryBytes = newValue }
        }
        /// How long an evaluation's rules run before their instructions are counted, in
        /// milliseconds (default 2): counting is armed only then, so most evaluations pay nothing.
        public var graceMilliseconds: Double {
            get { lua.graceMilliseconds }
            set { lua.graceMilliseconds = newValue }
        }
        /// Lua instructions one evaluation's rules may run once counting starts (default 5,000,000).
        public var instructionLimit: Int {
            get { lua.instructionLimit }
            set { lua.instructionLimit = newValue }
        }
        /// Steps one `string.find`/`match`/`gmatch`/`gsub` call may take (default 1,000,000).
        public var patternSteps: Int {
            get { lua.patternSteps }
            set { lua.patternSteps = newValue }
        }
        /// The largest string `string.rep` or `string.gsub` may build, in bytes (default 16 MiB).
        public var stringBytes: Int {
            get { lua.stringBytes }
            set { lua.stringBytes = newValue }
        }
        /// Wall-clock bound on one evaluation's rules, in milliseconds (0: none; default 1,000).
        /// Loading a policy may take more (docs/security.md, "The limits and their defaults").
        public var timeLimitMilliseconds: Double {
            get { lua.timeLimitMilliseconds }
            set { lua.timeLimitMilliseconds = newValue }
        }
    }
}

extension HushError {
    /// A policy that did not load, with every problem.
    package init(policy error: PolicyLoadError) {
        self.init(code: .invalidPolicy, message: error.description, problems: error.problems.map(\.description))
        cause = error
    }
}
