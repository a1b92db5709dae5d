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
        let (engine, store, clock, now, user) = (device.engine, device.store, device.clock, device.now, device.user)
        try device.deliverDueSummaries()
        let (active, queued) = try StateOptions.reading {
            (
                try engine.pipeline.activeFocus(
                    at: now, context: EvaluationContext(), user: user, state: store, clock: clock),
                try store.queuedNotifications(user: user)
            )
        }
        let next = engine.pipeline.nextSummary(atOrAfter: now, clock: clock)
        var perApp: [(String, Int)] = []
        for n in queued {
            let name = engine.pipeline.settings(for: n.app).name
            if let i = perApp.firstIndex(where: { $0.0 == name }) { perApp[i].1 += 1 } else { perApp.append((name, 1)) }
        }
        if json {
            var w = JSONWriter()
            w.raw("{\"user\":"); w.writeString(user)
            w.raw(",\"focus\":"); if let active { w.writeString(active.focus.name) } else { w.writeNull() }
            w.raw(",\"why\":"); if let active { w.writeString(active.why) } else { w.writeNull() }
            w.raw(",\"pending_summary\":"); w.writeInt(queued.count)
            w.raw(",\"pending_by_app\":{")
            for (i, (name, count)) in perApp.enumerated() {
                if i > 0 { w.raw(",") }
                w.writeString(name); w.raw(":"); w.writeInt(count)
            }
            w.raw("},\"next_summary\":"); if let next { w.writeString(clock.format(next)) } else { w.writeNull() }
            w.raw("}")
            Output.write(w.bytes)
            return
        }
        if let active { Output.line("Focus: \(active.focus.name) — \(active.why)") } else { Output.line("Focus: none") }
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
