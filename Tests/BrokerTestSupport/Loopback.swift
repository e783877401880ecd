import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Bare TCP on 127.0.0.1, for the tests that need a socket below any library: a connection that says nothing,
/// a port nobody listens on.
enum Loopback {
    /// The address 127.0.0.1:`port`.
    static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// Connects the socket `fd` to 127.0.0.1:`port`; returns `connect`'s result (0 when connected).
    /// Blocking: call it off the cooperative pool (``blocking(_:deadline:_:)``).
    static func connect(_ fd: Int32, port: Int) -> Int32 {
        var address = address(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func accepts(port: Int) async throws -> Bool {
        try await blocking("a connection to port \(port)") {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            return Loopback.connect(fd, port: port) == 0
        }
    }
}
