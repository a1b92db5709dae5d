import Foundation
import HushJSON

/// Buffered standard output and unbuffered standard error: printing lives in the CLI only.
enum Output {
    nonisolated(unsafe) static var buffer: [UInt8] = {
        var b = [UInt8]()
        b.reserveCapacity(1 << 16)
        return b
    }()

    /// Set once standard output could not be written (its reader went away: `hush eval | head -1`);
    /// what is printed afterwards is dropped, and the commands stop at their next safe point
    /// (`stopIfClosed`).
    nonisolated(unsafe) static var closed = false
    /// Why it could not be written: EPIPE for a reader that left, else a real failure (a full disk).
    nonisolated(unsafe) static var failure: Int32 = 0

    /// Thrown at a safe point (nothing decided but not committed) once standard output is closed.
    struct Closed: Error {}

    static func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        buffer.append(10)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Bytes that are whole lines already.
    static func writeRaw(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { writeRaw($0) }
    }

    /// Whole lines already, written by a `JSONWriter`.
    static func write(_ lines: borrowing JSONWriter) {
        lines.withUnsafeBytes { writeRaw($0) }
    }

    /// Bytes that are whole lines already. A large write (a batch of `hush eval`) goes out from where
    /// it is, after what is buffered, rather than being copied into the buffer first.
    static func writeRaw(_ bytes: UnsafeRawBufferPointer) {
        if buffer.count + bytes.count < 1 << 16 {
            buffer.append(contentsOf: bytes)
            return
        }
        flush()
        writeOut(bytes)
    }

    static func line(_ text: String) {
        write(Array(text.utf8))
    }

    static func flush() {
        defer { buffer.removeAll(keepingCapacity: true) }
        buffer.withUnsafeBytes { writeOut($0) }
    }

    /// Writes `bytes` to standard output unless it is closed (then they are dropped).
    private static func writeOut(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, !closed else { return }
        var offset = 0
        while offset < bytes.count {
            let n = Foundation.write(1, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                // SIGPIPE is ignored (HushCommand.main): a reader that left is seen here, as EPIPE.
                failure = n < 0 ? errno : EIO
                closed = true
                return
            }
            offset += n
        }
    }

    /// Throws `Closed` once standard output is closed: called where stopping leaves nothing half
    /// done (after a batch is committed and printed), so no more input is read or decided.
    static func stopIfClosed() throws {
        if closed { throw Closed() }
    }

    static func error(_ text: String) {
        flush()
        standardError(text + "\n")
    }

    /// Written with write(2): a closed standard error must not crash the process (FileHandle
    /// traps on EPIPE).
    static func standardError(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Foundation.write(2, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            bytes = bytes.dropFirst(n)
        }
    }
}
