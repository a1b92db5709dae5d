/// INPUT may be one JSON object (even spread over many lines) or JSON Lines.
public enum StreamInput {
    /// The whole input as one document, when it is one object that does not fit on its first line.
    public static func singleDocument(_ bytes: [UInt8]) -> JSONValue? {
        guard let firstNewline = bytes.firstIndex(of: 10) else { return nil }
        // A first line that is complete on its own means JSON Lines.
        let rest = bytes[(firstNewline + 1)...]
        guard rest.contains(where: { $0 != 10 && $0 != 13 && $0 != 32 && $0 != 9 }) else { return nil }
        guard mayBeginDocument(Array(bytes[..<firstNewline])) else { return nil }
        guard let whole = try? bytes.withUnsafeBytes({ buffer throws(JSONError) in try JSONParser.parse(buffer) }),
              case .object = whole else { return nil }
        return whole
    }

    /// Whether a first line may be the beginning of one document spread over several lines: it is
    /// blank, or it is JSON cut short (a line that is wrong before its end is a bad JSON Lines line).
    /// A streaming reader reads the whole input only then.
    public static func mayBeginDocument(_ firstLine: [UInt8]) -> Bool {
        var line = firstLine[...]
        while let last = line.last, last == 32 || last == 9 || last == 13 { line = line.dropLast() }
        guard line.contains(where: { $0 != 32 && $0 != 9 }) else { return true }
        do {
            _ = try line.withUnsafeBytes { buffer throws(JSONError) in try JSONParser.parse(buffer) }
            return false
        } catch {
            return ((error as? JSONError)?.offset ?? 0) >= line.count
        }
    }
}
