import HushCore
import XCTest

/// `RFC3339.write` (a timestamp made in place) writes what `RFC3339.format` makes, or leaves it to it.
final class RFC3339WritingTests: XCTestCase {
    func written(_ seconds: Double, offset: Int, room: Int = RFC3339.longestWritten) -> String? {
        var out = [UInt8](repeating: 0, count: room)
        return out.withUnsafeMutableBytes { RFC3339.write(seconds, offset: offset, to: $0) }.map {
            String(decoding: out.prefix($0), as: UTF8.self)
        }
    }

    func testWritesWhatFormatMakes() {
        var rng = SystemRandomNumberGenerator()
        let offsets = [0, 3600, -3600, 5 * 3600 + 30 * 60, -(9 * 3600 + 45 * 60), 14 * 3600, 99 * 3600 + 59 * 60]
        var values: [Double] = [
            0, 1, -1, 0.5, 0.0004, 0.0005, 0.9995, 0.999, 86399.999, 1_764_000_000, -62_135_596_800,
        ]
        for _ in 0..<20_000 {
            // Years 0 to 9999, at whole seconds and with fractions.
            let s = Double.random(in: -62_167_219_200...253_402_300_799, using: &rng)
            values += [s, s.rounded(.down)]
        }
        for seconds in values {
            for offset in offsets {
                let formatted = RFC3339.format(seconds, offset: offset)
                if let text = written(seconds, offset: offset) {
                    XCTAssertEqual(text, formatted, "\(seconds) at \(offset)")
                } else {
                    // Only years outside 0...9999 are left to format.
                    XCTAssertTrue(
                        formatted.first == "-" || formatted.prefix(while: \.isNumber).count != 4,
                        "\(seconds) at \(offset): \(formatted)")
                }
            }
        }
    }

    func testLeavesTheRestToFormat() {
        XCTAssertNil(written(4e11, offset: 0), "year past 9999")
        XCTAssertNil(written(-7e10, offset: 0), "year before 0")
        XCTAssertNil(written(0, offset: 100 * 3600), "an offset of 100 hours")
        XCTAssertNil(written(.nan, offset: 0))
        XCTAssertNil(written(0, offset: 0, room: RFC3339.longestWritten - 1), "too little room")
        XCTAssertEqual(written(1_764_000_000.25, offset: 3600), "2025-11-24T17:00:00.250+01:00")
    }
}
