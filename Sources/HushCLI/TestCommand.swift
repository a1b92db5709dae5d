import ArgumentParser
import Foundation
import Hush
import HushPolicy

struct TestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Run policy tests (*_test.lua beside the policy).",
        discussion: """
            Each test decides a notification against the policy of the same name (work_test.lua tests \
            work.lua) and compares the decision fields it expects. Failures print file:line, expected \
            and got, field by field in the decision's order; the last line is "N passed, N failed". \
            A malformed test (an unknown key or field, a bad context, an error in its function) fails \
            and the others still run. Exit 0 only when all pass.
            """)

    @Argument(help: "Test files or directories (default: policies).", completion: .file())
    var paths: [String] = []

    @Flag(name: .shortAndLong, help: "Print every test, not only failures.")
    var verbose = false

    func run() throws {
        let roots = paths.isEmpty ? ["policies"] : paths
        for root in roots where !FileManager.default.fileExists(atPath: root) {
            Output.error("hush: \(root): no such file or directory")
            throw ExitCode(2)
        }
        let files = PolicyTestSuite.testFiles(in: roots)
        var passed = 0
        var failed = 0
        var engines: [[String]: Engine] = [:]
        for file in files {
            let suite: PolicyTestSuite
            do { suite = try PolicyTestSuite(testFile: file) } catch {
                for problem in error.problems { Output.line("\(problem.description)") }
                failed += 1
                continue
            }
            if let stopped = suite.stopped {
                Output.line(stopped.description)
                failed += 1
            }
            let engine: Engine
            if let cached = engines[suite.policyPaths] {
                engine = cached
            } else {
                do {
                    engine = try Engine(sources: try PolicyFiles.sources(paths: suite.policyPaths))
                    engines[suite.policyPaths] = engine
                } catch let error as PolicyLoadError {
                    Output.line("\(file): its policy could not be loaded:")
                    for problem in error.problems { Output.line("    \(problem)") }
                    failed += max(1, suite.cases.count)
                    continue
                } catch {
                    Output.line("\(file): \(error)")
                    failed += max(1, suite.cases.count)
                    continue
                }
            }
            let result = suite.run(engine: engine)
            for failure in result.failures { Output.line(failure.description) }
            if verbose {
                let failedNames = Set(result.failures.map(\.test))
                for test in suite.cases where !failedNames.contains(test.name) {
                    Output.line("\(test.file):\(test.line): ok \"\(test.name)\"")
                }
            }
            passed += result.passed
            failed += result.failed
        }
        if files.isEmpty { Output.line("no *_test.lua files found in \(roots.joined(separator: " "))") }
        Output.line("\(passed) passed, \(failed) failed")
        Output.flush()
        if failed > 0 || files.isEmpty { throw ExitCode(1) }
    }
}
