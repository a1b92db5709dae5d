import Foundation
import NIOHTTP1
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// What keeps one client from wearing the server down: body and batch caps (413), deadlines for
/// slow clients, a cap on event streams (503 with Retry-After). Each refusal takes nothing.
final class LimitsTests: XCTestCase {
    static func note(_ id: String, user: String = "u", body: String = "hi") -> String {
        #"{"app":"com.example.chat","id":"\#(id)","user":"\#(user)","payload":{"aps":{"alert":{"title":"t","body":"\#(body)"}}}}"#
    }

    /// Grouping off: a notification sent again with its id names the one it replaces (in state).
    static let policy = "timezone \"UTC\"\napp \"*\" { grouping = \"off\" }\n"

    func policyFile() throws -> String {
        let file = try temporaryFolder("limits-policy").appendingPathComponent("policy.lua")
        try Self.policy.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    // MARK: bodies and batches

    func testBodiesAndBatchesOverTheirLimitsAre413AndNothingIsTaken() async throws {
        let server = try ServerProcess(["--ephemeral", "--policy", try policyFile(), "--max-batch-lines", "5"])
        // With Content-Length: refused from the length.
        let big = Self.note("big", body: String(repeating: "x", count: 8 << 20))
        let sized = try await HTTP.send(.POST, server.base + "/v1/notifications", body: big)
        XCTAssertEqual(sized.status, 413, String(sized.body.prefix(200)))
        XCTAssertEqual(sized.json?["error"] as? String, "the body is larger than 8388608 bytes")

        // Chunked, without Content-Length: refused once what arrived passes the limit.
        let connection = try RawConnection(port: server.port)
        XCTAssertTrue(
            connection.send(
                "POST /v1/notifications HTTP/1.1\r\nHost: hush\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n"
            ))
        let line = Self.note("c", body: String(repeating: "y", count: 60_000)) + "\n"
        let chunk = String(line.utf8.count, radix: 16) + "\r\n" + line + "\r\n"
        var sent = 0
        while sent < 9 << 20, !connection.hasDataWaiting(), connection.send(chunk) { sent += line.utf8.count }
        _ = connection.send("0\r\n\r\n")
        let chunked = connection.readResponse(timeout: 20)
        XCTAssertTrue(chunked.hasPrefix("HTTP/1.1 413"), String(chunked.prefix(300)))
        XCTAssertTrue(chunked.contains(#"{"error":"the body is larger than 8388608 bytes","field":null}"#), chunked)

        // More lines than --max-batch-lines: refused naming the count, none decided.
        let six = (1...6).map { Self.note("l\($0)") }.joined(separator: "\n") + "\n\n"
        let tooMany = try await HTTP.send(
            .POST, server.base + "/v1/notifications", body: six, headers: [("Content-Type", "application/x-ndjson")])
        XCTAssertEqual(tooMany.status, 413, tooMany.body)
        XCTAssertEqual(
            tooMany.json?["error"] as? String,
            "the body has 6 lines; at most 5 are taken in one request (send them in several)")
        let interactions = (1...6).map { _ in
            #"{"date":"2026-11-24T10:00:00Z","direction":"outgoing","kind":"message","app":"chat","people":[{"handle":"pat@example.com"}]}"#
        }.joined(separator: "\n")
        let donated = try await HTTP.send(.POST, server.base + "/v1/users/u/interactions", body: interactions)
        XCTAssertEqual(donated.status, 413, donated.body)
        XCTAssertTrue((donated.json?["error"] as? String ?? "").hasPrefix("the body has 6 lines"), donated.body)

        // None of the refused notifications is in state: each sent now replaces nothing.
        let five = (["big", "c", "l1", "l2", "l3"]).map { Self.note($0) }.joined(separator: "\n")
        let after = try await HTTP.send(.POST, server.base + "/v1/notifications", body: five)
        XCTAssertEqual(after.status, 200, after.body)
        let replaces = after.lines.map { line -> String in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["replaces"] as? String ?? "nothing"
        }
        XCTAssertEqual(replaces, Array(repeating: "nothing", count: 5))
        XCTAssertEqual(server.stop(), 0)
    }

    func testAPolicyOverTheCapIs413AndTheOldOneStays() async throws {
        let server = try ServerProcess(["--ephemeral"])
        let url = server.base + "/v1/users/u1/policy"
        let huge = "focus \"Deep\" { }\n-- " + String(repeating: "x", count: 256 << 10) + "\n"
        let first = try await HTTP.send(.PUT, url, body: huge)
        XCTAssertEqual(first.status, 413, String(first.body.prefix(200)))
        XCTAssertEqual(first.json?["error"] as? String, "the body is larger than 262144 bytes")
        let none = try await HTTP.get(url)
        XCTAssertEqual(none.status, 404, "nothing was taken")

        let small = "focus \"Small\" { }\n"
        let taken = try await HTTP.send(.PUT, url, body: small)
        XCTAssertEqual(taken.status, 200, taken.body)
        let second = try await HTTP.send(.PUT, url, body: huge)
        XCTAssertEqual(second.status, 413)
        let kept = try await HTTP.get(url)
        XCTAssertEqual(kept.status, 200)
        XCTAssertEqual(kept.body, small, "the old policy stays")
        XCTAssertEqual(server.stop(), 0)
    }

    // MARK: slow clients

    func testAClientTricklingItsHeadersOrSilentIsClosedAndOthersAreServed() async throws {
        // The idle timeout is long: what closes these connections is the header deadline.
        let server = try ServerProcess(["--ephemeral", "--header-timeout", "1", "--idle-timeout", "300"])
        let silent = try RawConnection(port: server.port)
        let trickle = try RawConnection(port: server.port)
        let head = Array(
            "GET /healthz HTTP/1.1\r\nHost: hush\r\nX-Slow: \(String(repeating: "z", count: 200))\r\n\r\n".utf8)
        var sent = 0
        var closed = false
        let deadline = Date().addingTimeInterval(15)
        while sent < head.count, Date() < deadline {
            if !trickle.send(Array(head[sent..<sent + 1])) {
                closed = true
                break
            }
            sent += 1
            // A byte every 50 ms (the whole head would take 12 s); a closed connection reads as end.
            if trickle.waitForClose(timeout: 0.05) {
                closed = true
                break
            }
            if sent % 10 == 0 {
                // Others are served meanwhile.
                let health = try await HTTP.get(server.base + "/healthz")
                XCTAssertEqual(health.status, 200)
            }
        }
        XCTAssertTrue(closed, "the trickling client was not disconnected")
        XCTAssertLessThan(sent, head.count, "its head never completed")
        XCTAssertTrue(silent.waitForClose(timeout: 15), "a client that sends nothing is disconnected")
        let health = try await HTTP.get(server.base + "/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(server.stop(), 0)
    }

    func testAKeptAliveConnectionIsClosedAfterTheIdleTimeout() async throws {
        let server = try ServerProcess(["--ephemeral", "--header-timeout", "300", "--idle-timeout", "1"])
        let connection = try RawConnection(port: server.port)
        XCTAssertTrue(connection.send("GET /healthz HTTP/1.1\r\nHost: hush\r\n\r\n"))
        let answer = connection.readResponse(timeout: 10)
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 200"), answer)
        XCTAssertTrue(connection.waitForClose(timeout: 15), "an idle kept-alive connection is closed")
        XCTAssertEqual(server.stop(), 0)
    }

    // MARK: event streams

    func testEventStreamsBeyondTheCapAre503WithRetryAfter() async throws {
        let server = try ServerProcess(["--ephemeral", "--max-event-clients", "2"])
        let one = try await EventStreamReader(server.base + "/v1/events")
        let two = try await EventStreamReader(server.base + "/v1/events")
        XCTAssertTrue(one.opened && two.opened)
        let third = try await HTTP.get(server.base + "/v1/events")
        XCTAssertEqual(third.status, 503, third.body)
        XCTAssertEqual(third.headers.first(name: "retry-after"), "5")
        XCTAssertEqual(
            third.json?["error"] as? String,
            "too many event streams are open (2, --max-event-clients); try again later")
        // Other endpoints are not held back by the cap.
        let health = try await HTTP.get(server.base + "/healthz")
        XCTAssertEqual(health.status, 200)

        // A stream that ends gives its place back.
        one.close()
        var status = ""
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            let connection = try RawConnection(port: server.port)
            XCTAssertTrue(connection.send("GET /v1/events HTTP/1.1\r\nHost: hush\r\n\r\n"))
            status = connection.readStatusLine(timeout: 10)
            if status.hasPrefix("HTTP/1.1 200") { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertTrue(status.hasPrefix("HTTP/1.1 200"), status)
        two.close()
        XCTAssertEqual(server.stop(), 0)
    }
}

/// A plain TCP connection to the server, to behave as HTTP clients do not: send a few bytes and
/// stop, or send a body without end.
final class RawConnection {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    deinit { close(fd) }

    /// Sends every byte; false once the server closed the connection.
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            // MSG_NOSIGNAL: a closed connection is an error here, not a SIGPIPE for the tests.
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Whether something can be read without waiting (an answer, or the end).
    func hasDataWaiting() -> Bool { poll(timeout: 0) }

    private func poll(timeout: TimeInterval) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return Glibc.poll(&descriptor, 1, Int32(timeout * 1000)) > 0
    }

    /// Reads what comes until the server closes the connection; true when it did within `timeout`.
    func waitForClose(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0, poll(timeout: left) else { return false }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN) { return true }
        }
    }

    /// Reads until `done` holds for what arrived, the connection ends, or `timeout` passes.
    private func read(timeout: TimeInterval, until done: (String) -> Bool) -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !done(String(decoding: received, as: UTF8.self)) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0, poll(timeout: left) else { break }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        return String(decoding: received, as: UTF8.self)
    }

    func readStatusLine(timeout: TimeInterval) -> String {
        let text = read(timeout: timeout) { $0.contains("\r\n") }
        return String(text.prefix { $0 != "\r" })
    }

    /// One answer with a Content-Length: its head and body.
    func readResponse(timeout: TimeInterval) -> String {
        read(timeout: timeout) { text in
            guard let end = text.range(of: "\r\n\r\n") else { return false }
            let head = text[..<end.lowerBound].lowercased()
            guard
                let length = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") })
                    .flatMap({ Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) })
            else { return true }
            return text[end.upperBound...].utf8.count >= length
        }
    }
}
