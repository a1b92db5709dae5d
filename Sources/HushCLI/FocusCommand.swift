import ArgumentParser
import Foundation
import Hush
import HushCore
import HushState

struct FocusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "focus",
        abstract: "Turn a focus on or off by hand (remembered in state until changed or until --until).",
        subcommands: [On.self, Off.self])

    struct On: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn a focus on by hand.",
            discussion: """
                NAME must be a focus the policy declares, spelt as it declares it (case included); any \
                other name is refused with exit status 2 and nothing is changed. With --force it is \
                turned on anyway, as a focus with the defaults: only critical and time-sensitive \
                notifications and repeated calls get through.
                """)

        @Argument(help: "The focus name, exactly as the policy declares it.")
        var name: String

        @Flag(help: "Turn the focus on even when the policy declares no focus of that name.")
        var force = false

        @Option(
            help: ArgumentHelp(
                "When it turns off again: RFC 3339, HH:MM, or a duration such as 90m.", valueName: "time"))
        var until: TimeArgument?

        @OptionGroup var device: DeviceOptions
        @OptionGroup var policy: PolicyOptions
        @OptionGroup var state: StateOptions

        func run() throws {
            let engine = try policy.engine()
            // Refused before the state is opened: a misspelt name must not even create the file.
            let problem = engine.policy.undeclaredFocusProblem(name)
            if let problem, !force {
                Output.error("hush: \(problem); use --force to turn it on anyway")
                throw ExitCode(2)
            }
            let store = try state.store()
            let clock = engine.pipeline.defaultClock
            let now = device.currentTime
            let end = until?.resolved(now: now, clock: clock)
            if let end, end <= now { throw ValidationError("--until: \(clock.format(end)) is not in the future") }
            let declared = engine.policy.focus(named: name)
            let focusName = declared?.name ?? name
            try store.setManualFocus(user: device.user, ManualFocus(name: focusName, since: now, until: end))
            if declared == nil, let problem {
                Output.error(
                    "hush: note: \(problem); it silences everything but critical and time-sensitive notifications")
            }
            Output.line(
                "Focus \(focusName) is on" + (end.map { " until \(clock.format($0))" } ?? " until you turn it off"))
        }
    }

    struct Off: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn focus off by hand.",
            discussion:
                "A focus on by hand is turned off. A focus on by its schedule stays off until its window ends (or until --until)."
        )

        @Option(
            help: ArgumentHelp("Keep every focus off until then: RFC 3339, HH:MM, or a duration.", valueName: "time"))
        var until: TimeArgument?

        @OptionGroup var device: DeviceOptions
        @OptionGroup var policy: PolicyOptions
        @OptionGroup var state: StateOptions

        func run() throws {
            let device = try DeviceState(policy: policy, state: state, device: self.device)
            let (store, clock, now, user) = (device.store, device.clock, device.now, device.user)
            if let until {
                let end = until.resolved(now: now, clock: clock)
                try store.setManualFocus(user: user, ManualFocus(name: nil, since: now, until: end))
                Output.line("Focus is off until \(clock.format(end))")
                return
            }
            if let (focus, end) = try device.session.turnFocusOff(user: user, until: nil, at: now, clock: clock) {
                Output.line("Focus \(focus) is off until its scheduled window ends at \(clock.format(end))")
            } else {
                Output.line("Focus is off")
            }
        }
    }
}
