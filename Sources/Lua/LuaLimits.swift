/// Bounds on what one interpreter may use. Defaults suit a person's own policy; tighten them for
/// policies from elsewhere (see docs/security.md).
package struct LuaLimits: Sendable, Hashable {
    /// Memory the interpreter may hold while Lua code runs.
    package var memoryBytes: Int
    /// How long a load or an evaluation may run before its instructions are counted. Counting is
    /// armed by a watchdog thread only then, so the common case pays nothing for it.
    package var graceMilliseconds: Double
    /// Lua VM instructions allowed once counting has started.
    package var instructionLimit: Int
    /// Steps one call of string.find/match/gmatch/gsub may take (backtracking bombs stop here).
    package var patternSteps: Int
    /// The largest string string.rep or string.gsub may build.
    package var stringBytes: Int
    /// Wall-clock bound on a load or an evaluation (0: none). The instruction budget counts VM
    /// instructions only; a script that loops over library calls doing much work each (a plain
    /// find over megabytes, a pattern near its step limit, a big string.rep) is stopped by this.
    /// Checked with the instruction count, so it applies once counting has started.
    package var timeLimitMilliseconds: Double

    package init(
        memoryBytes: Int = 64 << 20, graceMilliseconds: Double = 2, instructionLimit: Int = 5_000_000,
        patternSteps: Int = 1_000_000, stringBytes: Int = 16 << 20, timeLimitMilliseconds: Double = 1000
    ) {
        self.memoryBytes = memoryBytes
        self.graceMilliseconds = graceMilliseconds
        self.instructionLimit = instructionLimit
        self.patternSteps = patternSteps
        self.stringBytes = stringBytes
        self.timeLimitMilliseconds = timeLimitMilliseconds
    }

    /// Limits for loading a policy: the top-level chunk may do more set-up work than a rule.
    package var forLoading: LuaLimits {
        var limits = self
        limits.graceMilliseconds = max(graceMilliseconds, 100)
        limits.instructionLimit = max(instructionLimit, 50_000_000)
        if timeLimitMilliseconds > 0 { limits.timeLimitMilliseconds = max(timeLimitMilliseconds, 5000) }
        return limits
    }
}
