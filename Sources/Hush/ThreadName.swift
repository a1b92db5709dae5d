import Foundation

/// Names the calling thread as the system sees it (`top -H`, `perf`, `/proc/PID/task/*/comm`):
/// call it first in a thread's body. On Linux, Foundation's `Thread.name` set before `start()`
/// never reached the system, and set from inside it did not always either; the thread's own
/// `comm` file does (Swift sees neither `pthread_setname_np` nor `prctl`). Linux keeps 15 bytes.
package func nameThisThread(_ name: String) {
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
