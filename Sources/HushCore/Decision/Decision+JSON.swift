package import HushJSON

extension Decision {
    /// The decision as one line of JSON, keys in the documented order (docs/reference.md, "Decision").
    ///
    /// Written for speed (`hush eval` writes one per line): each key goes out with the punctuation
    /// around it as one literal, and so does a null or a value of an enum; all of it straight into
    /// the writer's memory (`LineCursor`).
    package func write(to w: inout JSONWriter) {
        // Most lines are well under 4 KiB; a longer one is written again with room for it.
        var room = 4096
        while true {
            var out = LineCursor(w.freeSpace(atLeast: room))
            write(to: &out)
            if let count = out.count {
                w.didWrite(count)
                return
            }
            room *= 4
        }
    }

    private func write(to w: inout LineCursor) {
        // id, app and user are bounded when decoded (OutputBounds.identifierBytes).
        w.raw("{\"id\":")
        w.string(id)
        w.raw(",\"app\":")
        w.string(app)
        w.raw(",\"user\":")
        w.string(user)
        Self.write(delivery, to: &w)
        w.raw(",\"level\":")
        Self.write(level, to: &w)
        w.raw(",\"requested_level\":")
        Self.write(requestedLevel, to: &w)
        if let focus {
            w.raw(",\"focus\":")
            Self.writeBounded(focus, to: &w)
        } else {
            w.raw(",\"focus\":null")
        }
        if let breakthrough {
            Self.write(breakthrough, to: &w)
        } else {
            w.raw(",\"breakthrough\":null")
        }
        if let alert {
            w.raw(",\"alert\":{\"sound\":")
            w.bool(alert.sound)
            if let soundName = alert.soundName {
                w.raw(",\"sound_name\":")
                Self.writeBounded(soundName, to: &w)
            } else {
                w.raw(",\"sound_name\":null")
            }
            if let volume = alert.volume {
                w.raw(",\"volume\":")
                w.number(volume)
            } else {
                w.raw(",\"volume\":null")
            }
            w.raw(",\"vibrate\":")
            w.bool(alert.vibrate)
            w.raw(",\"wake_screen\":")
            w.bool(alert.wakeScreen)
            w.raw(",\"banner\":")
            w.bool(alert.banner)
            w.raw(",\"lock_screen\":")
            w.bool(alert.lockScreen)
            w.raw(",\"bypass_ringer\":")
            w.bool(alert.bypassRinger)
            w.raw("}")
        } else {
            w.raw(",\"alert\":null")
        }
        if let badge {
            w.raw(",\"badge\":")
            w.int(badge)
        } else {
            w.raw(",\"badge\":null")
        }
        if let announcement {
            w.raw(",\"announcement\":")
            Self.writeBounded(announcement, to: &w)
        } else {
            w.raw(",\"announcement\":null")
        }
        if let group {
            w.raw(",\"group\":{\"id\":")
            Self.writeBounded(group.id, to: &w)
            w.raw(",\"count\":")
            w.int(group.count)
            if let summary = group.summary {
                w.raw(",\"summary\":")
                Self.writeBounded(summary, to: &w)
                w.raw("}")
            } else {
                w.raw(",\"summary\":null}")
            }
        } else {
            w.raw(",\"group\":null")
        }
        if let placeholder {
            w.raw(",\"placeholder\":")
            Self.writeBounded(placeholder, to: &w)
        } else {
            w.raw(",\"placeholder\":null")
        }
        if let summaryAt {
            w.raw(",\"summary_at\":")
            w.timestamp(summaryAt, offset: summaryAtOffset)
        } else {
            w.raw(",\"summary_at\":null")
        }
        if let replaces {
            w.raw(",\"replaces\":")
            Self.writeBounded(replaces, to: &w)
        } else {
            w.raw(",\"replaces\":null")
        }
        // Reasons, rule names and errors are cut when made (Evaluation+Rules, OutputBounds).
        if reasons.isEmpty {
            w.raw(",\"reasons\":[]")
        } else {
            w.raw(",\"reasons\":")
            Self.writeStrings(reasons, to: &w)
        }
        if rules.isEmpty {
            w.raw(",\"rules\":[]")
        } else {
            w.raw(",\"rules\":")
            Self.writeStrings(rules, to: &w)
        }
        if errors.isEmpty {
            w.raw(",\"errors\":[]")
        } else {
            w.raw(",\"errors\":")
            Self.writeStrings(errors, to: &w)
        }
        if let trace {
            w.raw(",\"trace\":[")
            for (i, step) in trace.enumerated() {
                if i > 0 { w.raw(",") }
                w.raw("{\"step\":")
                w.string(step.step)
                if let rule = step.rule {
                    w.raw(",\"rule\":")
                    w.string(rule)
                }
                if let location = step.location {
                    w.raw(",\"location\":")
                    w.string(location)
                }
                w.raw(",\"note\":")
                w.string(step.note)
                w.raw("}")
            }
            w.raw("]}")
        } else {
            w.raw("}")
        }
    }

    /// The decision as one line of JSON, exactly as `hush eval` prints it (docs/reference.md, "Decision").
    public var jsonString: String {
        var w = JSONWriter(capacity: 512)
        write(to: &w)
        return w.string
    }

    /// Texts made from a payload or a declaration (a name, a summary line, an announcement) are
    /// cut like a rule's (`OutputBounds`): a line's size never depends on what an app sent.
    @inline(__always)
    private static func writeBounded(_ s: String, to w: inout LineCursor) {
        // Cut only when over the bound, which is rare (the count of a native string is stored).
        if _slowPath(s.utf8.count > OutputBounds.textBytes) {
            w.cutString(s)
        } else {
            w.string(s)
        }
    }

