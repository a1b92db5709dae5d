/// Splits a byte stream into lines (LF or CRLF), keeping 1-based line numbers; blank lines are
/// skipped but counted.
public enum JSONLines {
    public static func forEachLine(in bytes: [UInt8], _ body: (_ line: ArraySlice<UInt8>, _ number: Int) throws -> Void) rethrows {
        var start = 0
        var number = 0
        let count = bytes.count
        while start < count {
            number += 1
            var end = start
            while end < count && bytes[end] != 10 { end += 1 }
            var stop = end
            if stop > start && bytes[stop - 1] == 13 { stop -= 1 }
            let line = bytes[start..<stop]
            if line.contains(where: { $0 != 32 && $0 != 9 }) { try body(line, number) }
            start = end + 1
        }
    }
}
