extension RFC3339 {
    /// The longest text `write(_:offset:to:)` writes: `2026-11-22T09:30:00.250+01:00`.
    package static let longestWritten = 29

    /// Writes `format(seconds, offset:)` at the start of `out`, without making a String (a decision
    /// in a summary carries one: `hush eval` writes it straight into its line). Returns how many
    /// bytes, or nil when `out` holds fewer than `longestWritten` or the text is not the common
    /// case (a year outside 0...9999, an offset of 100 hours or more): then `format` makes it.
    /// RFC3339WritingTests holds the two to the same text.
    package static func write(_ seconds: Double, offset: Int, to out: UnsafeMutableRawBufferPointer) -> Int? {
        guard let o = out.baseAddress, out.count >= longestWritten, seconds.isFinite,
            seconds.magnitude < 1e15, offset.magnitude < 100 * 3600
        else { return nil }
        let whole = seconds.rounded(.down)
        let local = Int(whole) + offset
        let dayNumber = local >= 0 ? local / 86400 : (local - 86399) / 86400
        let secondOfDay = local - dayNumber * 86400
        let date = CivilDate(dayNumber: dayNumber)
        guard date.year >= 0 && date.year <= 9999 else { return nil }
        let millis = Int(((seconds - whole) * 1000).rounded())
        var i = 0
        func byte(_ c: UInt8) {
            o.storeBytes(of: c, toByteOffset: i, as: UInt8.self)
            i += 1
        }
        // Two digits of a value in 0...99 (unsigned: division by 10 is then a multiply and a shift).
        func two(_ value: Int) {
            let v = UInt8(truncatingIfNeeded: value)
            let tens = v / 10
            byte(48 &+ tens)
            byte(48 &+ v &- tens &* 10)
        }
        two(date.year / 100)
        two(date.year % 100)
        byte(0x2D)
        two(date.month)
        byte(0x2D)
        two(date.day)
        byte(0x54)
        two(secondOfDay / 3600)
        byte(0x3A)
        two(secondOfDay / 60 % 60)
        byte(0x3A)
        two(secondOfDay % 60)
        if millis > 0 && millis < 1000 {
            byte(0x2E)
            byte(48 &+ UInt8(truncatingIfNeeded: millis / 100))
            two(millis % 100)
        }
        if offset == 0 {
            byte(0x5A)
        } else {
            let magnitude = Int(offset.magnitude)
            byte(offset < 0 ? 0x2D : 0x2B)
            two(magnitude / 3600)
            byte(0x3A)
            two(magnitude / 60 % 60)
        }
        return i
    }
}
