/// The level the app is entitled to (docs/reference.md, "Effective level").
extension Evaluation {
    mutating func effectiveLevel() {
        var level = subject.level
        if subject.levelSetByRule {
            traceOnly("level", "level \(level.rawValue) set by a rule (no entitlement needed)")
        } else if level == .critical && !settings.criticalAlerts {
            level = .active
            note("level", "critical needs \(settings.name)'s critical-alerts permission: downgraded to active")
        } else if level == .timeSensitive && !settings.timeSensitive {
            level = .active
            note("level", "time-sensitive notifications are turned off for \(settings.name): downgraded to active")
        } else {
            traceOnly("level", "level \(level.rawValue)")
        }
        subject.level = level
        decision.level = level
    }
}
