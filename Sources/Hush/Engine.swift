@_exported import HushCore
@_exported import HushPolicy
@_exported import HushState
import Logging
@_exported import Lua

/// A prepared policy: load once, then evaluate many notifications from any number of sessions
/// (one per thread). Immutable and `Sendable`.
public final class Engine: Sendable {
    public let pipeline: Pipeline
    public let sources: [PolicySource]
    public let limits: LuaLimits
    let logger: Logger

    public var policy: Policy { pipeline.policy }

    /// Loads and validates the policy. Every problem is reported at once, each with `file:line`.
    public init(sources: [PolicySource], limits: LuaLimits = LuaLimits(),
                logger: Logger = Logger(label: "hush", factory: { _ in SwiftLogNoOpLogHandler() })) throws(PolicyLoadError) {
        let interpreter = try PolicyInterpreter(sources: sources, limits: limits)
        self.pipeline = Pipeline(policy: interpreter.policy)
        self.sources = sources
        self.limits = limits
        self.logger = logger
    }

    /// The policy used when none is given: no focus, no summary, every app with its defaults.
    public static let defaultPolicySource = PolicySource(name: "(built-in default policy)", text: """
        -- Hush's default policy: every app with its defaults, no focus, no scheduled summary.
        app "*" { grouping = "automatic" }
        """)

    /// A session with its own interpreter and the given store (in memory when nil).
    /// Sessions are not thread-safe; make one per thread.
    public func makeSession(store: (any StateStore)? = nil) throws(PolicyLoadError) -> Session {
        try Session(engine: self, store: store ?? InMemoryStateStore())
    }
}
