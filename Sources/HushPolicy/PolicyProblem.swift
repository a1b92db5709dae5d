/// Something wrong with a policy, at a place a person can go to.
public struct PolicyProblem: Error, Sendable, Hashable, CustomStringConvertible, Comparable {
    public var file: String
    public var line: Int
    public var message: String

    public init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// `file:line: message`
    public var description: String { "\(file):\(line): \(message)" }

    public static func < (a: PolicyProblem, b: PolicyProblem) -> Bool {
        (a.file, a.line, a.message) < (b.file, b.line, b.message)
    }
}

/// A policy that could not be loaded: every problem found, in file and line order.
public struct PolicyLoadError: Error, Sendable, CustomStringConvertible {
    public var problems: [PolicyProblem]

    public init(problems: [PolicyProblem]) { self.problems = problems.sorted() }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
