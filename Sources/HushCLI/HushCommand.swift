import ArgumentParser
import Foundation

@main
struct HushCommand: ParsableCommand {
    /// What `hush --version` prints: the one place the version is written.
    static let version = "0.7.0"

    static let configuration = CommandConfiguration(
        commandName: "hush",
        abstract: "Decide how notifications interrupt: focus, summaries, breakthrough, announcements and groups.",
        discussion: "Policies are Lua files (see docs/writing-a-policy.md). Decisions are printed as JSON Lines.",
        version: version,
        subcommands: [
            Evaluate.self, Check.self, TestCommand.self, FocusCommand.self, StatusCommand.self, DonateCommand.self,
            SuggestCommand.self, SimulateCommand.self, ServeCommand.self, Bench.self,
        ])

    /// Like ArgumentParser's main, but wrong usage exits with 2, as the CLI contract says.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
            Output.flush()
        } catch {
            Output.flush()
            let code = exitCode(for: error)
            if code.rawValue == 64 {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}
