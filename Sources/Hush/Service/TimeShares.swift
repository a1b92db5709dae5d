/// How `hush serve` keeps one user's slow policy from holding up everybody else (one thread
/// decides for all): a user whose rules overran their limits (instructions, time, memory) gets a
/// share of time — a bucket of milliseconds that fills at `millisecondsPerSecond` up to
/// `burstMilliseconds`. Each of their evaluations may take what is in it (their rules' time limit
/// is lowered to that; with less than the grace period in it, their rules are not run and the
/// decision says so) and what it took is taken out. A policy at its limits on every notification
/// so takes a small slice of each second; `forgiveAfterSeconds` without an overrun lifts the
/// share. A policy that never overruns is never limited, so its decisions never depend on load
/// (docs/security.md, "Service limits").
package struct TimeShares: Sendable {
    /// What a limited user may spend at once.
    package var burstMilliseconds = 50.0
    /// What a limited user may spend per second, sustained.
    package var millisecondsPerSecond = 20.0
    /// A limited user with no overrun for this long is limited no more.
    package var forgiveAfterSeconds = 60.0
    /// Limited users: milliseconds in the bucket, when (monotonic seconds) that was so, and their
    /// last overrun.
    private var limited: [String: (available: Double, at: Double, lastOverrun: Double)] = [:]

    package init() {}

    /// The milliseconds `user`'s next evaluation may take; nil: not limited.
    package func allowance(for user: String, now: Double) -> Double? {
        guard let bucket = limited[user] else { return nil }
        return min(burstMilliseconds, bucket.available + (now - bucket.at) * millisecondsPerSecond)
    }

    /// An evaluation of `user` took `milliseconds`; `overran`: its rules hit a limit.
    package mutating func record(_ milliseconds: Double, by user: String, overran: Bool, now: Double) {
        guard let bucket = limited[user] else {
            if overran { limited[user] = (burstMilliseconds - milliseconds, now, now) }
            return
        }
        if !overran, now - bucket.lastOverrun > forgiveAfterSeconds {
            limited[user] = nil
            return
        }
        let available = (allowance(for: user, now: now) ?? burstMilliseconds) - milliseconds
        limited[user] = (available, now, overran ? now : bucket.lastOverrun)
    }
}
