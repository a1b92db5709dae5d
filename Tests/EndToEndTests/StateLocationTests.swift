import Foundation
import XCTest

/// `--state` (and `$HUSH_STATE`) values Hush cannot use are refused with exit 2 before anything
/// is created; the default location makes its folder, for a new user's first run.
final class StateLocationTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("hush-location-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    static let notification =
        #"{"app":"com.example.chat","id":"n1","date":"2026-11-24T10:00:00Z","payload":{"aps":{"alert":"hi"}}}"#

    /// Every command that takes `--state`, with what it needs besides.
    static let commands: [[String]] = [
        ["eval"], ["status"], ["focus", "off"], ["donate"], ["suggest"], ["simulate"],
        ["serve", "--listen", "127.0.0.1:0"],
    ]

    /// What is in the working directory (the refusals must leave it empty).
    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
    }

    func testAURLOfAnUnsupportedKindIsRefusedByEveryCommandAndCreatesNothing() throws {
        for value in ["mysql://h/db", "http://x", "sqlite://x"] {
            for command in Self.commands {
                let run = try HushBinary.run(command + ["--state", value], stdin: "", in: dir)
                XCTAssertEqual(run.status, 2, "\(command) \(value): \(run.stderr)")
                XCTAssertTrue(run.stderr.contains("--state \(value)"), "\(command): \(run.stderr)")
                XCTAssertTrue(run.stderr.contains("postgres://"), "says which forms work: \(run.stderr)")
                XCTAssertEqual(run.stdout, "")
            }
        }
        XCTAssertEqual(try contents(), [], "no mysql: or http: folder, no file")
    }

    func testHushStateIsCheckedLikeAnExplicitState() throws {
        let url = try HushBinary.run(
            ["eval"], stdin: Self.notification, environment: ["HUSH_STATE": "mysql://h/db"], in: dir)
        XCTAssertEqual(url.status, 2, url.stderr)
        XCTAssertTrue(url.stderr.contains("$HUSH_STATE mysql://h/db"), url.stderr)

        let missing = dir.appendingPathComponent("nowhere/state.sqlite").path
        let refused = try HushBinary.run(
            ["eval"], stdin: Self.notification, environment: ["HUSH_STATE": missing], in: dir)
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("does not exist"), refused.stderr)
        XCTAssertEqual(try contents(), [])

        let created = try HushBinary.run(
            ["eval", "--create"], stdin: Self.notification, environment: ["HUSH_STATE": missing], in: dir)
        XCTAssertEqual(created.status, 0, created.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: missing))
    }

    func testADirectoryIsRefused() throws {
        let folder = dir.appendingPathComponent("states")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let run = try HushBinary.run(["eval", "--state", folder.path], stdin: Self.notification, in: dir)
        XCTAssertEqual(run.status, 2, run.stderr)
        XCTAssertTrue(run.stderr.contains("--state \(folder.path): is a directory"), run.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])
    }

    func testAMissingFolderIsRefusedUnlessCreateIsGiven() throws {
        let state = "nested/deeper/state.sqlite"
        for command in Self.commands {
            let run = try HushBinary.run(command + ["--state", state], stdin: "", in: dir)
            XCTAssertEqual(run.status, 2, "\(command): \(run.stderr)")
            XCTAssertTrue(
                run.stderr.contains(
                    "--state \(state): the folder nested/deeper does not exist; create it, or add --create"),
                "\(command): \(run.stderr)")
        }
        // A URL-like path with one slash is a path too: its folder does not exist either.
        let slash = try HushBinary.run(["eval", "--state", "postgres:/h/db"], stdin: Self.notification, in: dir)
        XCTAssertEqual(slash.status, 2, slash.stderr)
        XCTAssertEqual(try contents(), [], "no nested or postgres: folder")

        let run = try HushBinary.run(["eval", "--create", "--state", state], stdin: Self.notification, in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.objects.first?["id"] as? String, "n1")
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent(state).path))
        // Once it exists, --create is not needed.
        let again = try HushBinary.run(["status", "--state", state], in: dir)
        XCTAssertEqual(again.status, 0, again.stderr)
    }

    func testTheDefaultStateMakesItsFolder() throws {
        let home = dir.appendingPathComponent("xdg-state")
        let run = try HushBinary.run(
            ["eval"], stdin: Self.notification, environment: ["XDG_STATE_HOME": home.path, "HUSH_STATE": ""], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: home.appendingPathComponent("hush/state.sqlite").path))
    }
}
