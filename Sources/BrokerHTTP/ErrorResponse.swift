import BrokerProtocol
import Foundation
import Hummingbird

/// JSON bodies of the HTTP API: `{"error":{"code":..,"message":..}}` for failures.
package enum JSONResponse {
    private struct ErrorBody: Encodable {
        let error: BrokerError
    }

    /// A failure with its documented code.
    package static func error(_ status: HTTPResponse.Status, _ error: BrokerError) -> Response {
        encode(ErrorBody(error: error), status: status)
    }

    /// The bytes of a failure's body.
    package static func errorBody(_ error: BrokerError) -> ByteBuffer {
        ByteBuffer(data: (try? WireJSON.encode(ErrorBody(error: error))) ?? Data(#"{"error":{"code":"internal","message":"?"}}"#.utf8))
    }

    /// Any encodable value with status 200 (or `status`).
    package static func encode(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? WireJSON.encode(value)) ?? Data(#"{"error":{"code":"internal","message":"could not encode the response"}}"#.utf8)
        return Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(data: data))
        )
    }
}

extension HTTPFields {
    /// The credential of an `Authorization: Bearer <credential>` header, if present.
    package var bearerCredential: String? {
        guard let value = self[.authorization] else { return nil }
        if case .read(let credential) = Self.asciiBearerCredential(value) { return credential }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        // Trimmed scalar by scalar as Foundation's `trimmingCharacters(in: .whitespaces)` trims, without bridging
        // the token to `NSString` and back (a measurable cost on every WebSocket upgrade).
        let scalars = parts[1].unicodeScalars
        var start = scalars.startIndex, end = scalars.endIndex
        while start < end, Self.isFoundationWhitespace(scalars[start]) { scalars.formIndex(after: &start) }
        while start < end, Self.isFoundationWhitespace(scalars[scalars.index(before: end)]) { scalars.formIndex(before: &end) }
        return start < end ? String(scalars[start..<end]) : nil
    }

    private enum ASCIIReading {
        case read(String?)
        case general
    }

    /// The same reading as the general one below, done on the bytes of a value that is all ASCII (as a token is):
    /// no grapheme breaking and no lowercased copy of the scheme, which cost a WebSocket upgrade more than the
    /// rest of reading its head.
    private static func asciiBearerCredential(_ value: String) -> ASCIIReading {
        var value = value
        return value.withUTF8 { bytes -> ASCIIReading in
            let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")
            // `HTTPFields` drops spaces and tabs at either end of a value (unless it was made leniently): a value
            // that has some, like one with a byte beyond ASCII, is the general reading's.
            guard !bytes.contains(where: { $0 >= 0x80 }), let first = bytes.first, let last = bytes.last,
                first != space, first != tab, last != space, last != tab
            else { return .general }
            let count = bytes.count
            // As `split(separator: " ", maxSplits: 1)`: the credential is everything after the one space that ends
            // the scheme, and must not be empty; only its start can need trimming.
            var schemeEnd = 0
            while schemeEnd < count, bytes[schemeEnd] != space { schemeEnd += 1 }
            guard schemeEnd + 1 < count, schemeEnd == 6 else { return .read(nil) }
            // ASCII letters only match themselves in either case once 0x20 is set.
            for (byte, letter) in zip(bytes[..<schemeEnd], "bearer".utf8) where byte | 0x20 != letter { return .read(nil) }
            var start = schemeEnd + 1
            while start < count, bytes[start] == space || bytes[start] == tab { start += 1 }
            return .read(start < count ? String(decoding: UnsafeBufferPointer(rebasing: bytes[start...]), as: UTF8.self) : nil)
        }
    }

    /// Whether Foundation's `CharacterSet.whitespaces` holds `scalar` (swift-corelibs-foundation's: the tab and
    /// Unicode's space separators, and U+200B ZERO WIDTH SPACE).
    private static func isFoundationWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x20, 0xA0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }
}

/// Compares secrets in time that does not depend on where they differ.
package func constantTimeEquals(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8), y = Array(b.utf8)
    var difference = UInt8(x.count == y.count ? 0 : 1)
    for index in 0..<max(x.count, y.count) {
        difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
    }
    return difference == 0
}
