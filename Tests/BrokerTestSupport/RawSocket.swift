import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A bare TCP connection to 127.0.0.1 that sends exactly the bytes a test gives, at the pace it chooses: a slow
/// or broken HTTP client. Blocking calls run on threads of their own (``blocking(_:deadline:_:)``), with socket
/// timeouts, so a test waits with a deadline. One task uses it at a time, hence the unchecked `Sendable`.
final class RawSocket: @unchecked Sendable {
    private let fd: Int32

    /// Connects to 127.0.0.1:`port`.
    static func connect(port: Int) async throws -> RawSocket {
        try await blocking("a connection to port \(port)") { try RawSocket(port: port) }
    }

    private init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        guard Loopback.connect(fd, port: port) == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    deinit { close(fd) }

    /// Sends `text` as it is.
    /// - Returns: whether every byte was sent (`false` once the peer has closed).
    @discardableResult
    func send(_ text: String) async throws -> Bool {
        let bytes = Array(text.utf8)
        return try await blocking("sending \(bytes.count) bytes") {
            var sent = 0
            while sent < bytes.count {
                let result = bytes[sent...].withUnsafeBytes { Glibc.send(self.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard result > 0 else { return false }
                sent += result
            }
            return true
        }
    }

    /// Ends this side's output (TCP FIN), as a client that quits without saying goodbye.
    func shutdownOutput() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Everything the peer sends until it closes the connection or `timeout` passes.
    /// - Returns: the bytes, and whether the peer closed (end of stream) within `timeout`.
    func readUntilClosed(timeout: Duration) async throws -> (text: String, closed: Bool) {
        try await blocking("the peer closing the connection", deadline: .now + timeout + .seconds(5)) {
            let deadline = ContinuousClock.now + timeout
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while ContinuousClock.now < deadline {
                let left = deadline - ContinuousClock.now
                var poller = pollfd(fd: self.fd, events: Int16(POLLIN), revents: 0)
                let milliseconds = Int32(max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
                guard poll(&poller, 1, milliseconds) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return (String(decoding: received, as: UTF8.self), true) }
                received.append(contentsOf: buffer[..<count])
            }
            return (String(decoding: received, as: UTF8.self), false)
        }
    }
}
