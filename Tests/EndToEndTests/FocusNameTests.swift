import Foundation
import XCTest

/// A focus turned on by name must be one the policy declares: a typo would otherwise turn on a
/// focus with the defaults, which silences almost everything.
final class FocusNameTests: XCTestCase {
    var dir: URL!
    var state: String { dir.appendingPathComponent("state.sqlite").path }
    var policy: String { dir.appendingPathComponent("policy.lua").path }
    var bare: String { dir.appendingPathComponent("bare.lua").path }
    let message =
        "{\"app\":\"com.example.chat\",\"id\":\"m1\",\"date\":\"2026-11-28T10:00:00+01:00\",\"payload\":{\"aps\":{\"alert\":\"hi\"}}}"

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("hush-focus-name-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try """
        timezone "Europe/Berlin"
        focus "Sleep" { }
        focus "Work" { apps = { "com.example.mail" } }
        """.write(toFile: policy, atomically: true, encoding: .utf8)
        try "timezone \"Europe/Berlin\"\n".write(toFile: bare, atomically: true, encoding: .utf8)
    }

    func context(_ focus: String) throws -> String {
        let path = dir.appendingPathComponent("ctx-\(UUID().uuidString).json").path
        try "{\"focus\":\(focus),\"locked\":true}".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testUndeclaredFocusInAContextFileIsAUsageError() throws {
        let ctx = try context("\"Slep\"")
        for command in ["eval", "simulate"] {
            let run = try HushBinary.run(
                [command, "--policy", policy, "--context", ctx, "--ephemeral"], stdin: message)
            XCTAssertEqual(run.status, 2, "\(command): \(run.stdout) \(run.stderr)")
            XCTAssertEqual(run.stdout, "", command)
            XCTAssertTrue(
                run.stderr.contains(
                    "hush: \(ctx): focus: the policy declares no focus named \"Slep\" (did you mean \"Sleep\"?)"),
                "\(command): \(run.stderr)")
        }
    }

    func testFocusNamesMatchCaseSensitivelyWithAHint() throws {
        let ctx = try context("\"sleep\"")
        let run = try HushBinary.run(["eval", "--policy", policy, "--context", ctx, "--ephemeral"], stdin: message)
        XCTAssertEqual(run.status, 2, run.stdout)
        XCTAssertTrue(
            run.stderr.contains("focus: the policy declares no focus named \"sleep\" (did you mean \"Sleep\"?)"),
            run.stderr)
    }

    func testAFarOffNameListsTheDeclaredFocusesAndAPolicyWithoutFocusesSaysSo() throws {
        let ctx = try context("\"Gym\"")
        let run = try HushBinary.run(["eval", "--policy", policy, "--context", ctx, "--ephemeral"], stdin: message)
        XCTAssertEqual(run.status, 2, run.stdout)
        XCTAssertTrue(
            run.stderr.contains(
                "focus: the policy declares no focus named \"Gym\"; it declares \"Sleep\" and \"Work\""), run.stderr)
        let none = try HushBinary.run(["eval", "--policy", bare, "--context", ctx, "--ephemeral"], stdin: message)
        XCTAssertEqual(none.status, 2, none.stdout)
        XCTAssertTrue(
            none.stderr.contains("focus: the policy declares no focus named \"Gym\"; it declares none"), none.stderr)
    }

    func testDeclaredNamesFalseAndOffStayValid() throws {
        for (focus, expected) in [("\"Sleep\"", "Sleep"), ("false", nil), ("\"off\"", nil)] as [(String, String?)] {
            let run = try HushBinary.run(
                ["eval", "--policy", policy, "--context", try context(focus), "--ephemeral"], stdin: message)
            XCTAssertEqual(run.status, 0, "\(focus): \(run.stderr)")
            let decision = try XCTUnwrap(run.objects.first, focus)
            XCTAssertEqual(decision["focus"] as? String, expected, focus)
        }
    }

    func testFocusOnRefusesAnUndeclaredNameAndWritesNothing() throws {
        let on = try HushBinary.run([
            "focus", "on", "Slep", "--policy", policy, "--state", state, "--now", "2026-11-28T09:00:00+01:00",
        ])
        XCTAssertEqual(on.status, 2, on.stdout)
        XCTAssertEqual(on.stdout, "")
        XCTAssertTrue(
            on.stderr.contains("hush: the policy declares no focus named \"Slep\" (did you mean \"Sleep\"?)"), on.stderr
        )
        XCTAssertTrue(on.stderr.contains("--force"), on.stderr)
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: state), "a refused focus must not create or change the state")

        let none = try HushBinary.run(["focus", "on", "Sleep", "--policy", bare, "--state", state])
        XCTAssertEqual(none.status, 2, none.stdout)
        XCTAssertTrue(
            none.stderr.contains("the policy declares no focus named \"Sleep\"; it declares none"), none.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: state))

        // The declared name, and with --force any name, is turned on as before.
        let declared = try HushBinary.run([
            "focus", "on", "Sleep", "--policy", policy, "--state", state, "--now", "2026-11-28T09:00:00+01:00",
        ])
        XCTAssertEqual(declared.status, 0, declared.stderr)
        let status = try HushBinary.run([
            "status", "--json", "--policy", policy, "--state", state, "--now", "2026-11-28T10:00:00+01:00",
        ])
        XCTAssertEqual(status.objects.first?["focus"] as? String, "Sleep", status.stdout)
        let forced = try HushBinary.run([
            "focus", "on", "Slep", "--force", "--policy", policy, "--state", state, "--now",
            "2026-11-28T09:00:00+01:00",
        ])
        XCTAssertEqual(forced.status, 0, forced.stderr)
        let after = try HushBinary.run([
            "status", "--json", "--policy", policy, "--state", state, "--now", "2026-11-28T10:00:00+01:00",
        ])
        XCTAssertEqual(after.objects.first?["focus"] as? String, "Slep", after.stdout)
    }

    func testFocusOnHelpSaysWhatNamesItTakes() throws {
        let help = try HushBinary.run(["focus", "on", "--help"])
        XCTAssertTrue(help.stdout.contains("--force"), help.stdout)
        XCTAssertTrue(help.stdout.contains("declares"), help.stdout)
        XCTAssertFalse(help.stdout.contains("SPEC"), help.stdout)
    }
}
