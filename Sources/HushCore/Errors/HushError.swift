/// The one error the public API throws: a ``Code`` to branch on, and a message a person can act on
/// (the same words `hush` prints). Inside the library each layer throws its own small error type;
/// they are turned into a `HushError` where they leave it.
public struct HushError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure: stable, for code that reacts to it.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code as a string, e.g. `invalid_policy`.
        public let rawValue: String
        /// A code from its string.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code as a string.
        public var description: String { rawValue }

        /// The policy did not load: ``HushError/problems`` lists every problem as `file:line: message`.
        public static let invalidPolicy = Code(rawValue: "invalid_policy")
        /// A policy file or directory could not be read.
        public static let unreadablePolicy = Code(rawValue: "unreadable_policy")
        /// A notification, context or interaction was refused: ``HushError/field`` names the field.
        public static let invalidInput = Code(rawValue: "invalid_input")
        /// The state store could not be opened (missing folder, not a Hush file, newer schema, bad
        /// retention); nothing was changed.
        public static let stateUnusable = Code(rawValue: "state_unusable")
        /// The state store failed while reading or writing (disk full, I/O error, lock timeout):
        /// what was being done is not recorded.
        public static let stateFailed = Code(rawValue: "state_failed")
    }

    /// What kind of failure.
    public var code: Code
    /// The whole message, as `hush` prints it.
    public var message: String
    /// For ``Code/invalidInput``: the dotted path of the offending field, nil for the whole line.
    public var field: String?
    /// For ``Code/invalidInput``: the input line (1-based), when known.
    public var line: Int?
    /// For ``Code/invalidPolicy``: every problem, each `file:line: message`, in file and line order.
    public var problems: [String]

    /// The layer's own error this one was made from, for the library's tests and logs.
    package var cause: (any Error & Sendable)?

    /// An error with a code and a message.
    public init(code: Code, message: String, field: String? = nil, line: Int? = nil, problems: [String] = []) {
        self.code = code
        self.message = message
        self.field = field
        self.line = line
        self.problems = problems
    }

    /// The message.
    public var description: String { message }

    /// Equal when code, message, field, line and problems are (the cause is not compared).
    public static func == (a: HushError, b: HushError) -> Bool {
        (a.code, a.message, a.field, a.line, a.problems) == (b.code, b.message, b.field, b.line, b.problems)
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(field)
        hasher.combine(line)
        hasher.combine(problems)
    }
}

extension HushError {
    /// An input error, with the line it came from when known.
    package init(_ error: InputError, line: Int? = nil) {
        self.init(code: .invalidInput, message: error.description, field: error.field, line: line)
        cause = error
    }
}
