import Foundation
import HushCore
import Synchronization
import XCTest

/// `Pipeline.settings(for:)` keeps each thread's last answers by app: they stay the answers of the
/// pipeline asked, among 300 pipelines (more than the cache has slots, so they share slots) whose
/// policies name the same apps differently, asked in turn, on several threads at once.
final class AppSettingsCacheTests: XCTestCase {
    func testAThreadsCachedSettingsAreEachPipelinesOwn() {
        let policies = (0..<300).map { i in
            Policy(
                appDefaults: AppSettings(grouping: i % 2 == 0 ? .app : .automatic),
                apps: [
                    "com.example.chat": AppSettings(name: "Chat \(i)"),
                    "com.example.mail": AppSettings(delivery: i % 3 == 0 ? .quiet : .prominent, name: "Mail \(i)"),
                ])
        }
        let pipelines = policies.map { Pipeline(policy: $0) }
        // Held once, so that every lookup of an app is the same text, as the JSON reader makes it.
        let apps = ["com.example.chat", "com.example.mail", "com.example.unlisted", "a"]
        let expected = policies.map { policy in apps.map { policy.settings(for: $0) } }
        let mismatches = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            var found = 0
            for _ in 0..<2 {
                for (a, app) in apps.enumerated() {
                    for (p, pipeline) in pipelines.enumerated() where pipeline.settings(for: app) != expected[p][a] {
                        found += 1
                    }
                }
            }
            mismatches.withLock { $0 += found }
        }
        XCTAssertEqual(mismatches.withLock { $0 }, 0)
    }
}
