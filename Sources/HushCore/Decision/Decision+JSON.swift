package import HushJSON

extension Decision {
    /// The decision as one line of JSON, keys in the documented order (docs/reference.md, "Decision").
    package func write(to w: inout JSONWriter) {
        w.raw("{\"id\":"); w.writeString(id)
        w.raw(",\"app\":"); w.writeString(app)
        w.raw(",\"user\":"); w.writeString(user)
        w.raw(",\"delivery\":"); w.writeString(delivery.rawValue)
        w.raw(",\"level\":"); w.writeString(level.rawValue)
        w.raw(",\"requested_level\":"); w.writeString(requestedLevel.rawValue)
        w.raw(",\"focus\":"); writeOptional(focus, to: &w)
        w.raw(",\"breakthrough\":"); writeOptional(breakthrough?.rawValue, to: &w)
        w.raw(",\"alert\":")
        if let alert {
            w.raw("{\"sound\":"); w.writeBool(alert.sound)
            w.raw(",\"sound_name\":"); writeOptional(alert.soundName, to: &w)
            w.raw(",\"volume\":")
            if let volume = alert.volume { w.writeNumber(volume) } else { w.writeNull() }
            w.raw(",\"vibrate\":"); w.writeBool(alert.vibrate)
            w.raw(",\"wake_screen\":"); w.writeBool(alert.wakeScreen)
            w.raw(",\"banner\":"); w.writeBool(alert.banner)
            w.raw(",\"lock_screen\":"); w.writeBool(alert.lockScreen)
            w.raw(",\"bypass_ringer\":"); w.writeBool(alert.bypassRinger)
            w.raw("}")
        } else {
            w.writeNull()
        }
        w.raw(",\"badge\":")
        if let badge { w.writeInt(badge) } else { w.writeNull() }
        w.raw(",\"announcement\":"); writeOptional(announcement, to: &w)
        w.raw(",\"group\":")
        if let group {
            w.raw("{\"id\":"); w.writeString(OutputBounds.cut(group.id))
            w.raw(",\"count\":"); w.writeInt(group.count)
            w.raw(",\"summary\":"); writeOptional(group.summary, to: &w)
            w.raw("}")
        } else {
            w.writeNull()
        }
        w.raw(",\"placeholder\":"); writeOptional(placeholder, to: &w)
        w.raw(",\"summary_at\":"); writeOptional(summaryAt.map { RFC3339.format($0, offset: summaryAtOffset) }, to: &w)
        w.raw(",\"replaces\":"); writeOptional(replaces, to: &w)
        w.raw(",\"reasons\":"); writeStrings(reasons, to: &w)
        w.raw(",\"rules\":"); writeStrings(rules, to: &w)
        w.raw(",\"errors\":"); writeStrings(errors, to: &w)
        if let trace {
            w.raw(",\"trace\":[")
            for (i, step) in trace.enumerated() {
                if i > 0 { w.raw(",") }
                w.raw("{\"step\":"); w.writeString(step.step)
                if let rule = step.rule { w.raw(",\"rule\":"); w.writeString(rule) }
                if let location = step.location { w.raw(",\"location\":"); w.writeString(location) }
                w.raw(",\"note\":"); w.writeString(step.note)
                w.raw("}")
            }
            w.raw("]")
        }
        w.raw("}")
    }

    /// The decision as one line of JSON, exactly as `hush eval` prints it (docs/reference.md, "Decision").
    public var jsonString: String {
        var w = JSONWriter(capacity: 512)
        write(to: &w)
        return w.string
    }

    /// Texts made from a payload or a declaration (a name, a summary line, an announcement) are
    /// cut like a rule's (`OutputBounds`): a line's size never depends on what an app sent.
    private func writeOptional(_ s: String?, to w: inout JSONWriter) {
        if let s { w.writeString(OutputBounds.cut(s)) } else { w.writeNull() }
    }

    private func writeStrings(_ list: [String], to w: inout JSONWriter) {
        w.raw("[")
        for (i, s) in list.enumerated() {
            if i > 0 { w.raw(",") }
            w.writeString(s)
        }
        w.raw("]")
    }
}
