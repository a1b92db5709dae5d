import HushCore
package import HushJSON

/// INPUT as `hush eval` reads it: JSON Lines, or one JSON object spread over several lines.
package enum StreamInput {
    /// Calls `body` with each JSON value of the input and its line number (one document spread over
    /// several lines is line 1), or with why its line is not JSON. Lines are read a chunk at a time;
    /// only a first line cut short, which may begin one document over several lines, makes the whole
    /// input be read first. Line 1 is parsed once, whichever the input turns out to be.
    /// `beforeReading` is called as `LineStream.forEachLine` calls it. Public for the fuzz target,
    /// which reads its input as `hush eval` does.
    package static func forEachDocument(
        in lines: LineStream,
        _ body: (_ number: Int, _ document: Result<JSONValue, JSONError>) throws -> Void,
        beforeReading: () throws -> Void = {}
    ) throws {
        try forEachDocument(
            in: lines, { number, document, _ in try body(number, document) }, beforeReading: beforeReading)
    }

    /// As `forEachDocument(in:_:beforeReading:)`, also handing out the length in bytes of the text
    /// each document was parsed from.
    package static func forEachDocument(
        in lines: LineStream,
        _ body: (_ number: Int, _ document: Result<JSONValue, JSONError>, _ byteCount: Int) throws -> Void,
        beforeReading: () throws -> Void = {}
    ) throws {
        try forEachItem(
            in: lines,
            { number, item in
                switch item {
                case .line(let line): try body(number, parse(line), line.count)
                case .parsed(let document, let byteCount): try body(number, document, byteCount)
                }
            }, beforeReading: beforeReading)
    }

    /// What the input holds at one line number: the line's bytes (valid only during the call), or
    /// the value parsed from it already (line 1, parsed to find out what the input is, or one
    /// document over several lines) with the length of its text.
    package enum Item {
        case line(UnsafeRawBufferPointer)
        case parsed(Result<JSONValue, JSONError>, byteCount: Int)
    }

    /// As `forEachDocument(in:_:beforeReading:)`, leaving each line but the first unparsed: a
    /// reader that decodes a line straight from its bytes does not build its tree.
    package static func forEachItem(
        in lines: LineStream,
        _ body: (_ number: Int, _ item: Item) throws -> Void,
        beforeReading: () throws -> Void = {}
    ) throws {
        let documents = try DocumentStream(lines: lines)
        while !documents.isFinished {
            try documents.forEachItemInMemory(limit: .max, body)
            if documents.needsRead {
                try beforeReading()
                try documents.readMore()
            }
        }
    }

    /// Whether line 1 may begin one document spread over several lines: it is blank, or it is JSON
    /// cut short (wrong only at its end). A line wrong before its end is a bad JSON Lines line.
    static func mayBeginDocument(_ first: Result<JSONValue, JSONError>?, length: Int) -> Bool {
        guard let first else { return true }
        guard case .failure(let error) = first else { return false }
        return error.offset >= length
    }

    /// The whole input as one document: an object that goes on past its first line.
    static func singleDocument(_ whole: UnsafeRawBufferPointer) -> JSONValue? {
        guard let firstNewline = whole.firstIndex(of: 10) else { return nil }
        // A first line followed by blank lines only is JSON Lines of one line.
        guard whole[(firstNewline + 1)...].contains(where: { $0 != 10 && $0 != 13 && $0 != 32 && $0 != 9 }) else {
            return nil
        }
        guard let document = try? JSONParser.parse(whole), case .object = document else { return nil }
        return document
    }

    package static func parse(_ line: UnsafeRawBufferPointer) -> Result<JSONValue, JSONError> {
        Result { () throws(JSONError) in try JSONParser.parse(line) }
    }
}

