import Foundation

/// The server's clock: the wall clock, or (`--clock`, `--speed`) an instant that runs N times
/// faster than real time from when the server started, so a day can be replayed in minutes.
struct ServiceClock: Sendable {
    let start: Double
    let speed: Double
    private let startedAt: UInt64

    init(start: Double?, speed: Double) {
        self.start = start ?? Self.wallClock()
        self.speed = speed
        self.startedAt = DispatchTime.now().uptimeNanoseconds
    }

    /// Now, in UNIX seconds.
    func now() -> Double {
        start + Double(DispatchTime.now().uptimeNanoseconds - startedAt) / 1e9 * speed
    }

    /// How long to wait in real time for `seconds` of the server's time to pass.
    func realSeconds(for seconds: Double) -> Double { seconds / speed }

    static func wallClock() -> Double { Date().timeIntervalSince1970 }
}
