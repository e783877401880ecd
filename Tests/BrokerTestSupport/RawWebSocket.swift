import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A WebSocket client on a bare socket that does only what the test says: it completes the handshake, then
/// reads and sends single frames by hand. It never answers a ping by itself, and when it stops reading it is
/// the donor whose phone froze. One task uses it at a time (a flood runs in a task of its own while the test
/// waits for it), hence the unchecked `Sendable`.
///
/// Its socket is a blocking one, so every call on it runs on a thread of its own (``blocking(_:deadline:_:)``),
/// never on the cooperative pool, with a socket timeout and a deadline: a test that waits for a frame fails
/// instead of hanging.
final class RawWebSocket: @unchecked Sendable {
    private let fd: Int32

    /// Connects to a broker on `port` and completes the handshake with `token`, within 10 s.
    static func connect(port: Int, token: String, receiveBuffer: Int32 = 4_096) async throws -> RawWebSocket {
        try await blocking("the WebSocket handshake on port \(port)", deadline: .now + .seconds(12)) {
            try RawWebSocket(port: port, token: token, receiveBuffer: receiveBuffer)
        }
    }

    private init(port: Int, token: String, receiveBuffer: Int32) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var size = receiveBuffer
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        Self.setTimeout(fd, SO_RCVTIMEO, .seconds(10))
        Self.setTimeout(fd, SO_SNDTIMEO, .seconds(10))
        guard Loopback.connect(fd, port: port) == 0 else { throw POSIXError(.ECONNREFUSED) }
        try write(Array(("GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(token)\r\n\r\n").utf8))
        // Read the 101 response byte by byte, so that no frame after it is consumed.
        var response: [UInt8] = []
        while !response.suffix(4).elementsEqual([13, 10, 13, 10]) {
            var byte: UInt8 = 0
            guard recv(fd, &byte, 1, 0) == 1 else { throw POSIXError(.ECONNRESET) }
            response.append(byte)
        }
        guard String(decoding: response, as: UTF8.self).hasPrefix("HTTP/1.1 101") else { throw POSIXError(.EPROTO) }
    }

    private static func setTimeout(_ fd: Int32, _ option: Int32, _ timeout: Duration) {
        var value = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Sends a masked text frame, as a client must.
    func sendText(_ text: String) async throws {
        try await sendFrame(opcode: 0x1, Array(text.utf8))
    }

    /// Sends one frame of less than 64 KiB, with FIN set and masked unless told otherwise.
    func sendFrame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true) async throws {
        precondition(payload.count < 65_536, "frames under 64 KiB only")
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        let maskBit: UInt8 = masked ? 0x80 : 0
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            frame.append(maskBit | UInt8(payload.count))
        } else {
            frame += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        if masked {
            frame += mask
            frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        } else {
            frame += payload
        }
        try await blocking("sending a frame") { [frame] in try self.write(frame) }
    }

    /// A masked frame as bytes, for ``flood(_:count:for:)``.
    static func maskedFrame(opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        precondition(payload.count < 126, "short frames only")
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        return [0x80 | opcode, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// Sends `frame` up to `count` times as fast as the socket takes it, never reading, for at most `duration`.
    /// Stops early when the server has stopped taking bytes for a while (a send waits 200 ms at most) or has
    /// closed the socket.
    /// - Returns: how many whole frames were sent.
    func flood(_ frame: [UInt8], count: Int, for duration: Duration) async throws -> Int {
        try await blocking("a flood of \(count) frames", deadline: .now + duration + .seconds(10)) {
            self.floodNow(frame, count: count, for: duration)
        }
    }

    private func floodNow(_ frame: [UInt8], count: Int, for duration: Duration) -> Int {
        Self.setTimeout(fd, SO_SNDTIMEO, .milliseconds(200))
        let perBatch = 1_000
        let batch = Array([[UInt8]](repeating: frame, count: perBatch).joined())
        let deadline = ContinuousClock.now + duration
        var sentBytes = 0
        var pending = batch[...]
        while sentBytes / frame.count < count && ContinuousClock.now < deadline {
            let result = pending.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard result > 0 else { break }
            sentBytes += result
            pending = pending.dropFirst(result)
            if pending.isEmpty { pending = batch[...] }
        }
        return sentBytes / frame.count
    }

    /// Ends this side's output (TCP FIN) without a close frame: an app the system killed, a crashed client.
    func shutdownOutput() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Sends a close frame with `code`.
    func sendClose(code: UInt16) async throws {
        try await sendFrame(opcode: 0x8, [UInt8(code >> 8), UInt8(code & 0xFF)])
    }

    /// A frame from the server.
    struct Frame: Equatable, Sendable {
        var opcode: UInt8
        var payload: [UInt8]

        /// The close code and reason of a close frame.
        var close: (code: UInt16, reason: String)? {
            guard opcode == 0x8, payload.count >= 2 else { return nil }
            return (UInt16(payload[0]) << 8 | UInt16(payload[1]), String(decoding: payload.dropFirst(2), as: UTF8.self))
        }
    }

    /// Reads the next frame, waiting at most `timeout`.
    /// - Returns: `nil` when the server closed the socket (or nothing came in time).
    func readFrame(timeout: Duration = .seconds(10)) async throws -> Frame? {
        try await blocking("a frame from the broker", deadline: .now + timeout + .seconds(5)) { self.readFrameNow(timeout: timeout) }
    }

    /// Whether the server has closed the socket (end of stream within `timeout`), skipping the frames before.
    func serverClosed(timeout: Duration = .seconds(5)) async throws -> Bool {
        try await blocking("the broker closing the socket", deadline: .now + timeout * 3 + .seconds(5)) {
            let deadline = ContinuousClock.now + timeout * 3
            while ContinuousClock.now < deadline, self.readFrameNow(timeout: timeout) != nil {}
            var byte: UInt8 = 0
            return recv(self.fd, &byte, 1, 0) == 0
        }
    }

    private func readFrameNow(timeout: Duration) -> Frame? {
        Self.setTimeout(fd, SO_RCVTIMEO, timeout)
        guard let head = read(2) else { return nil }
        var length = Int(head[1] & 0x7F)
        if length == 126 {
            guard let extended = read(2) else { return nil }
            length = Int(extended[0]) << 8 | Int(extended[1])
        } else if length == 127 {
            guard let extended = read(8) else { return nil }
            length = extended.reduce(0) { $0 << 8 | Int($1) }
        }
        guard let payload = read(length) else { return nil }
        return Frame(opcode: head[0] & 0x0F, payload: payload)
    }

    private func read(_ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var received = 0
        while received < count {
            let result = bytes[received...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard result > 0 else { return nil }
            received += result
        }
        return bytes
    }

    private func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let result = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard result > 0 else { throw POSIXError(.EPIPE) }
            sent += result
        }
    }
}
