import Foundation
import XCTest

/// `hush simulate --html`: the page holds a mark for every notification and a band for every
/// focus change that `simulate --json` reports, as text and as a real browser reads it.
final class SimulationPageTests: XCTestCase {
    let week = ["--ephemeral", "--policy", "policies/week.lua", "--context", "examples/context.json"]

    func page(_ arguments: [String], stream: String = "examples/week.jsonl") throws -> (html: String, file: URL) {
        let file = try HushBinary.file("", name: "week", ext: "html")
        let run = try HushBinary.run(["simulate"] + arguments + ["--html", file.path, stream])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("hush: wrote \(file.path): 1 user"), run.stderr)
        return (try String(contentsOf: file, encoding: .utf8), file)
    }

    func events(_ arguments: [String]) throws -> [[String: Any]] {
        let run = try HushBinary.run(["simulate", "--json"] + arguments + ["examples/week.jsonl"])
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.objects
    }

    /// Every match of `pattern`'s first group (or of the whole pattern without one), in order.
    func matches(_ pattern: String, in text: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: pattern)
        let group = min(1, regex.numberOfCaptureGroups)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
            String(text[Range($0.range(at: group), in: text)!])
        }
    }

    func checkMarksAndBands(
        in html: String, against events: [[String: Any]], file: StaticString = #filePath, line: UInt = #line
    ) {
        let ids = events.filter { $0["event"] as? String == "notification" }
            .map { ($0["decision"] as! [String: Any])["id"] as! String }
        XCTAssertGreaterThan(ids.count, 300, file: file, line: line)
        XCTAssertEqual(
            matches(#"<g class="mark [^"]*" tabindex="0" data-id="([^"]*)""#, in: html), ids, file: file, line: line)
        let deliveries = events.filter { $0["event"] as? String == "notification" }
            .map { ($0["decision"] as! [String: Any])["delivery"] as! String }
        XCTAssertEqual(matches(#"data-delivery="([a-z]+)""#, in: html), deliveries, file: file, line: line)
        let focusOn = events.filter { $0["event"] as? String == "focus" && !($0["focus"] is NSNull) }
        XCTAssertEqual(
            matches(#"<g class="band [^"]*" data-focus="[^"]*" data-start="([^"]*)""#, in: html),
            focusOn.map { $0["at"] as! String }, file: file, line: line)
        let focusOff = events.filter { $0["event"] as? String == "focus" }.map { $0["at"] as! String }
        // A band ends at the next change (or at the end of the replay).
        for end in matches(#"data-end="([^"]*)""#, in: html).dropLast() {
            XCTAssertTrue(
                focusOff.contains(end), "a band ends at \(end), where no focus changed", file: file, line: line)
        }
        let summaries = events.filter { $0["event"] as? String == "summary" }.map { $0["at"] as! String }
        XCTAssertEqual(matches(#"<g class="delivered" data-at="([^"]*)""#, in: html), summaries, file: file, line: line)
    }

    func testTheWeekPageHasAMarkPerNotificationAndABandPerFocusChange() throws {
        let (html, _) = try page(week)
        checkMarksAndBands(in: html, against: try events(week))
        XCTAssertTrue(html.contains("<b>Sleep</b> (33 arrived): 3 interrupted"), "the story of the nights")
        XCTAssertTrue(html.contains("Pager: payments-api — SEV1"), "the page that broke through")
        XCTAssertFalse(html.contains("http://") || html.contains("https://"), "nothing from the network")
        XCTAssertFalse(html.contains("<script"), "no script")
    }

    /// The page as headless Chromium builds it: the same marks and bands in its DOM, and a
    /// screenshot.
    func testTheWeekPageInARealBrowser() throws {
        guard
            let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else {
            throw XCTSkip("chromium is not installed (scripts/setup.sh installs it): the page is checked as text only")
        }
        let (_, file) = try page(week)
        func chromiumRun(_ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: chromium)
            process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"] + arguments
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        let dom = try chromiumRun(["--dump-dom", file.absoluteString])
        checkMarksAndBands(in: dom, against: try events(week))
        let png = file.deletingPathExtension().appendingPathExtension("png")
        _ = try chromiumRun(["--window-size=1300,900", "--screenshot=\(png.path)", file.absoluteString])
        let bytes = try Data(contentsOf: png)
        XCTAssertEqual(Array(bytes.prefix(4)), [0x89, 0x50, 0x4E, 0x47], "a PNG")
        XCTAssertGreaterThan(bytes.count, 20_000, "a picture, not a blank page")
    }

    /// `--compare`: both policies side by side, and every notification whose outcome changed.
    func testCompareListsEveryChangedOutcome() throws {
        let other = ["--ephemeral", "--policy", "policies/sleep.lua", "--context", "examples/context.json"]
        let a = try events(week).filter { $0["event"] as? String == "notification" }
            .map { $0["decision"] as! [String: Any] }
        let b = try events(other).filter { $0["event"] as? String == "notification" }
            .map { $0["decision"] as! [String: Any] }
        XCTAssertEqual(a.count, b.count)
        func outcome(_ d: [String: Any]) -> String {
            "\(d["delivery"]!) \(d["breakthrough"] ?? "") \(d["summary_at"] ?? "")"
        }
        let changed = zip(a, b).filter { outcome($0) != outcome($1) }.map { $0.0["id"] as! String }
        XCTAssertGreaterThan(changed.count, 10)

        let (html, _) = try page(week + ["--compare", "policies/sleep.lua"])
        XCTAssertEqual(matches(#"<tr class="changed" data-id="([^"]*)""#, in: html), changed)
        XCTAssertEqual(matches(#"<g class="mark ([^"]*)" tabindex"#, in: html).count, 2 * a.count, "two sides")
        XCTAssertEqual(
            matches(#"<g class="mark [^"]* changed" tabindex"#, in: html).count, 2 * changed.count,
            "a changed mark is marked on both sides")
        XCTAssertTrue(html.contains("\(changed.count) of \(a.count) notifications land differently."))
    }

    func testCompareNeedsAPageAndNoStateFile() throws {
        let run = try HushBinary.run(["simulate", "--compare", "policies/sleep.lua", "examples/week.jsonl"])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.stderr.contains("--compare needs --html FILE"), run.stderr)
        let withState = try HushBinary.run([
            "simulate", "--state", "/tmp/x.sqlite", "--html", "-", "--compare", "policies/sleep.lua",
            "examples/week.jsonl",
        ])
        XCTAssertNotEqual(withState.status, 0)
        XCTAssertTrue(withState.stderr.contains("leave out --state"), withState.stderr)
        let missing = try HushBinary.run([
            "simulate", "--ephemeral", "--html", "-", "--compare", "policies/nope.lua", "examples/week.jsonl",
        ])
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderr.contains("policies/nope.lua"), missing.stderr)
    }

    /// Text from a notification is text on the page, never markup.
    func testNotificationTextIsEscaped() throws {
        let stream = try HushBinary.file(
            #"{"app":"com.example.chat","id":"x<1>","date":"2026-11-24T10:00:00+01:00","payload":{"aps":{"alert":{"title":"<script>alert(1)</script>","body":"a & b \"q\""}}}}"#
                + "\n", name: "hostile", ext: "jsonl")
        let run = try HushBinary.run(["simulate", "--ephemeral", "--html", "-", stream.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertFalse(run.stdout.contains("<script>"))
        XCTAssertTrue(run.stdout.contains("&lt;script&gt;alert(1)&lt;/script&gt; — a &amp; b &quot;q&quot;"))
        XCTAssertTrue(run.stdout.contains(#"data-id="x&lt;1&gt;""#))
    }
}
