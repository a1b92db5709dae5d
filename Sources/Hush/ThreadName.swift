import Foundation

/// Starts a thread named `name` that runs `body`, with a 16 MB stack: Lua, SQLite and the JSON
/// parser recurse, and the default secondary-thread stack is small. The name is what the system
/// shows (`top -H`, `perf`, `/proc/PID/task/*/comm`).
package func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread {
        nameThisThread(name)
        body()
    }
    thread.stackSize = 16 << 20
    thread.start()
}

/// Names the calling thread as the system sees it. On Linux, Foundation's `Thread.name` set before
/// `start()` never reached the system, and set from inside it did not always either; the thread's
/// own `comm` file does (Swift sees neither `pthread_setname_np` nor `prctl`). Linux keeps 15 bytes.
private func nameThisThread(_ name: String) {
    #if os(Linux)
        let fd = open("/proc/thread-self/comm", O_WRONLY)
        if fd >= 0 {
            let bytes = Array(name.utf8.prefix(15))
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            return
        }
    #endif
    Thread.current.name = name
}
