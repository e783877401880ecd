import Foundation
import NIOConcurrencyHelpers
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL for the cluster tests: `initdb` in a temporary folder, started on a free loopback
/// port, trust authentication for the user `lb`, stopped when the test process exits. One per test process;
/// each test gets a database of its own.
///
/// PostgreSQL refuses to run as root, so when the tests run as root (CI) its commands run as the `postgres`
/// user that Debian's package creates.
final class PostgresServer: Sendable {
    let port: Int
    let folder: String
    private let bin: String

    private static let started = NIOLockedValueBox<Task<PostgresServer, any Error>?>(nil)
    nonisolated(unsafe) private static var stopOnExit: (bin: String, folder: String)?

    /// The server of this test process, started on first use (within two minutes). Skips the test when PostgreSQL
    /// is not installed, except under CI, which installs it: there a missing server fails the test.
    static func shared() async throws -> PostgresServer {
        let starting = started.withLockedValue { started in
            if let started { return started }
            let task = Task { try await PostgresServer.make() }
            started = task
            return task
        }
        do {
            return try await starting.value(waitingFor: "the test PostgreSQL server started", deadline: .now + .seconds(120))
        } catch let error as PostgresServerError where error.notInstalled && ProcessInfo.processInfo.environment["CI"] == nil {
            throw XCTSkip("PostgreSQL is not installed (CI installs it): \(error)")
        }
    }

    private init(bin: String, folder: String, port: Int) {
        self.bin = bin
        self.folder = folder
        self.port = port
    }

    private static func make() async throws -> PostgresServer {
        guard let bin = Self.binaryFolder() else {
            throw PostgresServerError("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin", notInstalled: true)
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lb-postgres-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if geteuid() == 0 {
            guard let account = getpwnam("postgres") else { throw PostgresServerError("running as root, and there is no postgres user to run PostgreSQL as") }
            chown(folder, account.pointee.pw_uid, account.pointee.pw_gid)
        }
        let server = PostgresServer(bin: bin, folder: folder, port: try Self.freePort())
        try await server.runAsServerUser("\(bin)/initdb", ["-D", "\(folder)/data", "-U", "lb", "-A", "trust", "--no-sync", "-E", "UTF8"])
        Self.stopOnExit = (bin, folder)
        atexit {
            if let (bin, folder) = PostgresServer.stopOnExit {
                PostgresServer.runAsServerUserAtExit(bin: bin, "\(bin)/pg_ctl", ["-D", "\(folder)/data", "-m", "immediate", "-w", "stop"])
                try? FileManager.default.removeItem(atPath: folder)
            }
        }
        try await server.start()
        return server
    }

    /// The URL a broker uses for a new, empty database.
    func makeDatabase() async throws -> String {
        let name = "lb_\(UUID().uuidString.prefix(8).lowercased())"
        try await psql("CREATE DATABASE \(name)")
        return "postgres://lb@127.0.0.1:\(port)/\(name)"
    }

    /// Runs SQL as the `lb` superuser in `database`; returns the unaligned output.
    @discardableResult
    func psql(_ sql: String, database: String = "postgres") async throws -> String {
        try await runAsServerUser("\(bin)/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "lb", "-d", database, "-At", "-v", "ON_ERROR_STOP=1", "-c", sql])
    }

    /// Starts the server and waits until it accepts connections.
    func start() async throws {
        try await runAsServerUser(
            "\(bin)/pg_ctl",
            ["-D", "\(folder)/data", "-l", "\(folder)/server.log", "-w", "-t", "30",
             "-o", "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", "start"])
    }

    /// Stops the server the way an operator's restart does (connections are closed).
    func stop() async throws {
        try await runAsServerUser("\(bin)/pg_ctl", ["-D", "\(folder)/data", "-m", "fast", "-w", "stop"])
    }

    @discardableResult
    private func runAsServerUser(_ executable: String, _ arguments: [String]) async throws -> String {
        if geteuid() == 0 {
            return try await ChildProcess.check("/usr/sbin/runuser", ["-u", "postgres", "--", executable] + arguments)
        }
        return try await ChildProcess.check(executable, arguments)
    }

    private static func runAsServerUserAtExit(bin: String, _ executable: String, _ arguments: [String]) {
        if geteuid() == 0 {
            ChildProcess.runAtExit("/usr/sbin/runuser", ["-u", "postgres", "--", executable] + arguments)
        } else {
            ChildProcess.runAtExit(executable, arguments)
        }
    }

    /// The newest `/usr/lib/postgresql/<version>/bin` with a server in it.
    private static func binaryFolder() -> String? {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        return versions.compactMap(Int.init).sorted().reversed().map { "/usr/lib/postgresql/\($0)/bin" }
            .first { FileManager.default.isExecutableFile(atPath: "\($0)/postgres") }
    }

    /// A loopback port nobody listens on now.
    private static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw PostgresServerError("no socket for finding a free port") }
        defer { close(socket) }
        var address = Loopback.address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw PostgresServerError("could not find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

struct PostgresServerError: Error, CustomStringConvertible {
    let description: String
    var notInstalled = false
    init(_ description: String, notInstalled: Bool = false) {
        self.description = description
        self.notInstalled = notInstalled
    }
}
