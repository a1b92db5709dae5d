import HushJSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Splits input into lines (LF or CRLF): the one line splitter of Hush. From a file descriptor it
/// reads a chunk at a time, so a large JSON Lines input is never held whole: memory stays at one
/// chunk plus the longest line. Bytes already in memory go through the same splitter. Line numbers
/// are 1-based; blank lines are counted but not handed out.
package final class LineStream {
    /// A read from the descriptor failed (not end of input).
    package struct ReadError: Error, CustomStringConvertible {
        package let code: Int32
        package var description: String { "cannot read input: \(String(cString: strerror(code)))" }
    }

    private let descriptor: Int32
    private let chunkSize: Int
    private var buffer: [UInt8]
    /// The unread bytes are buffer[start..<end].
    private var start = 0
    private var end = 0
    /// buffer[start..<scanned] holds no newline (searched already).
    private var scanned = 0
    private var atEnd = false
    private var lineNumber = 0
    /// Bytes of input handed out so far: lines, their endings and blank lines.
    package private(set) var bytesHandedOut = 0

    /// `descriptor` stays owned by the caller (it is not closed).
    package init(descriptor: Int32, chunkSize: Int = 1 << 20) {
        self.descriptor = descriptor
        self.chunkSize = max(chunkSize, 16)
        self.buffer = [UInt8](repeating: 0, count: self.chunkSize)
    }

    /// Whether `descriptor` is open on something that is not a directory (which `read` would refuse).
    package static func isReadableFile(_ descriptor: Int32) -> Bool {
        var status = stat()
        return fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) != S_IFDIR
    }

    /// The lines of `bytes`, already in memory: nothing is read, so nothing can fail to be.
    package init(bytes: [UInt8]) {
        self.descriptor = -1
        self.chunkSize = 16
        self.buffer = bytes
        self.end = bytes.count
        self.atEnd = true
    }

    /// The first line, read but not consumed (`forEachLine` still hands it out); nil for empty input.
    func peekFirstLine() throws(ReadError) -> [UInt8]? {
        while true {
            if let newline = findNewline(from: start) { return Array(buffer[start..<trimmed(newline)]) }
            if atEnd { return start < end ? Array(buffer[start..<trimmed(end)]) : nil }
            try fill()
        }
    }

    /// Reads to the end of input without handing anything out, then calls `body` with every byte
    /// not yet handed out; `forEachLine` hands them out after.
    func withRestReadToEnd<T>(_ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        while !atEnd { try fill() }
        let (first, last) = (start, end)
        return try buffer.withUnsafeBytes { raw in try body(UnsafeRawBufferPointer(rebasing: raw[first..<last])) }
    }

    /// Calls `body` with each non-blank line (without its line ending; valid only during the call)
    /// and its number; `beforeReading` before each read of the input, which may wait for it (a
    /// pipe, a terminal): the moment to hand on what the lines so far produced.
    package func forEachLine(
        _ body: (_ line: UnsafeRawBufferPointer, _ number: Int) throws -> Void,
        beforeReading: () throws -> Void = {}
    ) throws {
        while true {
            try forEachLineInMemory(limit: .max, body)
            if atEnd { return }
            try beforeReading()
            try readMore()
        }
    }

    /// Whether every line was handed out.
    package var isFinished: Bool { atEnd && start == end }

    /// Whether no line is left in memory to hand out without reading first: the last one read is
    /// not whole yet.
    package var needsRead: Bool {
        guard !atEnd else { return false }
        if findNewline(from: scanned) != nil { return false }
        scanned = end
        return true
    }

    /// As `forEachLine`, but only the lines in memory already, and at most `limit` non-blank ones:
    /// nothing is read. It stops too once the lines handed out reach `byteLimit` bytes of input
    /// (`bytesHandedOut`); a line is never cut. Returns how many it handed out. Once no line is left
    /// in memory, `readMore()` reads more (`needsRead`).
    @discardableResult
    package func forEachLineInMemory(
        limit: Int, byteLimit: Int = .max, _ body: (_ line: UnsafeRawBufferPointer, _ number: Int) throws -> Void
    ) rethrows -> Int {
        var handedOut = 0
        let stopAt = byteLimit > Int.max - bytesHandedOut ? Int.max : bytesHandedOut + byteLimit
        while handedOut < limit && bytesHandedOut < stopAt {
            if let newline = findNewline(from: scanned) {
                if try deliver(upTo: newline, body) { handedOut += 1 }
                bytesHandedOut += newline + 1 - start
                start = newline + 1
                scanned = start
            } else {
                scanned = end
                if atEnd && start < end {
                    if try deliver(upTo: end, body) { handedOut += 1 }
                    bytesHandedOut += end - start
                    start = end
                }
                break
            }
        }
        return handedOut
    }

    /// Whether `readMore()` may have to wait for input: not on a regular file, nor on a pipe or
    /// terminal with input (or its end) ready now.
    package var readMayWait: Bool {
        guard descriptor >= 0, !atEnd else { return false }
        var status = stat()
        if fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG { return false }
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&ready, 1, 0) != 1
    }

    /// Reads more input after the lines in memory; it may wait for it (a pipe, a terminal).
    package func readMore() throws(ReadError) {
        try fill()
    }

    /// Hands out the line from `start` to `stop` (its line ending excluded) unless it is blank;
    /// returns whether it did.
    private func deliver(upTo stop: Int, _ body: (UnsafeRawBufferPointer, Int) throws -> Void) rethrows -> Bool {
        lineNumber += 1
        let number = lineNumber
        let last = trimmed(stop)
        let first = start
        return try buffer.withUnsafeBytes { raw in
            let line = UnsafeRawBufferPointer(rebasing: raw[first..<last])
            guard !Self.isBlank(line) else { return false }
            try body(line, number)
            return true
        }
    }

    /// Blank: spaces and tabs only. Blank lines are counted but not handed out.
    static func isBlank(_ line: some Sequence<UInt8>) -> Bool {
        !line.contains(where: { $0 != 32 && $0 != 9 })
    }

    /// `stop` moved back over a carriage return ending the line.
    private func trimmed(_ stop: Int) -> Int {
        stop > start && buffer[stop - 1] == 13 ? stop - 1 : stop
    }

    private func findNewline(from index: Int) -> Int? {
        guard index < end else { return nil }
        return buffer.withUnsafeBytes { raw -> Int? in
            guard let found = memchr(raw.baseAddress! + index, 10, end - index) else { return nil }
            return raw.baseAddress!.distance(to: UnsafeRawPointer(found))
        }
    }

    /// Reads one more chunk after the unread bytes, moving them to the front first and growing the
    /// buffer only when one line is longer than it.
    private func fill() throws(ReadError) {
        if start > 0 {
            let count = end - start
            if count > 0 {
                buffer.withUnsafeMutableBytes { raw in
                    _ = memmove(raw.baseAddress!, raw.baseAddress! + start, count)
                }
            }
            scanned -= start
            start = 0
            end = count
        }
        if buffer.count - end < chunkSize / 2 {
            buffer.append(contentsOf: repeatElement(0, count: max(buffer.count, chunkSize)))
        }
        while true {
            let room = buffer.count - end
            let n = buffer.withUnsafeMutableBytes { raw in read(descriptor, raw.baseAddress! + end, room) }
            if n > 0 { end += n; return }
            if n == 0 { atEnd = true; return }
            if errno == EINTR { continue }
            throw ReadError(code: errno)
        }
    }
}