/// INPUT as `StreamInput.forEachDocument` reads it, handed out a batch at a time: only what is in
/// memory already, so that the caller can hand on what it made of it before the input may make it
/// wait (`needsRead`, then `readMore()`).
package final class DocumentStream {
    private let lines: LineStream
    /// Line 1 as parsed to tell JSON Lines from one document: handed out as it is, not parsed again.
    private let firstLine: Result<JSONValue, JSONError>?
    /// The input as one document over several lines, and the length of its text, until handed out.
    private var wholeDocument: (value: JSONValue, byteCount: Int)?
    /// Whether the input was one document: its lines are not handed out.
    private let isOneDocument: Bool

    /// Reads line 1, and the whole input when line 1 may begin one document over several lines.
    package init(lines: LineStream) throws {
        self.lines = lines
        guard let line = try lines.peekFirstLine() else {
            (firstLine, isOneDocument) = (nil, false)
            return
        }
        // A blank line is not handed out by the splitter, so it has nothing to parse.
        let first = LineStream.isBlank(line) ? nil : line.withUnsafeBytes(StreamInput.parse)
        firstLine = first
        guard StreamInput.mayBeginDocument(first, length: line.count) else {
            isOneDocument = false
            return
        }
        wholeDocument = try lines.withRestReadToEnd { whole in
            StreamInput.singleDocument(whole).map { ($0, whole.count) }
        }
        isOneDocument = wholeDocument != nil
    }

    /// Whether every document was handed out.
    package var isFinished: Bool { isOneDocument ? wholeDocument == nil : lines.isFinished }

    /// Whether nothing is left in memory to hand out: `readMore()` first.
    package var needsRead: Bool { !isOneDocument && lines.needsRead }

    /// Reads more of the input; it may wait for it (a pipe, a terminal).
    package func readMore() throws(LineStream.ReadError) { try lines.readMore() }

    /// Whether `readMore()` may have to wait (`LineStream.readMayWait`).
    package var readMayWait: Bool { lines.readMayWait }

    /// Calls `body` with each document in memory (at most `limit`), its line number and the length
    /// of its text, or with why its line is not JSON; returns how many it handed out.
    @discardableResult
    package func forEachInMemory(
        limit: Int,
        _ body: (_ number: Int, _ document: Result<JSONValue, JSONError>, _ byteCount: Int) throws -> Void
    ) rethrows -> Int {
        try forEachItemInMemory(limit: limit) { number, item in
            switch item {
            case .line(let line): try body(number, StreamInput.parse(line), line.count)
            case .parsed(let document, let byteCount): try body(number, document, byteCount)
            }
        }
    }

    /// As `forEachInMemory(limit:_:)`, leaving each line but the first unparsed (`StreamInput.Item`),
    /// and stopping too at `byteLimit` bytes of input (`LineStream.forEachLineInMemory`).
    @discardableResult
    package func forEachItemInMemory(
        limit: Int, byteLimit: Int = .max, _ body: (_ number: Int, _ item: StreamInput.Item) throws -> Void
    ) rethrows -> Int {
        if isOneDocument {
            guard let whole = wholeDocument, limit > 0 else { return 0 }
            wholeDocument = nil
            try body(1, .parsed(.success(whole.value), byteCount: whole.byteCount))
            return 1
        }
        // The item is made outside the closure: Swift 6.3 miscompiles a `rethrows` closure that
        // binds a captured optional (`if number == 1, let firstLine`) and then throws — the throw
        // crashes (ThrowThroughStreamTests).
        let firstLine = self.firstLine
        return try lines.forEachLineInMemory(limit: limit, byteLimit: byteLimit) { line, number in
            try body(number, Self.item(line, number: number, firstLine: firstLine))
        }
    }

    /// Line `number` as handed out: line 1 as parsed already, any other as its bytes.
    private static func item(
        _ line: UnsafeRawBufferPointer, number: Int, firstLine: Result<JSONValue, JSONError>?
    ) -> StreamInput.Item {
        if number == 1, let firstLine { return .parsed(firstLine, byteCount: line.count) }
        return .line(line)
    }
}

extension Session {
    /// Calls `body` with each notification of `input` read as `hush eval` reads it (JSON Lines, or
    /// one object over several lines: see `StreamInput.forEachDocument`) and decoded as
    /// `envelope(fromLine:number:)` decodes a line, or with why its line was refused.
    package func forEachEnvelope(
        in input: LineStream,
        _ body: (_ number: Int, _ envelope: Result<Envelope, LineError>) throws -> Void,
        beforeReading: () throws -> Void = {}
    ) throws {
        try StreamInput.forEachItem(
            in: input, { number, item in try body(number, envelope(of: item, number: number)) },
            beforeReading: beforeReading)
    }

    /// As `forEachEnvelope(in:_:beforeReading:)`, a batch at a time: calls `body` with each
    /// notification of `input` in memory already (at most `limit`, and `byteLimit` bytes of input),
    /// and returns how many it handed out. The envelope is `body`'s to consume (`evaluate` takes it without a copy).
    @discardableResult
    package func forEachEnvelopeInMemory(
        of input: DocumentStream, limit: Int, byteLimit: Int = .max,
        _ body: (_ number: Int, _ envelope: consuming Result<Envelope, LineError>) throws -> Void
    ) rethrows -> Int {
        try input.forEachItemInMemory(limit: limit, byteLimit: byteLimit) { number, item in
            try body(number, envelope(of: item, number: number))
        }
    }

    /// The notification of input line `number`: read from its bytes (`envelope(fromLine:number:)`),
    /// or decoded from the value parsed already, or why it was refused.
    private func envelope(of item: StreamInput.Item, number: Int) -> Result<Envelope, LineError> {
        switch item {
        case .line(let line):
            Result { () throws(LineError) in try envelope(fromLine: line, number: number) }
        case .parsed(.success(let json), let byteCount):
            Result { () throws(LineError) in try envelope(from: json, number: number, sourceByteCount: byteCount) }
        case .parsed(.failure(let error), _):
            .failure(LineError(line: number, error))
        }
    }
}
