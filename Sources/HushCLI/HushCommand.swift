import ArgumentParser
import Foundation
import SQLiteSettings

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
        // A reader that goes away (`hush eval | head -1`) is seen as EPIPE by Output, which stops
        // the command where nothing is half done; a file grown past `ulimit -f` fails the write
        // (SQLite reports it, nothing uncommitted is acknowledged) instead of killing the process.
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)
        // Before any state file is opened: SQLite takes its settings only until it starts.
        _ = hush_sqlite_disable_memory_statistics()
        do {
            var command = try parseAsRoot()
            try command.run()
            Output.flush()
            if Output.closed { endForClosedOutput() }
        } catch {
            Output.flush()
            if error is Output.Closed || Output.closed { endForClosedOutput() }
            let code = exitCode(for: error)
            if code.rawValue == 64 {
                Output.standardError(fullMessage(for: error) + "\n")
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }

    /// Standard output was closed by its reader: end as a program killed by SIGPIPE at its write
    /// would (status 141 in a shell, which prints nothing for it), so a pipeline with `pipefail`
    /// still sees that not everything was done; but only here, after the last commit. Any other
    /// write failure (a full disk) is an error, exit 1.
    static func endForClosedOutput() -> Never {
        guard Output.failure == EPIPE else {
            Output.standardError("hush: cannot write the output: \(String(cString: strerror(Output.failure)))\n")
            Foundation.exit(1)
        }
        signal(SIGPIPE, SIG_DFL)
        raise(SIGPIPE)
        Foundation.exit(128 + SIGPIPE)
    }
}
