import Foundation
import NIOHTTP1
import XCTest

/// The live page at `/`: users, their focus and why, what waits for which summary, and the
/// events as they happen.
final class LivePageTests: XCTestCase {
    let policy = ["--policy", "policies/week.lua", "--context", "examples/context.json", "--ephemeral"]

    func news(user: String, at date: String) -> String {
        #"{"app":"com.example.news","user":"\#(user)","date":"\#(date)","payload":{"aps":{"alert":{"title":"Morning","body":"news"}}}}"#
    }

    func testThePageShowsEachUsersFocusAndWhatWaits() async throws {
        let server = try ServerProcess(policy + ["--clock", "2026-11-23T10:00:00+01:00", "--speed", "1"])
        defer { server.stop() }
        let hostile = "<img src=x onerror=alert(1)>"
        for (user, date) in [("sam", "2026-11-23T09:55:00+01:00"), (hostile, "2026-11-23T09:56:00+01:00")] {
            let answer = try await HTTP.send(.POST, server.base + "/v1/notifications", body: news(user: user, at: date))
            XCTAssertEqual(answer.status, 200, answer.body)
            XCTAssertEqual(answer.json?["delivery"] as? String, "summary", answer.body)
        }
        let page = try await HTTP.get(server.base + "/")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.headers.first(name: "content-type"), "text/html; charset=utf-8")
        XCTAssertTrue(page.headers.first(name: "content-security-policy")?.contains("default-src 'none'") ?? false)
        XCTAssertTrue(page.body.contains(#"<article class="user" data-user="sam">"#), page.body)
        XCTAssertTrue(page.body.contains(#"<p class="focus on">Work</p>"#), "Monday 10:00 is Work")
        XCTAssertTrue(page.body.contains(#"Waiting for a summary: <span class="waiting-count">1</span>"#))
        XCTAssertTrue(page.body.contains(#"data-summary="2026-11-23T18:00:00+01:00""#), "waits for 18:00")
        XCTAssertTrue(page.body.contains("(News 1)"))
        XCTAssertTrue(page.body.contains("2 user(s)"))
        // A user's name is text, never markup.
        XCTAssertFalse(page.body.contains("<img"))
        XCTAssertTrue(page.body.contains("&lt;img src=x onerror=alert(1)&gt;"))

        let one = try await HTTP.get(server.base + "/?user=sam")
        XCTAssertTrue(one.body.contains(#"data-user="sam""#))
        XCTAssertFalse(one.body.contains("onerror=alert"), "only sam")

        let wrong = try await HTTP.get(server.base + "/v1/events?after=soon")
        XCTAssertEqual(wrong.status, 400)
        XCTAssertEqual(wrong.json?["field"] as? String, "after", wrong.body)
        let post = try await HTTP.send(.POST, server.base + "/")
        XCTAssertEqual(post.status, 405)
    }

    /// In headless Chromium: the page opens the event stream and shows the 18:00 summary when it
    /// is delivered, after the page was drawn.
    func testThePageShowsEventsAsTheyHappenInARealBrowser() async throws {
        let script = ServerProcess.root.appendingPathComponent("scripts/browser.py").path
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
        else {
            throw XCTSkip("chromium or python3 is not installed (scripts/setup.sh installs both)")
        }
        // 17:59:00 at five times speed: the summary falls due about 12 s after the start.
        let server = try ServerProcess(policy + ["--clock", "2026-11-23T17:59:00+01:00", "--speed", "5"])
        defer { server.stop() }
        let answer = try await HTTP.send(
            .POST, server.base + "/v1/notifications", body: news(user: "sam", at: "2026-11-23T17:58:00+01:00"))
        XCTAssertEqual(answer.json?["delivery"] as? String, "summary", answer.body)

        let folder = try temporaryFolder("live")
        let dom = folder.appendingPathComponent("live.html"), png = folder.appendingPathComponent("live.png")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            script, server.base + "/", "--wait-for", #"document.querySelector('#events li[data-kind=summary]')"#,
            "--timeout", "40", "--dom", dom.path, "--screenshot", png.path, "--width", "1000", "--height", "600",
        ]
        let err = Pipe()
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        let problems = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, problems)

        let html = try String(contentsOf: dom, encoding: .utf8)
        XCTAssertTrue(html.contains("Live: events appear here as they happen."), "the stream opened")
        XCTAssertTrue(html.contains(#"data-last="0""#), "drawn before any event")
        XCTAssertTrue(
            html.contains(
                #"<li data-seq="1" data-kind="summary"><time>2026-11-23T18:00:00+01:00</time> <b>sam</b> Scheduled Summary: 1 notification</li>"#
            ), html)
        XCTAssertTrue(html.contains(#"<span class="waiting-count">0</span>"#), "the card follows the summary")
        XCTAssertEqual(Array(try Data(contentsOf: png).prefix(4)), [0x89, 0x50, 0x4E, 0x47])
    }
}
