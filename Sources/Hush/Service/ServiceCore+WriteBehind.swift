import HushState
import Logging

/// Write-behind in the service, on a SQLite file: a batch of requests is decided from memory, its
/// writes recorded, while a thread of the store's own commits the batches before it on a
/// connection of its own (`SQLiteStateStore+WriteBehind.swift`, as `hush eval` does). Deciding
/// and committing each took about half of the state thread's time under JSON Lines batches; one
/// after the other they left the second core idle.
///
/// The caller (the server's state worker) keeps the order `hush eval` keeps:
/// 1. `recordBatch` decides a batch; `submit` hands its writes to the writer.
/// 2. `waitForOldest` says whether the oldest submitted batch committed; only then are its
///    requests answered (an answered decision is a committed one).
/// 3. A batch that could not be recorded, or did not commit (another process committed to the
///    file meanwhile, or a write failed), and those decided on top of it, are decided again the
///    ordinary way (`forget`, then `inBatch`), from the file as committed.
/// 4. After any commit of the store's own connection (an ordinary batch), `resyncWriter`.
///
/// Only requests that decide notifications (and a tick with nothing due) are written behind;
/// every other request waits for the batches in flight and runs the ordinary way, so it reads
/// and writes the file as committed.
extension ServiceCore {
    /// A batch decided with its writes recorded.
    package struct Recorded {
        fileprivate var log: WriteLog?
        /// What to undo when it is decided again (`forget`).
        package let speculation: Speculation
        /// Whether it can be submitted; else it is decided again the ordinary way.
        package var isRecorded: Bool { log != nil }
    }

    /// What a batch decided from memory changed that is not in the file: the retention
    /// bookkeeping it started from, and the users whose schedule mark it moved.
    package struct Speculation {
        fileprivate let retention: RetentionMark
        fileprivate let marksTouched: Set<String>
    }

    /// Starts writing behind when the store is a SQLite file of this process alone; false
    /// otherwise, or when the writer's connection cannot be opened (logged: the ordinary way then).
    /// `whenACommitEnds` is called on the writer's thread each time a submitted batch has ended.
    package func startWritingBehind(whenACommitEnds: @escaping @Sendable () -> Void) -> Bool {
        guard writeBehind == nil, !store.isShared, let sqlite = store as? SQLiteStateStore else {
            return writeBehind != nil
        }
        do {
            // The writer takes the file's state as it is now, then the store drops the users
            // others changed before that.
            let writer = try sqlite.makeBackgroundWriter()
            writer.whenALogEnds = whenACommitEnds
            try sqlite.dropUsersOthersChanged()
            writeBehind = (sqlite, writer)
            return true
        } catch {
            logger.error("state writes cannot be made behind the decisions", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// Whether batches are written behind now.
    package var writesBehind: Bool { writeBehind != nil }

    /// Whether a batch is being recorded now (a tick then leaves what fell due for the next).
    package var isRecordingBatch: Bool { writeBehind?.store.isRecording ?? false }

    /// Whether the store's memory must start over before the next batch is recorded: the caller
    /// waits for the batches in flight, then calls `restartCache`.
    package var cacheIsFull: Bool { writeBehind?.store.cacheIsFull ?? false }

    package func restartCache() { writeBehind?.store.restartCache() }

    /// Decides `body` (a batch of requests) from memory, its writes recorded (step 1).
    package func recordBatch(_ body: () -> Void) -> Recorded {
        let sqlite = writeBehind!.store
        marksTouched.removeAll(keepingCapacity: true)
        let retention = sqlite.retentionMark()
        let log = sqlite.recordingWrites(body)
        return Recorded(log: log, speculation: Speculation(retention: retention, marksTouched: marksTouched))
    }

    /// Hands a recorded batch's writes to the writer.
    package func submit(_ recorded: Recorded) {
        writeBehind!.writer.submit(recorded.log!)
    }

    /// Waits for the oldest batch submitted: true when it committed. False when it did not (nor
    /// was any submitted after it run); the caller waits for those too, then `forget`s them all.
    package func waitForOldest() -> Bool {
        let (sqlite, writer) = writeBehind!
        switch writer.wait() {
        case .committed:
            sqlite.batchCommitted()
            return true
        case .failed(let error):
            logger.error("a batch of state writes could not be committed", metadata: ["error": "\(error)"])
            return false
        case .conflict, .notRun:
            return false
        }
    }

    /// Before batches are decided again the ordinary way (with nothing in flight): forgets what
    /// was learnt from them. `restoringRetention`: the retention bookkeeping goes back to where
    /// the first of them started (not when a batch before them was just decided again).
    package func forget(_ speculations: [Speculation], restoringRetention: Bool) {
        guard let sqlite = writeBehind?.store else { return }
        sqlite.forgetSpeculation(restoring: restoringRetention ? speculations.first?.retention : nil)
        // The marks moved in them are read back from the file, and those users' events worked
        // out again at the next tick (as when an ordinary batch fails).
        for user in Set(speculations.flatMap(\.marksTouched)) {
            marks[user] = (try? sqlite.scheduleMark(user: user)) ?? nil
            due.schedule(user, at: -.infinity)
        }
    }

    /// After the store's own connection committed (or tried to): the writer takes the file's
    /// state as it is now. When it cannot, writing behind stops (the ordinary way from then on).
    package func resyncWriter() {
        guard let (sqlite, writer) = writeBehind else { return }
        do {
            try writer.rebaseline()
            try sqlite.dropUsersOthersChanged()
        } catch {
            logger.error("state writes are no longer made behind the decisions", metadata: ["error": "\(error)"])
            stopWritingBehind()
        }
    }

    /// With nothing in flight: closes the writer's connection before the store's (so that the
    /// store's checkpoints the log and deletes it).
    package func stopWritingBehind() {
        writeBehind?.writer.close()
        writeBehind = nil
    }
}
