/// Held for the Scheduled Summary, unless it breaks through (docs/reference.md, "Scheduled summary").
extension Evaluation {
    mutating func holdForSummary() -> Bool {
        let wanted = subject.delivery == .summary || subject.summary ?? settings.summary
        guard wanted else {
            traceOnly(
                "summary",
                subject.summary == false
                    ? "a rule keeps it out of the summary" : "\(settings.name) is not in the Scheduled Summary")
            return false
        }
        guard let at = pipeline.nextSummary(atOrAfter: now, clock: clock) else {
            if subject.delivery == .summary {
                decision.errors.append("delivery \"summary\" asked for, but the policy has no summary times")
            }
            traceOnly("summary", "no summary times: nothing is held")
            return false
        }
        let forced = subject.delivery == .summary || subject.summary == true
        if subject.level == .critical {
            decision.breakthrough = .critical
            note("summary", "critical: passes the Scheduled Summary")
            return false
        }
        if !forced {
            if subject.level == .timeSensitive {
                decision.breakthrough = .timeSensitive
                note("summary", "time-sensitive: passes the Scheduled Summary")
                return false
            }
            if envelope.isCommunicationFromSender {
                decision.breakthrough = .communication
                let who = envelope.communicationKind == .call ? "a call" : "a message"
                note("summary", "\(who) from a person: passes the Scheduled Summary")
                return false
            }
        }
        decision.delivery = .summary
        decision.summaryAt = at
        decision.summaryAtOffset = clock.offset(at: at)
        decision.badge = nil
        let local = clock.local(at)
        note("summary", "held for the Scheduled Summary at \(Schedule.formatTime(local.minuteOfDay))")
        if let expiration = envelope.expiration, (expiration == 0 ? now : expiration) < at {
            note("summary", "expires before that summary: it will be dropped then, not shown stale")
        }
        let held = takeStored(summaryAt: at, groupID: nil)
        changes.append(replacing == true ? .replace(held, queued: true) : .enqueue(held))
        return true
    }
}
