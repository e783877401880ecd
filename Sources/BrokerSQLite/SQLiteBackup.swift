import BrokerStorage
import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

/// A consistent copy of the broker's SQLite file through SQLite's online backup API, safe while the broker serves
/// (WAL: the copy reads one snapshot and blocks no writer). The copy is 0600 in folders made 0700 like the database,
/// is written beside its destination and linked into place only when complete and checked, and never replaces a file
/// unless asked.
package enum SQLiteBackup {
    /// What a backup copied.
    package struct Summary {
        package let donations: Int
        package let bytes: Int
    }

    /// Copies the database at `source` to `destination`.
    /// - Parameter replace: whether an existing `destination` may be replaced (else it is refused).
    package static func copy(from source: String, to destination: String, replace: Bool) throws -> Summary {
        guard FileManager.default.fileExists(atPath: source) else {
            throw PrivateFilesError("there is no database at \(source) to back up (is --database or --config the broker's?)")
        }
        // SQLite may create the database's -wal and -shm files while it reads: as another user (root), they would
        // then belong to that user and lock the broker out of its own database.
        var status = stat()
        if stat(source, &status) == 0, status.st_uid != geteuid() {
            let owner = getpwuid(status.st_uid).map { String(cString: $0.pointee.pw_name) } ?? "\(status.st_uid)"
            throw PrivateFilesError(
                "\(source) belongs to \(owner): run the backup as that user (for example: runuser -u \(owner) -- location-broker backup ...), so that no file of the database changes owner")
        }
        if !replace && FileManager.default.fileExists(atPath: destination) {
            throw PrivateFilesError("\(destination) exists; give --force to replace it")
        }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        let reader = try DatabaseQueue(path: source, configuration: configuration)
        defer { try? reader.close() }
        try reader.read { db in
            guard try db.tableExists("donation") else { throw PrivateFilesError("\(source) is not a location-broker database") }
        }

        try PrivateFiles.createFolders(for: destination)
        let temporary = destination + ".\(getpid()).partial"
        unlink(temporary)
        try PrivateFiles.createFile(temporary)
        defer {
            unlink(temporary)
            unlink(temporary + "-journal")
            unlink(temporary + "-wal")
            unlink(temporary + "-shm")
        }
        let copy = try DatabaseQueue(path: temporary)
        do {
            try reader.backup(to: copy)
            // The copy is left as one file (no -wal beside it), checked before it takes the destination's name.
            let (integrity, donations) = try copy.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                return (
                    try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "",
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM donation") ?? 0
                )
            }
            try copy.close()
            guard integrity == "ok" else { throw PrivateFilesError("the copy failed SQLite's integrity check: \(integrity)") }
            let descriptor = open(temporary, O_RDONLY | O_CLOEXEC)
            if descriptor >= 0 {
                fsync(descriptor)
                close(descriptor)
            }
            if replace {
                guard rename(temporary, destination) == 0 else {
                    throw PrivateFilesError("cannot put the copy at \(destination): \(String(cString: strerror(errno)))")
                }
            } else {
                // link() fails if the destination appeared meanwhile: nothing is ever replaced unasked.
                guard link(temporary, destination) == 0 else {
                    throw PrivateFilesError("cannot put the copy at \(destination): \(String(cString: strerror(errno)))")
                }
            }
            let bytes = (try? FileManager.default.attributesOfItem(atPath: destination)[.size] as? Int) ?? 0
            return Summary(donations: donations, bytes: bytes)
        } catch {
            try? copy.close()
            throw error
        }
    }
}
