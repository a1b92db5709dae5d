/// Apple's interruption levels, in increasing order of how much they may interrupt.
public enum InterruptionLevel: String, Sendable, Hashable, Comparable, CaseIterable {
    /// Lands in the list without sound, vibration or screen wake.
    case passive
    /// The default: sound (when asked for), vibration, banner.
    case active
    /// Like active, and may break through a focus that allows it.
    case timeSensitive = "time-sensitive"
    /// Breaks through every focus and the ringer switch (apps with the entitlement only).
    case critical

    private var rank: Int {
        switch self {
        case .passive: 0
        case .active: 1
        case .timeSensitive: 2
        case .critical: 3
        }
    }

    /// Ordered by how much a level may interrupt: passive < active < time-sensitive < critical.
    public static func < (lhs: InterruptionLevel, rhs: InterruptionLevel) -> Bool { lhs.rank < rhs.rank }
}
