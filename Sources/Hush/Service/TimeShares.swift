/// Each user's share of the time their rules may take in `hush serve` (one thread decides for
/// everybody): a bucket of milliseconds that fills at `millisecondsPerSecond` up to
/// `burstMilliseconds`. An evaluation may take what is in the bucket (its rules' time limit is
/// lowered to that; with less than the grace period in it, its rules are not run) and what it took
/// is taken out. One user's policy running at its limits on every notification so takes at most
/// that share of each second, in short slices, and holds other users up only that long
/// (docs/security.md, "Service limits").
package struct TimeShares: Sendable {
    /// What a user who was idle may spend at once.
    package var burstMilliseconds = 250.0
    /// What a user may spend per second, sustained.
    package var millisecondsPerSecond = 50.0
    /// Per user: milliseconds in the bucket, and when (monotonic seconds) that was so.
    private var buckets: [String: (available: Double, at: Double)] = [:]

    package init() {}

    /// The milliseconds `user`'s next evaluation may take.
    package func allowance(for user: String, now: Double) -> Double {
        guard let bucket = buckets[user] else { return burstMilliseconds }
        return min(burstMilliseconds, bucket.available + (now - bucket.at) * millisecondsPerSecond)
    }

    /// Takes `milliseconds` out of `user`'s bucket (it may go below zero: an evaluation that took
    /// longer is paid back before the next).
    package mutating func spend(_ milliseconds: Double, by user: String, now: Double) {
        let available = allowance(for: user, now: now) - milliseconds
        if available >= burstMilliseconds {
            buckets[user] = nil
        } else {
            buckets[user] = (available, now)
            // Users whose bucket has filled again need no entry.
            if buckets.count > 4096 {
                buckets = buckets.filter { allowance(for: $0.key, now: now) < burstMilliseconds }
            }
        }
    }
}
