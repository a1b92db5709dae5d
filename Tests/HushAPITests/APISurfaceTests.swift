import Foundation
import XCTest

/// The public surface stays what `docs/contributing.md` says it is: these types, each documented.
final class APISurfaceTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every Swift file under Sources/, with its module.
    func sources() throws -> [(module: String, path: String, lines: [Substring])] {
        let sources = Self.root.appendingPathComponent("Sources")
        let walker = try XCTUnwrap(FileManager.default.enumerator(atPath: sources.path))
        return try walker.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted().map { path in
            let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
            return (
                String(path.split(separator: "/")[0]), path,
                text.split(separator: "\n", omittingEmptySubsequences: false)
            )
        }
    }

    static func isPublicDeclaration(_ line: Substring) -> Bool {
        line.contains(#/^\s*(@\w+(\(.*\))?\s+)*public\s+(?!import)/#)
    }

    func testEveryPublicDeclarationIsDocumented() throws {
        var undocumented: [String] = []
        for file in try sources() {
            for (i, line) in file.lines.enumerated() where Self.isPublicDeclaration(line) {
                var j = i - 1
                while j >= 0, file.lines[j].trimmingCharacters(in: .whitespaces).hasPrefix("@") { j -= 1 }
                if j < 0 || !file.lines[j].trimmingCharacters(in: .whitespaces).hasPrefix("///") {
                    undocumented.append("\(file.path):\(i + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        XCTAssertEqual(undocumented, [], "public declarations without a /// comment")
    }

    func testOnlyTheFacadeIsPublic() throws {
        let topLevel = #/^public\s+(?:final\s+)?(?:struct|enum|class|protocol|typealias|actor)\s+(\w+)/#
        var types: [String: String] = [:]
        for file in try sources() {
            for line in file.lines {
                if let match = line.firstMatch(of: topLevel) { types[String(match.1)] = file.module }
            }
            if ["Lua", "HushPolicy", "HushJSON"].contains(file.module) {
                XCTAssertFalse(
                    file.lines.contains(where: Self.isPublicDeclaration), "\(file.path) declares something public")
            }
        }
        XCTAssertEqual(
            types,
            [
                "Engine": "Hush", "Session": "Hush", "HushEvent": "Hush", "SummaryDelivery": "Hush",
                "FocusChange": "Hush",
                "Envelope": "HushCore", "EvaluationContext": "HushCore", "Decision": "HushCore",
                "InterruptionLevel": "HushCore", "TraceStep": "HushCore", "HushError": "HushCore",
                "InMemoryStateStore": "HushState", "SQLiteStateStore": "HushState",
                "PostgresStateStore": "HushPostgres",
            ])
    }
}
