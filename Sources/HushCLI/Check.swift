import ArgumentParser
import Foundation
import Hush
import HushCore
import HushPolicy

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate policies without evaluating anything.",
        discussion: """
            Each file is checked as a policy of its own (a directory: each of its .lua files); with \
            --together, all of them as one policy, as `hush eval --policy A --policy B` would load \
            them. Test files (*_test.lua) are checked as tests: what `hush test` would refuse (unknown \
            keys and decision fields, a bad context or notification, a focus the policy does not \
            declare, an error in a test). Every problem is printed as \
            file:line: message. Exit 0 when clean, 1 with problems, 2 when a file cannot be read.
            """)

    @Argument(help: "Policy files or directories.", completion: .file())
    var policies: [String]

    @Flag(help: "Check all the files as one policy.")
    var together = false

    func run() throws {
        var files: [String] = []
        for path in policies {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                Output.error("hush: \(path): no such file or directory")
                throw ExitCode(2)
            }
            if isDirectory.boolValue {
                let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
                    .filter { $0.hasSuffix(".lua") && !$0.hasPrefix(".") }.sorted()
                files += names.map { (path as NSString).appendingPathComponent($0) }
            } else {
                files.append(path)
            }
        }
        let tests = files.filter { $0.hasSuffix("_test.lua") }
        let policyFiles = files.filter { !$0.hasSuffix("_test.lua") }
        let groups: [[String]] = together ? (policyFiles.isEmpty ? [] : [policyFiles]) : policyFiles.map { [$0] }
        var problems = 0
        for group in groups {
            let sources: [PolicySource]
            do { sources = try PolicyFiles.sources(paths: group) } catch {
                Output.error("hush: \(error)")
                throw ExitCode(2)
            }
            do {
                let p = try Engine(sources: sources).policy
                let name = group.count == 1 ? group[0] : "\(group.count) files"
                Output.line(
                    "\(name): ok (\(count(p.focuses.count, "focus", "focuses")), \(count(p.rules.count, "rule", "rules")), \(count(p.apps.count, "app", "apps")))"
                )
            } catch {
                for problem in error.problems { Output.line(problem.description) }
                problems += error.problems.count
            }
        }
        for test in tests {
            let suite: PolicyTestSuite
            do { suite = try PolicyTestSuite(testFile: test) } catch {
                for problem in error.problems { Output.line(problem.description) }
                problems += error.problems.count
                continue
            }
            // The focus names need the policy; one that does not load is reported when it is checked.
            let policy = (try? PolicyFiles.sources(paths: suite.policyPaths)).flatMap {
                try? Engine(sources: $0).policy
            }
            var found: [PolicyProblem] = []
            for c in suite.cases {
                for message in policy.map({ suite.problems(of: c, policy: $0) }) ?? c.problems {
                    found.append(PolicyProblem(file: c.file, line: c.line, message: "test \"\(c.name)\": \(message)"))
                }
            }
            // Last, as in the file: the tests before it were all declared.
            if let stopped = suite.stopped { found.append(stopped) }
            if found.isEmpty {
                Output.line("\(test): ok (\(count(suite.cases.count, "test", "tests")))")
            }
            for problem in found { Output.line(problem.description) }
            problems += found.count
        }
        if problems > 0 {
            Output.line("\(count(problems, "problem", "problems"))")
            Output.flush()
            throw ExitCode(1)
        }
    }

    private func count(_ n: Int, _ one: String, _ many: String) -> String { "\(n) \(n == 1 ? one : many)" }
}
