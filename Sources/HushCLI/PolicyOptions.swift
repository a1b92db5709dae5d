import ArgumentParser
import Hush
import HushPolicy
import Logging

/// Options shared by the commands that load a policy.
struct PolicyOptions: ParsableArguments {
    @Option(
        name: .customLong("policy"),
        help: ArgumentHelp(
            "A policy file or directory (repeatable). Default: $XDG_CONFIG_HOME/hush/policy.lua, else the built-in default.",
            valueName: "file"), completion: .file())
    var policies: [String] = []

    /// The files a long-running command watches for changes: those named, else the user's policy
    /// file when there is one.
    var watchedFiles: [String] {
        if !policies.isEmpty { return policies }
        return PolicyFiles.userPolicyPath().map { [$0] } ?? []
    }

    /// Loads the policy or exits with status 2 and the problems on stderr.
    func engine() throws -> Engine {
        try Self.engine(sources: sources())
    }

    /// The policy's files, read; a file that cannot be read exits with status 2.
    func sources() throws -> [PolicySource] {
        do {
            if !policies.isEmpty {
                return try PolicyFiles.sources(paths: policies)
            } else if let path = PolicyFiles.userPolicyPath() {
                return try PolicyFiles.sources(paths: [path])
            } else {
                return [Engine.defaultPolicySource]
            }
        } catch {
            Output.error("hush: \(error)")
            throw ExitCode(2)
        }
    }

    /// The policy prepared from `sources`; a policy that does not load exits with status 2 and
    /// every problem on stderr.
    static func engine(sources: [PolicySource], logger: Logger = Engine.silentLogger) throws -> Engine {
        do {
            return try Engine(sources: sources, logger: logger)
        } catch {
            Output.error("hush: the policy could not be loaded:")
            for problem in error.problems { Output.error("  \(problem)") }
            throw ExitCode(2)
        }
    }
}
