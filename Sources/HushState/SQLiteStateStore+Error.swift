import Foundation
import HushCore

extension SQLiteStateStore {
    /// Why a state file could not be opened or used. Every message names the file.
    package enum Error: Swift.Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
        /// The file was migrated by a newer Hush: refusing to touch it, rather than lose what it holds.
        case newerSchema(path: String, found: Int, supported: Int)
        /// The file exists but is not a SQLite database, is damaged, or is another program's database.
        /// It is left as it is.
        case notAStateFile(path: String, reason: String)
        /// The file or its directory could not be created or opened.
        case cannotOpen(path: String, reason: String)
        /// A retention that is not a positive number of days.
        case invalidRetention(path: String, days: Double)
        /// SQLite failed while reading or writing (disk full, I/O error, lock held past the timeout…).
        case failed(path: String, action: String, reason: String)

        package var description: String {
            switch self {
            case .newerSchema(let path, let found, let supported):
                "state file \(path) was written by a newer Hush (schema \(found)); this Hush knows up to \(supported)"
            case .notAStateFile(let path, let reason):
                "\(path) is not a Hush state file (\(reason))"
            case .cannotOpen(let path, let reason):
                "cannot open the state file \(path): \(reason)"
            case .invalidRetention(let path, let days):
                "state file \(path): \(RetentionError(days: days))"
            case .failed(let path, let action, let reason):
                "state file \(path): could not \(action): \(reason)"
            }
        }

        package var errorDescription: String? { description }
    }
}

extension HushError {
    /// A state store's error as the package API reports it: a failed read or write is
    /// `state_failed`, anything that stops the store being used at all is `state_unusable`.
    package init(state error: any Swift.Error) {
        switch error {
        case let error as HushError: self = error
        case SQLiteStateStore.Error.failed: self.init(code: .stateFailed, message: String(describing: error))
        case is SQLiteStateStore.Error: self.init(code: .stateUnusable, message: String(describing: error))
        default: self.init(code: .stateFailed, message: String(describing: error))
        }
        if cause == nil { cause = error }
    }
}
