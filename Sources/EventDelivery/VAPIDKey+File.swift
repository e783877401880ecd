import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension VAPIDKey {
    /// The key in the PEM file at `path`.
    package static func load(pemFile path: String) throws(VAPIDKeyError) -> VAPIDKey {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw .file(path: path, reason: Self.reason(error))
        }
        do {
            return try VAPIDKey(pemRepresentation: text)
        } catch {
            throw .badFile(path: path)
        }
    }

    /// The key in the PEM file at `path`, made and written there first when the file does not exist: the file with
    /// mode 0600 and missing folders with 0700, whatever the umask, since whoever reads it can push as the broker.
    ///
    /// Two processes starting at once (two nodes on one shared volume) end with the same key: the new key is
    /// written to a file of its own, then linked to `path` only if no file is there yet; the loser reads the
    /// winner's file. A reader never sees a half-written key.
    package static func createOrLoad(pemFile path: String) throws(VAPIDKeyError) -> VAPIDKey {
        if FileManager.default.fileExists(atPath: path) { return try load(pemFile: path) }
        try createFolders(for: path)
        let key = VAPIDKey.generate()
        let temporary = path + ".\(getpid()).\(UInt32.random(in: 0 ... .max)).new"
        try writePrivately(key.pemRepresentation, to: temporary)
        defer { unlink(temporary) }
        if link(temporary, path) == 0 { return key }
        guard errno == EEXIST else { throw .file(path: path, reason: String(cString: strerror(errno))) }
        return try load(pemFile: path)
    }

    /// Creates the missing folders above `path` with mode 0700.
    private static func createFolders(for path: String) throws(VAPIDKeyError) {
        var missing: [String] = []
        var folder = (path as NSString).deletingLastPathComponent
        while !folder.isEmpty && folder != "/" && !FileManager.default.fileExists(atPath: folder) {
            missing.append(folder)
            folder = (folder as NSString).deletingLastPathComponent
        }
        for folder in missing.reversed() {
            guard mkdir(folder, 0o700) == 0 || errno == EEXIST else {
                throw .file(path: path, reason: "cannot create the folder \(folder): \(String(cString: strerror(errno)))")
            }
            // mkdir's mode is cut by the umask; 0700 needs nothing cut, so set it again to be sure.
            chmod(folder, 0o700)
        }
    }

    /// Writes `text` to a new file at `path` with mode 0600, synced to disk before it is linked into place.
    private static func writePrivately(_ text: String, to path: String) throws(VAPIDKeyError) {
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .file(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        fchmod(descriptor, 0o600)
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let result = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else {
                let reason = String(cString: strerror(errno))
                unlink(path)
                throw .file(path: path, reason: reason)
            }
            written += result
        }
        guard fsync(descriptor) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(path)
            throw .file(path: path, reason: reason)
        }
    }

    private static func reason(_ error: Error) -> String {
        if let cocoa = error as? CocoaError, let underlying = cocoa.underlying as? POSIXError {
            return String(cString: strerror(underlying.code.rawValue))
        }
        return (error as NSError).localizedDescription
    }
}
