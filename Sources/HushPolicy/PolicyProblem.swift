/// Something wrong with a policy, at a place a person can go to.
package struct PolicyProblem: Error, Sendable, Hashable, CustomStringConvertible, Comparable {
    package var file: String
    package var line: Int
    package var message: String

    package init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// `file:line: message`
    package var description: String { "\(file):\(line): \(message)" }

    package static func < (a: PolicyProblem, b: PolicyProblem) -> Bool {
        (a.file, a.line, a.message) < (b.file, b.line, b.message)
    }
}

/// A policy that could not be loaded: every problem found, in file and line order.
package struct PolicyLoadError: Error, Sendable, CustomStringConvertible {
    package var problems: [PolicyProblem]

    package init(problems: [PolicyProblem]) { self.problems = problems.sorted() }

    package var description: String { problems.map(\.description).joined(separator: "\n") }
}
