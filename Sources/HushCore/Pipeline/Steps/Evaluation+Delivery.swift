/// How it is delivered: alert or quiet, sound, banner, badge (docs/reference.md, "Delivery style,
/// sound and badge").
extension Evaluation {
    /// Badges (seen on the app icon): for an alert, a silenced notification, a passive quiet one and
    /// a background push, when the payload has one and the app shows badges. An app delivered
    /// quietly (or provisionally) lands in Notification Center only: no badge.
    var appShowsBadges: Bool {
        settings.badges && settings.authorization == .authorized && settings.delivery != .quiet
    }

    mutating func setBadge() {
        guard let badge = envelope.badge, appShowsBadges else { return }
        switch decision.delivery {
        case .alert, .silenced, .background: decision.badge = badge
        case .quiet: if subject.level == .passive { decision.badge = badge }
        case .summary, .dropped, .withdrawn: break
        }
    }

    mutating func deliveryStyle() {
        defer { setBadge() }
        if decision.delivery == .silenced { return }
        let level = subject.level
        if let forced = subject.delivery, forced == .quiet || forced == .silenced {
            decision.delivery = forced
            note("delivery", "a rule forced delivery \(forced.rawValue)")
            return
        }
        let forcedAlert = subject.delivery == .alert
        if !forcedAlert {
            if level == .passive {
                decision.delivery = .quiet
                note("delivery", "passive: delivered quietly (no sound, banner or screen wake)")
                return
            }
            if quietOnly {
                decision.delivery = .quiet
                return
            }
            if settings.delivery == .quiet && level != .critical {
                decision.delivery = .quiet
                note("delivery", "\(settings.name) delivers quietly")
                return
            }
        }
        decision.delivery = .alert
        let critical = level == .critical
        // A sound only when the payload asks for one (APNs plays none otherwise); critical always.
        let asked = envelope.sound != nil
        let sound = critical || (asked && settings.sounds && context.ringer == .ring)
        // The style follows the level even when a rule forces the alert: passive stays silent.
        let audible = level >= .active
        decision.alert = Decision.Alert(
            sound: sound && audible,
            soundName: sound && audible ? (envelope.sound?.name ?? "default") : nil,
            volume: critical ? (envelope.sound?.volume ?? 1.0) : nil,
            vibrate: audible,
            wakeScreen: audible,
            banner: !context.locked && settings.banners,
            lockScreen: context.locked && settings.lockScreen,
            bypassRinger: critical)
        let words: String
        if critical {
            words = "alert: critical: sounds through the ringer switch at volume \(decision.alert!.volume!)"
        } else if !audible {
            words = "alert: passive, so no sound, vibration or screen wake"
        } else if !asked {
            words = Self.alertWords(level, sound: false)
        } else if !sound {
            words =
                context.ringer == .silent
                ? "alert: no sound (ringer is silent)" : "alert: no sound (" + settings.name + " has sounds off)"
        } else {
            words = Self.alertWords(level, sound: true)
        }
        note("delivery", words)
        if forcedAlert { decision.reasons.append("a rule forced delivery alert") }
    }

    /// "alert: LEVEL, with sound", or with none asked for: one of a few texts, not made anew for
    /// every notification.
    static func alertWords(_ level: InterruptionLevel, sound: Bool) -> String {
        switch (level, sound) {
        case (.passive, true): "alert: passive, with sound"
        case (.passive, false): "alert: passive, no sound (the notification asks for none)"
        case (.active, true): "alert: active, with sound"
        case (.active, false): "alert: active, no sound (the notification asks for none)"
        case (.timeSensitive, true): "alert: time-sensitive, with sound"
        case (.timeSensitive, false): "alert: time-sensitive, no sound (the notification asks for none)"
        case (.critical, true): "alert: critical, with sound"
        case (.critical, false): "alert: critical, no sound (the notification asks for none)"
        }
    }
}
