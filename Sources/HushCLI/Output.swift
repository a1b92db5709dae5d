import Foundation

/// Buffered standard output and unbuffered standard error: printing lives in the CLI only.
enum Output {
    nonisolated(unsafe) static var buffer: [UInt8] = {
        var b = [UInt8]()
        b.reserveCapacity(1 << 16)
        return b
    }()

    static func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        buffer.append(10)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Bytes that are whole lines already.
    static func writeRaw(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { flush() }
    }

    static func line(_ text: String) {
        write(Array(text.utf8))
    }

    static func flush() {
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Foundation.write(1, raw.baseAddress! + offset, raw.count - offset)
                if n <= 0 { break }
                offset += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    static func error(_ text: String) {
        flush()
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
