import ArgumentParser
import Foundation
import Hush
import HushCore
import HushJSON
import HushState

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the active focus and why, and what waits for the next scheduled summary.",
        discussion: "Summaries that fell due by --now are delivered first, so what is listed as waiting still waits.")

    @OptionGroup var device: DeviceOptions
    @Flag(help: "Print JSON.") var json = false
    @OptionGroup var policy: PolicyOptions
    @OptionGroup var state: StateOptions

    func run() throws {
        let device = try DeviceState(policy: policy, state: state, device: self.device)
        let (clock, now, user) = (device.clock, device.now, device.user)
        try device.deliverDueSummaries()
        let status = try StateOptions.reading {
            try device.session.status(user: user, at: now)
        }
        let (queued, perApp, next) = (status.queued, status.perApp, status.nextSummary)
        if json {
            Output.write(status.json())
            return
        }
        if let focus = status.focus, let why = status.why {
            Output.line("Focus: \(focus) — \(why)")
        } else {
            Output.line("Focus: none")
        }
        if let next {
            let local = clock.local(next)
            let waiting =
                queued.isEmpty
                ? "nothing waiting"
                : "\(queued.count) waiting (" + perApp.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + ")"
            Output.line("Next summary: \(Schedule.formatTime(local.minuteOfDay)) (\(clock.format(next))); \(waiting)")
        } else {
            Output.line(
                "Scheduled summary: none (the policy has no summary times)"
                    + (queued.isEmpty ? "" : "; \(queued.count) waiting"))
        }
    }
}
