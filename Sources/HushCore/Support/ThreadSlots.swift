import Foundation

/// A table of slots for each thread that asks, made at its first use and freed when the thread
/// ends: for caches that want neither a lock nor a reference count that the cores pass back and
/// forth. Make one per cache, as a `static let` (each takes one of the process's thread keys).
package final class ThreadSlots<Slot: Sendable>: Sendable {
    private let key: pthread_key_t
    private let count: Int
    private let empty: Slot

    /// `count` slots per thread, each `empty` to begin with.
    package init(count: Int, empty: Slot) {
        var key = pthread_key_t()
        // The value is a retained `Table`, released when its thread ends.
        pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            Unmanaged<AnyObject>.fromOpaque(pointer).release()
        }
        self.key = key
        self.count = count
        self.empty = empty
    }

    /// This thread's slots; nil when the thread's table could not be kept (the caller then works
    /// without the cache).
    @inline(__always)
    package func slots() -> UnsafeMutablePointer<Slot>? {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Table>.fromOpaque(pointer)._withUnsafeGuaranteedRef { $0.slots }
        }
        return makeTable()
    }

    private func makeTable() -> UnsafeMutablePointer<Slot>? {
        let table = Table(count: count, empty: empty)
        let retained = Unmanaged.passRetained(table)
        guard pthread_setspecific(key, retained.toOpaque()) == 0 else {
            retained.release()
            return nil
        }
        return table.slots
    }

    private final class Table {
        let slots: UnsafeMutablePointer<Slot>
        let count: Int

        init(count: Int, empty: Slot) {
            self.count = count
            slots = .allocate(capacity: count)
            slots.initialize(repeating: empty, count: count)
        }

        deinit {
            slots.deinitialize(count: count)
            slots.deallocate()
        }
    }
}