    /// A list that is not empty.
    private static func writeStrings(_ list: [String], to w: inout LineCursor) {
        w.raw("[")
        w.string(list[0])
        for i in 1..<list.count {
            w.raw(",")
            w.string(list[i])
        }
        w.raw("]")
    }

    // The values of the enums as literals (their raw values, which DecisionJSONTests holds them to).

    @inline(__always)
    private static func write(_ delivery: Delivery, to w: inout LineCursor) {
        switch delivery {
        case .alert: w.raw(",\"delivery\":\"alert\"")
        case .quiet: w.raw(",\"delivery\":\"quiet\"")
        case .summary: w.raw(",\"delivery\":\"summary\"")
        case .silenced: w.raw(",\"delivery\":\"silenced\"")
        case .dropped: w.raw(",\"delivery\":\"dropped\"")
        case .background: w.raw(",\"delivery\":\"background\"")
        case .withdrawn: w.raw(",\"delivery\":\"withdrawn\"")
        }
    }

    @inline(__always)
    private static func write(_ level: InterruptionLevel, to w: inout LineCursor) {
        switch level {
        case .passive: w.raw("\"passive\"")
        case .active: w.raw("\"active\"")
        case .timeSensitive: w.raw("\"time-sensitive\"")
        case .critical: w.raw("\"critical\"")
        }
    }

    @inline(__always)
    private static func write(_ breakthrough: Breakthrough, to w: inout LineCursor) {
        switch breakthrough {
        case .critical: w.raw(",\"breakthrough\":\"critical\"")
        case .timeSensitive: w.raw(",\"breakthrough\":\"time-sensitive\"")
        case .person: w.raw(",\"breakthrough\":\"person\"")
        case .app: w.raw(",\"breakthrough\":\"app\"")
        case .call: w.raw(",\"breakthrough\":\"call\"")
        case .repeatedCall: w.raw(",\"breakthrough\":\"repeated-call\"")
        case .communication: w.raw(",\"breakthrough\":\"communication\"")
        case .rule: w.raw(",\"breakthrough\":\"rule\"")
        }
    }
}

/// Writes a line straight into a `JSONWriter`'s free space: the writer's own methods are package
/// code of another module, which is never inlined, and a call per literal would cost more than the
/// copy. Once out of room it writes nothing more, and the line is written again with more.
private struct LineCursor {
    private let start: UnsafeMutableRawPointer
    private var next: UnsafeMutableRawPointer
    private let end: UnsafeMutableRawPointer
    private var overflowed = false

    init(_ space: UnsafeMutableRawBufferPointer) {
        start = space.baseAddress!
        next = start
        end = start + space.count
    }

    /// How many bytes were written, or nil when they did not fit.
    var count: Int? { overflowed ? nil : next - start }

    private var room: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(start: next, count: end - next) }

    /// Counts `written` more bytes, or the end of the room when nil.
    @inline(__always)
    private mutating func advance(_ written: Int?) {
        if let written {
            next += written
        } else {
            overflowed = true
            next = end
        }
    }

    /// The literal as it is: with its length a constant, a few moves.
    @inline(__always)
    mutating func raw(_ literal: StaticString) {
        // A one-character literal may come as a scalar.
        let n = literal.hasPointerRepresentation ? literal.utf8CodeUnitCount : 1
        guard n <= end - next else { return advance(nil) }
        if literal.hasPointerRepresentation {
            next.copyMemory(from: literal.utf8Start, byteCount: n)
        } else {
            precondition(literal.unicodeScalar.isASCII)
            next.storeBytes(of: UInt8(truncatingIfNeeded: literal.unicodeScalar.value), as: UInt8.self)
        }
        next += n
    }

    /// `s` quoted and escaped (`JSONWriter.writeString`).
    @inline(__always)
    mutating func string(_ s: String) {
        let room = self.room
        if let written = s.utf8.withContiguousStorageIfAvailable({ JSONWriter.writeQuoted($0, to: room) }) {
            advance(written)
        } else {
            var s = s
            advance(s.withUTF8 { JSONWriter.writeQuoted($0, to: room) })
        }
    }

    /// `RFC3339.format(seconds, offset:)` quoted (it needs no escaping), made in place.
    mutating func timestamp(_ seconds: Double, offset: Int) {
        guard end - next >= RFC3339.longestWritten + 2 else { return advance(nil) }
        guard
            let n = RFC3339.write(
                seconds, offset: offset, to: UnsafeMutableRawBufferPointer(start: next + 1, count: end - next - 1))
        else { return string(RFC3339.format(seconds, offset: offset)) }
        next.storeBytes(of: 0x22, as: UInt8.self)
        next.storeBytes(of: 0x22, toByteOffset: n + 1, as: UInt8.self)
        next += n + 2
    }

    /// `s` cut to `OutputBounds.textBytes`, quoted and escaped.
    @inline(never)
    mutating func cutString(_ s: String) { string(OutputBounds.cut(s)) }

    mutating func int(_ i: Int) {
        // Most are one digit (a badge, a group's count).
        if i >= 0 && i < 10 && next < end {
            next.storeBytes(of: 0x30 &+ UInt8(truncatingIfNeeded: i), as: UInt8.self)
            next += 1
        } else {
            advance(JSONWriter.writeInt(i, to: room))
        }
    }

    mutating func number(_ d: Double) { advance(JSONWriter.writeNumber(d, to: room)) }

    mutating func bool(_ b: Bool) {
        if b {
            raw("true")
        } else {
            raw("false")
        }
    }
}
