import ArgumentParser
import Hush

/// Options shared by the commands that load a policy.
struct PolicyOptions: ParsableArguments {
    @Option(name: .customLong("policy"), help: ArgumentHelp("A policy file or directory (repeatable). Default: $XDG_CONFIG_HOME/hush/policy.lua, else the built-in default.", valueName: "file"), completion: .file())
    var policies: [String] = []

    /// Loads the policy or exits with status 2 and the problems on stderr.
    func engine() throws -> Engine {
        var sources: [PolicySource]
        do {
            if !policies.isEmpty {
                sources = try PolicyFiles.sources(paths: policies)
            } else if let path = PolicyFiles.userPolicyPath() {
                sources = try PolicyFiles.sources(paths: [path])
            } else {
                sources = [Engine.defaultPolicySource]
            }
        } catch {
            Output.error("hush: \(error)")
            throw ExitCode(2)
        }
        do {
            return try Engine(sources: sources)
        } catch {
            Output.error("hush: the policy could not be loaded:")
            for problem in error.problems { Output.error("  \(problem)") }
            throw ExitCode(2)
        }
    }
}
