import Crypto
import Foundation
import HTTPTypes

/// The head of a WebSocket upgrade request for `/v1/ws` in the one plain form the broker accepts
/// (``WebSocketUpgradeHandler``).
///
/// The plain form: the request line `GET /v1/ws[?query] HTTP/1.1`; header lines `name: value` with a token for a
/// name, printable ASCII values, no folded line and no name twice; exactly one `Host`, `Upgrade: websocket`,
/// a `Connection` that lists `upgrade`, `Sec-WebSocket-Version: 13` and a `Sec-WebSocket-Key` of 16 bytes in
/// base64; no `Transfer-Encoding` and no `Content-Length` but `0`, so that no body can hide after the head.
package struct UpgradeRequestHead: Sendable, Equatable {
    /// The request as an HTTP reader would have handed it to the broker: the path with its query, every field.
    package let request: HTTPRequest
    /// The client's `Sec-WebSocket-Key`.
    let key: String

    /// The longest head read, blank line included: room for a browser's cookies, far below what a socket's
    /// buffers hold. A longer head for `/v1/ws` is refused with 431.
    static let maximumBytes = 32_768

    /// What a head for `/v1/ws` is.
    enum Reading: Equatable {
        /// An upgrade in the plain form.
        case upgrade(UpgradeRequestHead)
        /// No `Upgrade` field: a plain request, for the HTTP pipeline to read and answer.
        case notAnUpgrade
        /// An upgrade request not in the plain form, and the first rule it breaks, said for the client.
        case refused(String)
    }

    /// The GUID of RFC 6455 section 4.2.2, appended to the key for `Sec-WebSocket-Accept`.
    private static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The `Sec-WebSocket-Accept` value for ``key``: base64(SHA-1(key + GUID)).
    var accept: String {
        Data(Insecure.SHA1.hash(data: Data((key + Self.acceptGUID).utf8))).base64EncodedString()
    }

    /// The 101 that completes the handshake, as NIO's upgrader writes it.
    var switchingProtocols: String {
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: \(accept)\r\nConnection: upgrade\r\n\r\n"
    }

    /// Whether the request line at the start of `bytes` (complete or not) names `/v1/ws`, with or without a query,
    /// whatever its method and version: the requests whose upgrades the broker decides itself.
    static func targetsEndpoint(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let space = bytes.firstIndex(of: UInt8(ascii: " ")) else { return false }
        let path = "/v1/ws".utf8
        let start = space + 1
        guard bytes.count > start + path.count, bytes[start..<(start + path.count)].elementsEqual(path) else { return false }
        let next = bytes[start + path.count]
        return next == UInt8(ascii: " ") || next == UInt8(ascii: "?")
    }

    /// Reads `head`, the bytes before the blank line that ends it, of a request whose target is `/v1/ws`.
    /// - Returns: `nil` unless the head is an upgrade in the plain form.
    static func parse(_ head: some Collection<UInt8>) -> UpgradeRequestHead? {
        if case .upgrade(let upgrade) = read(head) { upgrade } else { nil }
    }

    /// Reads `head`, the bytes before the blank line that ends it, of a request whose target is `/v1/ws`.
    static func read(_ head: some Collection<UInt8>) -> Reading {
        // Split at every CR, empty pieces kept: one scan, cheaper than `split`'s.
        let bytes = Array(head)
        var lines: [ArraySlice<UInt8>] = []
        lines.reserveCapacity(16)
        var lineStart = 0
        for index in bytes.indices where bytes[index] == 13 {
            lines.append(bytes[lineStart..<index])
            lineStart = index + 1
        }
        lines.append(bytes[lineStart...])
        // The first rule broken; the lines are still read to learn whether the request asks for an upgrade at all.
        var problem: String?
        func breaks(_ rule: @autoclosure () -> String) {
            if problem == nil { problem = rule() }
        }
        // Every line but the first starts with the LF of the CRLF before it; a bare LF or CR anywhere is refused.
        for index in lines.indices.dropFirst() {
            if lines[index].first == 10 {
                lines[index] = lines[index].dropFirst()
            } else {
                breaks("every line ends with CRLF")
            }
        }
        if lines.contains(where: { $0.contains(10) }) { breaks("every line ends with CRLF") }
        if lines.dropFirst().contains(where: { $0.isEmpty }) { breaks("every line ends with CRLF") }
        let target = lines.first.flatMap(Self.target(of:))
        if target == nil { breaks("a WebSocket upgrade is GET /v1/ws HTTP/1.1 (another method or HTTP version is not one)") }
        var fields = HTTPFields()
        var host: String?, upgrade: String?, version: String?, key: String?
        var connection: ArraySlice<UInt8>?
        var asksForUpgrade = false
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                breaks("each header is one line, name: value (no folded lines)")
                continue
            }
            let name = line[..<colon], rawValue = line[line.index(after: colon)...]
            let lowered = String(decoding: name, as: UTF8.self).lowercased()
            if lowered == "upgrade" { asksForUpgrade = true }
            // A name is a token (so no space before the colon, no folded line, which starts with a space or tab).
            guard !name.isEmpty, name.allSatisfy(Self.isTokenByte), let fieldName = HTTPField.Name(lowered) else {
                breaks("each header's name is a token, with no space before its colon")
                continue
            }
            guard rawValue.allSatisfy({ $0 == 9 || (0x20...0x7E).contains($0) }) else {
                breaks("the value of \(lowered) is printable ASCII")
                continue
            }
            guard !fields.contains(fieldName) else {
                breaks("\(lowered) is sent once")
                continue
            }
            let value = String(decoding: rawValue.trimmingWhitespace, as: UTF8.self)
            switch lowered {
            // No body may hide after the head; NIO's client (and the load driver) sends `Content-Length: 0`.
            case "content-length" where value != "0", "transfer-encoding": breaks("an upgrade request has no body")
            case "host": host = value
            case "upgrade": upgrade = value
            case "connection": connection = rawValue
            case "sec-websocket-version": version = value
            case "sec-websocket-key": key = value
            default: break
            }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        guard asksForUpgrade else { return .notAnUpgrade }
        if let problem { return .refused(problem) }
        guard let host, let target else { return .refused("an upgrade request names its Host") }
        guard upgrade?.lowercased() == "websocket" else { return .refused("Upgrade is websocket") }
        guard let connection, Self.listsUpgrade(connection) else { return .refused("Connection lists upgrade") }
        guard version == "13" else { return .refused("Sec-WebSocket-Version is 13") }
        guard let key, key.utf8.count == 24, Data(base64Encoded: key)?.count == 16 else {
            return .refused("Sec-WebSocket-Key is 16 random bytes in base64")
        }
        return .upgrade(UpgradeRequestHead(request: HTTPRequest(method: .get, scheme: nil, authority: host, path: target, headerFields: fields), key: key))
    }

    /// The target of `GET /v1/ws[?query] HTTP/1.1`, or `nil` for any other request line.
    private static func target(of line: ArraySlice<UInt8>) -> String? {
        let prefix = Array("GET ".utf8), suffix = Array(" HTTP/1.1".utf8)
        guard line.count > prefix.count + suffix.count, line.starts(with: prefix), line.suffix(suffix.count).elementsEqual(suffix) else { return nil }
        let target = line.dropFirst(prefix.count).dropLast(suffix.count)
        guard target.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        let path = Array("/v1/ws".utf8)
        guard target.starts(with: path), target.count == path.count || target[target.startIndex + path.count] == UInt8(ascii: "?") else { return nil }
        return String(decoding: target, as: UTF8.self)
    }

    /// Whether a `Connection` value (printable ASCII and tabs, checked before) lists the `upgrade` option: its
    /// comma-separated options, spaces and tabs around each, compared without case (RFC 9110 §7.6.1).
    private static func listsUpgrade(_ value: ArraySlice<UInt8>) -> Bool {
        var rest = value
        while true {
            let comma = rest.firstIndex(of: UInt8(ascii: ",")) ?? rest.endIndex
            let option = rest[..<comma].trimmingWhitespace
            // `| 0x20` lower-cases an ASCII letter and maps no other byte to one.
            if option.count == 7, zip(option, "upgrade".utf8).allSatisfy({ $0 | 0x20 == $1 }) { return true }
            guard comma < rest.endIndex else { return false }
            rest = rest[rest.index(after: comma)...]
        }
    }

    /// RFC 9110's `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

extension ArraySlice<UInt8> {
    /// Without the spaces and tabs at either end (a field value's optional whitespace).
    fileprivate var trimmingWhitespace: ArraySlice<UInt8> {
        var slice = self
        while let first = slice.first, first == 32 || first == 9 { slice = slice.dropFirst() }
        while let last = slice.last, last == 32 || last == 9 { slice = slice.dropLast() }
        return slice
    }
}
