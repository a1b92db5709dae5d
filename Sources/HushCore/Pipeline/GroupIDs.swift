import Foundation

/// The `app/thread` group ids made lately on this thread, so that a group's notifications share
/// one text instead of each keeping its own: a stream repeats a few threads per app, and each
/// stored notification kept its copy (6 MB on 20,000 users × 10 notifications), made anew every
/// time. Direct-mapped, 256 slots; a slot holds the last id made for its (app, thread) pair. One
/// table per thread (`ThreadSlots`), so no lock and no shared reference counts.
enum GroupIDs {
    private struct Slot: Sendable {
        var app: String
        var thread: String
        var id: String
    }

    /// Empty slots hold the pair ("", ""), whose id "/" they hold.
    private static let table = ThreadSlots(count: 256, empty: Slot(app: "", thread: "", id: "/"))

    /// `app/thread`, the text made for the same pair before when it is still in its slot.
    static func id(app: String, thread: String) -> String {
        guard let slots = table.slots() else { return make(app: app, thread: thread) }
        // The slot holds its texts, so equal words are the same texts (`TextWords`): the JSON
        // reader makes one text per repeated value (`_JSONKeyCache`).
        let a = TextWords(app)
        let t = TextWords(thread)
        // Not a keyed hash, and it needs none: pairs flooding one slot only make every lookup a
        // miss.
        let mixed =
            (t.first &+ t.second &* 31 &+ a.first &* 961 &+ a.second &* 29_791) &* 0x9E37_79B9_7F4A_7C15
        let slot = slots + Int(truncatingIfNeeded: mixed >> 56)
        if TextWords(slot.pointee.app) == a && TextWords(slot.pointee.thread) == t { return slot.pointee.id }
        let id = make(app: app, thread: thread)
        slot.pointee = Slot(app: app, thread: thread, id: id)
        return id
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
