/// Whether the app may notify at all (docs/reference.md, "Authorization").
extension Evaluation {
    /// A critical notification the app may send (its critical-alerts permission, or the user's own rule).
    var isEntitledCritical: Bool {
        subject.level == .critical && (settings.criticalAlerts || subject.levelSetByRule)
    }

    mutating func authorize() -> Bool {
        switch settings.authorization {
        case .authorized:
            traceOnly("authorization", "\(settings.name) is authorized")
            return true
        case .denied:
            if isEntitledCritical {
                note(
                    "authorization",
                    "\(settings.name) is not authorized to notify, but critical alerts are allowed separately")
                return true
            }
            decision.delivery = .dropped
            decision.level = subject.level
            note("authorization", "\(settings.name) is not authorized to notify (authorization denied)")
            return false
        case .provisional:
            if isEntitledCritical {
                note("authorization", "provisional authorization, but critical alerts are allowed separately")
            } else {
                quietOnly = true
                note("authorization", "provisional authorization: delivered quietly to the notification list")
            }
            return true
        }
    }
}
