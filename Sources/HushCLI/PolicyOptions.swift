import ArgumentParser
import Hush
import HushPolicy

/// Options shared by the commands that load a policy.
struct PolicyOptions: ParsableArguments {
    @Option(
        name: .customLong("policy"),
        help: ArgumentHelp(
            "A policy file or directory (repeatable). Default: $XDG_CONFIG_HOME/hush/policy.lua, else the built-in default.",
            valueName: "file"), completion: .file())
    var policies: [String] = []

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
    static func engine(sources: [PolicySource]) throws -> Engine {
        do {
            return try Engine(sources: sources)
        } catch {
            Output.error("hush: the policy could not be loaded:")
            for problem in error.problems { Output.error("  \(problem)") }
            throw ExitCode(2)
        }
    }
}
