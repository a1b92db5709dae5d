/// The policy's rules adjust the working copy (docs/reference.md, "Running the rules").
extension Evaluation {
    mutating func runRules(_ runner: (any RuleRunning)?) throws {
        guard let runner, !policy.rules.isEmpty else {
            traceOnly("rules", "the policy has no rules")
            return
        }
        let ruleContext = RuleContext(
            now: now, local: clock.local(now), focus: activeFocus?.focus.name, locked: context.locked,
            ringer: context.ringer, audio: context.audio, user: envelope.user, state: state, directory: directory)
        let reports = try runner.runRules(subject: &subject, context: ruleContext)
        for report in reports {
            if report.error == nil && report.changes == nil && report.notes.isEmpty && trace == nil { continue }
            for line in report.notes {
                traceOnly(
                    "rules", "note from '\(report.rule.name)': \(line)", rule: report.rule.name,
                    location: report.rule.location)
            }
            if let error = report.error {
                decision.errors.append("rule '\(report.rule.name)': \(error)")
                traceOnly(
                    "rules", "rule '\(report.rule.name)' failed and was ignored: \(error)",
                    rule: report.rule.name, location: report.rule.location)
            } else if let changes = report.changes, changes.changesSomething {
                decision.rules.append(report.rule.name)
                let text =
                    changes.reason.map { "rule '\(report.rule.name)': \($0)" }
                    ?? "rule '\(report.rule.name)' set \(changes.summaryText)"
                note("rules", text, rule: report.rule.name, location: report.rule.location)
            } else {
                traceOnly(
                    "rules", "rule '\(report.rule.name)' made no change",
                    rule: report.rule.name, location: report.rule.location)
            }
        }
    }
}
