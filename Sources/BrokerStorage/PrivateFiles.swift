import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Creates files and folders that only the broker's user can read, whatever the process's umask.
package enum PrivateFiles {
    /// Creates the missing folders above `path`, each with mode 0700. Folders that exist are left as they are.
    package static func createFolders(for path: String) throws {
        var missing: [URL] = []
        var folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.path) && folder.path != "/" {
            missing.append(folder)
            folder.deleteLastPathComponent()
        }
        for folder in missing.reversed() {
            // mkdir's mode is cut by the umask, and 0700 needs nothing cut: set it again to be sure.
            guard mkdir(folder.path, 0o700) == 0 || errno == EEXIST else {
                throw PrivateFilesError("cannot create the folder \(folder.path): \(String(cString: strerror(errno)))")
            }
            chmod(folder.path, 0o700)
        }
    }

    /// Creates `path` empty with mode 0600 if it does not exist; an existing file keeps its mode.
    package static func createFile(_ path: String) throws {
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            fchmod(descriptor, 0o600)
            close(descriptor)
        } else if errno != EEXIST {
            throw PrivateFilesError("cannot create \(path): \(String(cString: strerror(errno)))")
        }
    }
}

/// A file or folder the broker could not create, said with the path and the system's reason.
package struct PrivateFilesError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
