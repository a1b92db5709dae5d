import ArgumentParser
import Hush

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate policy files without evaluating anything.",
        discussion: "Prints every problem as file:line: message. Exit 0 when clean, 1 with problems, 2 when a file cannot be read.")

    @Argument(help: "Policy files or directories.")
    var policies: [String]

    func run() throws {
        let sources: [PolicySource]
        do {
            sources = try PolicyFiles.sources(paths: policies)
        } catch {
            Output.error("hush: \(error)")
            throw ExitCode(2)
        }
        do {
            let engine = try Engine(sources: sources)
            let p = engine.policy
            Output.line("ok: \(sources.count) file\(sources.count == 1 ? "" : "s"), \(p.focuses.count) focus\(p.focuses.count == 1 ? "" : "es"), \(p.rules.count) rule\(p.rules.count == 1 ? "" : "s"), \(p.apps.count) app\(p.apps.count == 1 ? "" : "s")")
        } catch {
            for problem in error.problems { Output.line(problem.description) }
            Output.line("\(error.problems.count) problem\(error.problems.count == 1 ? "" : "s")")
            Output.flush()
            throw ExitCode(1)
        }
    }
}
