import Hush

enum StateOptions {
    /// The store for a run: in memory for --ephemeral. (Persistent state: see issue 5.)
    static func store(path: String?, ephemeral: Bool) throws -> any StateStore {
        InMemoryStateStore()
    }
}
