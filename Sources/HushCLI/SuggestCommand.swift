import ArgumentParser
import Foundation
import Hush
import HushCore
import HushJSON

struct SuggestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suggest",
        abstract: "Suggest people to allow through a focus, from donated interactions (hush donate).",
        discussion: """
            Only outgoing interactions count, decayed with a 14-day half-life (calls weigh 1.5, group \
            interactions are split), over the last 90 days; at least 2 interactions. With --focus, \
            interactions inside its scheduled hours count double and people it already allows are left out.
            """)

    @Option(help: "The focus to suggest people for.") var focus: String?
    @Option(help: "How many people to list.") var limit = 10
    @OptionGroup var device: DeviceOptions
    @Flag(help: "Print a JSON array, best first.") var json = false
    @OptionGroup var policy: PolicyOptions
    @OptionGroup var state: StateOptions

    func validate() throws {
        if limit < 0 { throw ValidationError("--limit must be 0 or more") }
    }

    func run() throws {
        let device = try DeviceState(policy: policy, state: state, device: self.device)
        let (engine, clock, now, user) = (device.engine, device.clock, device.now, device.user)
        try device.deliverDueSummaries()
        var focusSettings: FocusSettings?
        if let focus {
            guard let found = engine.policy.focus(named: focus) else {
                let known = engine.policy.focuses.map(\.name)
                Output.error(
                    "hush: the policy declares no focus \"\(focus)\"\(Spelling.hint(for: focus, in: known))"
                        + (known.isEmpty ? "" : " (known: \(known.joined(separator: ", ")))"))
                throw ExitCode(2)
            }
            focusSettings = found
        }
        let session = device.session
        let ranked = try StateOptions.reading {
            try session.suggestions(user: user, focus: focusSettings, limit: limit, at: now, clock: clock)
        }
        if json {
            Output.write(session.suggestionsJSON(ranked, clock: clock))
            return
        }
        if ranked.isEmpty {
            Output.line(
                "No suggestions: nobody was reached at least twice in the last 90 days"
                    + (focus.map { " (people \($0) already allows are left out)" } ?? "") + ".")
            return
        }
        Output.line("Suggested" + (focusSettings.map { " for \($0.name)" } ?? "") + ":")
        for (i, s) in ranked.enumerated() {
            let name = engine.pipeline.directory.displayName(of: s.person)
            let handle = s.person.handle.map { " <\($0)>" } ?? ""
            let score = (s.score * 100).rounded() / 100
            Output.line("\(i + 1 < 10 ? " " : "")\(i + 1). \(name)\(handle)  score \(score)")
            Output.line("    \(s.why)")
        }
    }
}
