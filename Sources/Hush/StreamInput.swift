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
        guard let firstLine = try lines.peekFirstLine() else { return }
        // A blank line is not handed out by the splitter, so it has nothing to parse.
        let first = LineStream.isBlank(firstLine) ? nil : firstLine.withUnsafeBytes(parse)
        func eachLine(_ line: UnsafeRawBufferPointer, _ number: Int) throws {
            if number == 1, let first {
                try body(number, .parsed(first, byteCount: line.count))
            } else {
                try body(number, .line(line))
            }
        }
        guard mayBeginDocument(first, length: firstLine.count) else {
            try lines.forEachLine(eachLine, beforeReading: beforeReading)
            return
        }
        var wholeByteCount = 0
        if let document = try lines.withRestReadToEnd({ whole in
            wholeByteCount = whole.count
            return singleDocument(whole)
        }) {
            try body(1, .parsed(.success(document), byteCount: wholeByteCount))
        } else {
            try lines.forEachLine(eachLine)
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
            in: input,
            { number, item in
                switch item {
                case .line(let line):
                    try body(number, Result { () throws(LineError) in try envelope(fromLine: line, number: number) })
                case .parsed(.success(let json), let byteCount):
                    try body(
                        number,
                        Result { () throws(LineError) in
                            try envelope(from: json, number: number, sourceByteCount: byteCount)
                        })
                case .parsed(.failure(let error), _): try body(number, .failure(LineError(line: number, error)))
                }
            }, beforeReading: beforeReading)
    }
}
