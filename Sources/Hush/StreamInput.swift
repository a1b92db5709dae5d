/// INPUT may be one JSON object (even spread over many lines) or JSON Lines.
public enum StreamInput {
    /// The whole input as one document, when it is one object that does not fit on its first line.
    public static func singleDocument(_ bytes: [UInt8]) -> JSONValue? {
        guard let firstNewline = bytes.firstIndex(of: 10) else { return nil }
        // A first line that is complete on its own means JSON Lines.
        let rest = bytes[(firstNewline + 1)...]
        guard rest.contains(where: { $0 != 10 && $0 != 13 && $0 != 32 && $0 != 9 }) else { return nil }
        let first = bytes[..<firstNewline]
        if (try? first.withUnsafeBytes { buffer throws(JSONError) in try JSONParser.parse(buffer) }) != nil { return nil }
        guard let whole = try? bytes.withUnsafeBytes({ buffer throws(JSONError) in try JSONParser.parse(buffer) }),
              case .object = whole else { return nil }
        return whole
    }
}
