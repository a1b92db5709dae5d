import Foundation

/// The `app/thread` group ids made lately on this thread, so that a group's notifications share
/// one text instead of each keeping its own: a stream repeats a few threads per app, and each
/// stored notification kept its copy (6 MB on 20,000 users × 10 notifications), made anew every
/// time. Direct-mapped, 256 slots; a slot holds the last id made for its (app, thread) pair. One
/// table per thread (as the JSON key cache), so no lock and no shared reference counts.
enum GroupIDs {
    private struct Slot {
        var app: String
        var thread: String
        var id: String
    }

    private final class Table {
        var slots = [Slot?](repeating: nil, count: GroupIDs.count)
    }

    private static let count = 256

    private static let threadKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            Unmanaged<Table>.fromOpaque(pointer).release()
        }
        return key
    }()

    private static func table() -> Table? {
        if let pointer = pthread_getspecific(threadKey) {
            return Unmanaged<Table>.fromOpaque(pointer).takeUnretainedValue()
        }
        let table = Table()
        let pointer = Unmanaged.passRetained(table).toOpaque()
        guard pthread_setspecific(threadKey, pointer) == 0 else {
            Unmanaged<Table>.fromOpaque(pointer).release()
            return nil
        }
        return table
    }

    /// `app/thread`, the text made for the same pair before when it is still in its slot.
    static func id(app: String, thread: String) -> String {
        guard let table = table() else { return make(app: app, thread: thread) }
        let index = slot(app: app, thread: thread)
        if let slot = table.slots[index], slot.thread == thread, slot.app == app { return slot.id }
        let id = make(app: app, thread: thread)
        table.slots[index] = Slot(app: app, thread: thread, id: id)
        return id
    }

    /// Its slot: from the lengths and the thread's last bytes (FNV-1a). Not a keyed hash, and it
    /// needs none: a flood of pairs that share a slot only makes every lookup a miss, as without
    /// the table.
    private static func slot(app: String, thread: String) -> Int {
        var hash: UInt32 = 2_166_136_261
        var thread = thread
        thread.withUTF8 { bytes in
            for byte in bytes.suffix(8) { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        }
        hash = (hash ^ UInt32(truncatingIfNeeded: app.utf8.count)) &* 16_777_619
        hash = (hash ^ UInt32(truncatingIfNeeded: thread.utf8.count)) &* 16_777_619
        return Int(hash % UInt32(count))
    }

    /// `app/thread`, made in one allocation: `+` twice costs several times as much.
    private static func make(app: String, thread: String) -> String {
        var app = app
        var thread = thread
        return app.withUTF8 { a in
            thread.withUTF8 { t in
                String(unsafeUninitializedCapacity: a.count + 1 + t.count) { out in
                    let afterApp = out.initialize(fromContentsOf: a)
                    out[afterApp] = 0x2F  // "/"
                    let tail = UnsafeMutableBufferPointer(rebasing: out[(afterApp + 1)...])
                    return afterApp + 1 + tail.initialize(fromContentsOf: t)
                }
            }
        }
    }
}
