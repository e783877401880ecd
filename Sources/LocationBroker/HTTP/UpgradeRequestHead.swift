import Crypto
import Foundation
import HTTPTypes

/// The head of a WebSocket upgrade request in the one plain form the broker reads by hand
/// (``WebSocketUpgradeHandler``); any other request, however valid, is left to NIO's HTTP reader.
///
/// The plain form: the request line `GET /v1/ws[?query] HTTP/1.1`; header lines `name: value` with a token for a
/// name, printable ASCII values, no folded line and no name twice; exactly one `Host`, `Upgrade: websocket`,
/// a `Connection` that lists `upgrade`, `Sec-WebSocket-Version: 13` and a `Sec-WebSocket-Key` of 16 bytes in
/// base64; no `Transfer-Encoding` and no `Content-Length` but `0`, so that no body can hide after the head.
struct UpgradeRequestHead: Sendable {
    /// The request as NIO's reader would have handed it to the broker: the path with its query, every field.
    let request: HTTPRequest
    /// The client's `Sec-WebSocket-Key`.
    let key: String

    /// The longest head read by hand, blank line included; a longer one goes to NIO's reader.
    static let maximumBytes = 8192

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

    /// Reads `head`, the bytes before the blank line that ends it.
    /// - Returns: `nil` unless the head is in the plain form.
    static func parse(_ head: some Collection<UInt8>) -> UpgradeRequestHead? {
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
        // Every line but the first starts with the LF of the CRLF before it; a bare LF or CR anywhere is refused.
        for index in lines.indices.dropFirst() {
            guard lines[index].first == 10 else { return nil }
            lines[index] = lines[index].dropFirst()
        }
        guard let requestLine = lines.first, !lines.dropFirst().contains(where: { $0.isEmpty }) else { return nil }
        guard let target = Self.target(of: requestLine) else { return nil }
        var fields = HTTPFields()
        var host: String?, upgrade: String?, version: String?, key: String?
        var connection: ArraySlice<UInt8>?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
            let name = line[..<colon], rawValue = line[line.index(after: colon)...]
            // A name is a token (so no space before the colon, no folded line, which starts with a space or tab).
            guard !name.isEmpty, name.allSatisfy(Self.isTokenByte) else { return nil }
            guard rawValue.allSatisfy({ $0 == 9 || (0x20...0x7E).contains($0) }) else { return nil }
            let value = String(decoding: rawValue.trimmingWhitespace, as: UTF8.self)
            let lowered = String(decoding: name, as: UTF8.self).lowercased()
            guard let fieldName = HTTPField.Name(lowered), !fields.contains(fieldName) else { return nil }
            switch lowered {
            // No body may hide after the head; NIO's client (and the load driver) sends `Content-Length: 0`.
            case "content-length": guard value == "0" else { return nil }
            case "transfer-encoding": return nil
            case "host": host = value
            case "upgrade": upgrade = value
            case "connection": connection = rawValue
            case "sec-websocket-version": version = value
            case "sec-websocket-key": key = value
            default: break
            }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        guard let host, upgrade?.lowercased() == "websocket", version == "13",
            let connection, Self.listsUpgrade(connection),
            let key, key.utf8.count == 24, Data(base64Encoded: key)?.count == 16
        else { return nil }
        return UpgradeRequestHead(request: HTTPRequest(method: .get, scheme: nil, authority: host, path: target, headerFields: fields), key: key)
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
