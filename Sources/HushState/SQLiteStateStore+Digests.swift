import GRDB
package import HushCore

/// Group digests (what a group's summary line is made of), kept with the user's cached state
/// (`CachedUser`): in a week of a busy chat a group holds hundreds, and reading them all made each
/// evaluation slower than the last. A digest is made from the members once, then kept up to date
/// with this store's writes (a notification joining its group is added to it; one replaced,
/// moved or pruned drops the digests it touches, made again when next asked for); it goes when
/// its user is dropped from the cache (another connection wrote them, a write failed).
extension SQLiteStateStore {
    static let selectDataVersion = "PRAGMA data_version"

    package func groupDigest(user: String, groupID: String) throws -> GroupDigest? {
        try read("read a group") { db in
            try cachedDelivered(db, user) { delivered in
                // A group with no members has nothing to keep.
                guard let group = delivered.groups[groupID] else { return GroupDigest(members: []) }
                if let digest = group.digest { return digest }
                let digest = GroupDigest(members: group.members.map(\.n))
                group.digest = digest
                return digest
            }
        }
    }
}
