/// RFC 3339 timestamps: parsing to UNIX seconds and formatting at a UTC offset.
package enum RFC3339 {
    /// Parses `2026-11-22T09:30:00Z`, `2026-11-22T09:30:00.250+01:00` (also `t`/space and `z`).
    package static func parse(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    /// The number `count` decimal digits at `start` make, if they are all digits.
    @inline(__always)
    private static func digits(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> Int? {
        guard start + count <= b.count else { return nil }
        var value = 0
        for i in start..<start + count {
            let c = b[i]
            guard c >= 48 && c <= 57 else { return nil }
            value = value * 10 + Int(c - 48)
        }
        return value
    }

    static func parse(bytes b: UnsafeBufferPointer<UInt8>) -> Double? {
        @inline(__always) func digits(_ start: Int, _ count: Int) -> Int? { Self.digits(b, start, count) }
        guard b.count >= 20,
            let year = digits(0, 4), b[4] == UInt8(ascii: "-"),
            let month = digits(5, 2), b[7] == UInt8(ascii: "-"),
            let day = digits(8, 2),
            b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") || b[10] == UInt8(ascii: " "),
            let hour = digits(11, 2), b[13] == UInt8(ascii: ":"),
            let minute = digits(14, 2), b[16] == UInt8(ascii: ":"),
            let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= CivilDate.daysInMonth(year: year, month: month),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count && b[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        guard i < b.count else { return nil }
        var offset = 0
        if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
            guard let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == UInt8(ascii: ":"),
                let om = digits(i + 4, 2), oh <= 23, om <= 59
            else { return nil }
            offset = sign * (oh * 3600 + om * 60)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = CivilDate(year: year, month: month, day: day).dayNumber
        let seconds = days * 86400 + hour * 3600 + minute * 60 + min(second, 59) - offset
        return Double(seconds) + fraction
    }

    /// `2026-11-22T09:30:00+01:00` (`Z` at offset 0); fractions of a second only when present.
    package static func format(_ seconds: Double, offset: Int) -> String {
        let whole = seconds.rounded(.down)
        let local = Int(whole) + offset
        let dayNumber = local >= 0 ? local / 86400 : (local - 86399) / 86400
        let secondOfDay = local - dayNumber * 86400
        let date = CivilDate(dayNumber: dayNumber)
        let millis = Int(((seconds - whole) * 1000).rounded())
        // The common case, in one buffer: years 0...9999.
        if date.year >= 0 && date.year <= 9999 && abs(offset) < 100 * 3600 {
            let magnitude = abs(offset)
            let withMillis = millis > 0 && millis < 1000
            let size = 19 + (withMillis ? 4 : 0) + (offset == 0 ? 1 : 6)
            return String(unsafeUninitializedCapacity: size) { out in
                var i = 0
                func digits(_ value: Int, _ width: Int) {
                    var v = value
                    var k = width - 1
                    while k >= 0 { out[i + k] = UInt8(48 + v % 10); v /= 10; k -= 1 }
                    i += width
                }
                func byte(_ c: UInt8) { out[i] = c; i += 1 }
                digits(date.year, 4); byte(0x2D); digits(date.month, 2); byte(0x2D); digits(date.day, 2); byte(0x54)
                digits(secondOfDay / 3600, 2); byte(0x3A); digits(secondOfDay / 60 % 60, 2); byte(0x3A);
                digits(secondOfDay % 60, 2)
                if withMillis { byte(0x2E); digits(millis, 3) }
                if offset == 0 {
                    byte(0x5A)
                } else {
                    byte(offset < 0 ? 0x2D : 0x2B)
                    digits(magnitude / 3600, 2); byte(0x3A); digits(magnitude / 60 % 60, 2)
                }
                return i
            }
        }
        var out = pad(date.year, 4) + "-" + pad(date.month, 2) + "-" + pad(date.day, 2) + "T"
        out += pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if millis > 0 && millis < 1000 { out += "." + pad(millis, 3) }
        if offset == 0 { return out + "Z" }
        let sign = offset < 0 ? "-" : "+"
        let magnitude = abs(offset)
        return out + sign + pad(magnitude / 3600, 2) + ":" + pad(magnitude / 60 % 60, 2)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
