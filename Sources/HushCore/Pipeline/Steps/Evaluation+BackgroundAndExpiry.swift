/// A background push, one with nothing to show, or an expired one ends here (docs/reference.md,
/// "Background and expiry").
extension Evaluation {
    mutating func backgroundOrExpired() -> Bool {
        if envelope.pushType == "background" || (envelope.contentAvailable && !envelope.hasVisibleContent) {
            decision.delivery = .background
            setBadge()
            note(
                "background",
                envelope.pushType == "background"
                    ? "background push (apns-push-type: background): no user-visible notification"
                    : "content-available with no alert, sound or badge: a background push")
            return true
        }
        if !envelope.hasSomethingToShow {
            decision.delivery = .background
            setBadge()
            note(
                "background",
                decision.badge != nil
                    ? "nothing to show (no title, body, sound or sender): only the badge is updated"
                    : "nothing to show (no title, body, sound or sender): no user-visible notification")
            return true
        }
        if let expiration = envelope.expiration, expiration != 0, expiration < now {
            decision.delivery = .dropped
            note("expiry", "expired at \(clock.format(expiration)), before it could be delivered")
            return true
        }
        traceOnly("expiry", "not a background push; not expired")
        return false
    }
}
