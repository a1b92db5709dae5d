import Foundation
import NIOHTTP1
import XCTest

/// docs/openapi.json describes the server as it is: every endpoint of SPEC §8 is in it, and each
/// operation's examples (`x-hush-example`), replayed against a real server, get the status they
/// document, with the properties their schema requires.
final class OpenAPITests: XCTestCase {
    typealias Object = [String: Any]

    static func document() throws -> Object {
        let url = ServerProcess.root.appendingPathComponent("docs/openapi.json")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? Object)
    }

    func testEveryEndpointOfTheSpecIsDocumented() throws {
        let paths = try XCTUnwrap(try Self.document()["paths"] as? Object)
        let expected: [(String, String)] = [
            ("/v1/notifications", "post"), ("/v1/users/{user}/status", "get"), ("/v1/users/{user}/focus", "put"),
            ("/v1/users/{user}/interactions", "post"), ("/v1/users/{user}/suggestions", "get"),
            ("/v1/users/{user}/policy", "put"), ("/v1/users/{user}/policy", "get"),
            ("/v1/users/{user}/policy", "delete"), ("/v1/events", "get"), ("/healthz", "get"), ("/metrics", "get"),
        ]
        for (path, method) in expected {
            XCTAssertNotNil((paths[path] as? Object)?[method], "\(method.uppercased()) \(path) is not documented")
        }
    }

    func testTheExamplesGetTheDocumentedAnswers() async throws {
        let document = try Self.document()
        let paths = try XCTUnwrap(document["paths"] as? Object)
        let server = try ServerProcess([
            "--policy", "policies/personal.lua", "--context", "examples/context.json", "--ephemeral",
        ])
        var replayed = 0
        for path in paths.keys.sorted() {
            for (method, value) in (paths[path] as? Object ?? [:]).sorted(by: { $0.key < $1.key }) {
                guard let operation = value as? Object else { continue }
                let responses = operation["responses"] as? Object ?? [:]
                // Examples on the operation and on each of its responses.
                var examples: [Object] = []
                for holder in [operation] + responses.keys.sorted().compactMap({ responses[$0] as? Object }) {
                    if let one = holder["x-hush-example"] as? Object { examples.append(one) }
                }
                if method == "get" && path == "/v1/events" { continue }  // a stream: EventsOverTimeTests
                var seen = Set<String>()
                for example in examples {
                    // The same example given twice (operation and response) is replayed once.
                    let key = "\(example["path"] ?? "")|\(example["body"] ?? "")|\(example["status"] ?? "")"
                    guard seen.insert(key).inserted else { continue }
                    let target = example["path"] as? String ?? path
                    var headers: [(String, String)] = []
                    if let type = example["contentType"] as? String { headers.append(("Content-Type", type)) }
                    let answer = try await HTTP.send(
                        HTTPMethod(rawValue: method.uppercased()), server.base + target,
                        body: example["body"] as? String, headers: headers)
                    let context = "\(method.uppercased()) \(target): \(answer.body.prefix(300))"
                    if let status = example["status"] as? Int { XCTAssertEqual(answer.status, status, context) }
                    let documented = responses[String(answer.status)] as? Object
                    XCTAssertNotNil(documented, "status \(answer.status) is not documented: \(context)")
                    replayed += 1
                    guard let content = documented?["content"] as? Object else { continue }
                    let type = (answer.headers.first(name: "content-type") ?? "").split(separator: ";")[0]
                    let media = content[String(type)] as? Object
                    XCTAssertNotNil(media, "\(type) is not documented for \(answer.status): \(context)")
                    guard let schema = media?["schema"] as? Object else { continue }
                    let resolved = Self.resolve(schema, in: document)
                    let bodies = type == "application/x-ndjson" ? answer.lines : [answer.body]
                    for body in bodies where type.hasSuffix("json") {
                        let json = try? JSONSerialization.jsonObject(with: Data(body.utf8))
                        Self.check(json, against: resolved, in: document, context: context)
                    }
                }
            }
        }
        XCTAssertGreaterThanOrEqual(replayed, 12, "the document gives examples for its operations")
        XCTAssertEqual(server.stop(), 0)
    }

    /// Follows a `$ref` to `#/components/...`.
    static func resolve(_ schema: Object, in document: Object) -> Object {
        guard let ref = schema["$ref"] as? String, ref.hasPrefix("#/") else { return schema }
        var node: Any = document
        for part in ref.dropFirst(2).split(separator: "/") { node = (node as? Object)?[String(part)] as Any }
        return resolve(node as? Object ?? [:], in: document)
    }

    /// The required properties are there, and the JSON type matches (objects and arrays, one level
    /// into arrays; `oneOf` takes the first alternative that fits).
    static func check(_ value: Any?, against schema: Object, in document: Object, context: String) {
        if let alternatives = (schema["oneOf"] ?? schema["anyOf"]) as? [Object] {
            let fits = alternatives.map { resolve($0, in: document) }.first { alternative in
                let required = alternative["required"] as? [String] ?? []
                return required.allSatisfy { (value as? Object)?[$0] != nil }
            }
            if let fits { check(value, against: fits, in: document, context: context) }
            return
        }
        switch schema["type"] as? String {
        case "object":
            guard let object = value as? Object else { return XCTFail("not an object: \(context)") }
            for key in schema["required"] as? [String] ?? [] {
                XCTAssertNotNil(object[key], "\(key) is required but missing: \(context)")
            }
        case "array":
            guard let array = value as? [Any] else { return XCTFail("not an array: \(context)") }
            if let items = schema["items"] as? Object {
                for item in array { check(item, against: resolve(items, in: document), in: document, context: context) }
            }
        default: break
        }
    }
}
