/// The policy's rules adjust the working copy (docs/reference.md, "Running the rules").
extension Evaluation {
    mutating func runRules(_ runner: (any RuleRunning)?) throws {
        guard let runner, !policy.rules.isEmpty else {
            traceOnly("rules", "the policy has no rules")
            return
        }
        let ruleContext = RuleContext(
            now: now, local: clock.local(now), focus: activeFocus?.focus.settings.name, locked: context.locked,
            ringer: context.ringer, audio: context.audio, user: envelope.user, state: state, directory: directory)
        let reports = try runner.runRules(subject: &subject, context: ruleContext)
        // What rules put in the decision is bounded (OutputBounds): a policy cannot make a line of
        // any size, nor push the built-in steps' reasons out.
        var reasonsLeftOut = 0, errorsLeftOut = 0, reasonsGiven = 0
        for index in reports.indices {
            // Most reports are blank: looked at where they are, without a copy.
            if trace == nil && reports.withUnsafeBufferPointer({ RuleReport.isBlank($0[index]) }) { continue }
            let report = reports[index]
            for line in report.notes {
                traceOnly(
                    "rules", "note from '\(report.rule.name)': \(line)", rule: report.rule.name,
                    location: report.rule.location)
            }
            if let error = report.error {
                if decision.errors.count < OutputBounds.errors {
                    decision.errors.append(OutputBounds.cut("rule '\(report.rule.name)': \(error)"))
                } else {
                    errorsLeftOut += 1
                }
                traceOnly(
                    "rules", "rule '\(report.rule.name)' failed and was ignored: \(error)",
                    rule: report.rule.name, location: report.rule.location)
            } else if let changes = report.changes, changes.changesSomething {
                if decision.rules.count < OutputBounds.ruleNames {
                    decision.rules.append(OutputBounds.cut(report.rule.name))
                }
                let text =
                    changes.reason.map { "rule '\(report.rule.name)': \($0)" }
                    ?? "rule '\(report.rule.name)' set \(changes.summaryText)"
                reasonsGiven += 1
                if reasonsGiven <= OutputBounds.ruleReasons {
                    note("rules", text, rule: report.rule.name, location: report.rule.location)
                } else {
                    reasonsLeftOut += 1
                    traceOnly("rules", text, rule: report.rule.name, location: report.rule.location)
                }
            } else {
                traceOnly(
                    "rules", "rule '\(report.rule.name)' made no change",
                    rule: report.rule.name, location: report.rule.location)
            }
        }
        if reasonsLeftOut > 0 {
            decision.reasons.append(
                "… \(reasonsLeftOut) more rules changed something (a decision lists \(OutputBounds.ruleReasons))")
        }
        if errorsLeftOut > 0 {
            decision.errors.append(
                "… \(errorsLeftOut) more rule errors left out (a decision lists \(OutputBounds.errors))")
        }
    }
}
