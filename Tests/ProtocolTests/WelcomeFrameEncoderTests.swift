@testable import BrokerProtocol
import DeterministicRandom
import XCTest

/// The welcome frame written directly (once per connection of a connect storm) is byte for byte what JSONEncoder (`WireJSON`)
/// writes, for every identity the frame may carry.
final class WelcomeFrameEncoderTests: XCTestCase {
    private func direct(_ welcome: ServerFrame.Welcome) -> String {
        WelcomeFrameEncoder.withEncoded(welcome) { String(decoding: $0, as: UTF8.self) }
    }

    private func encoder(_ welcome: ServerFrame.Welcome) throws -> String {
        String(decoding: try WireJSON.encode(ServerFrame.welcome(welcome)), as: UTF8.self)
    }

    func testTheGoldenWelcome() {
        XCTAssertEqual(direct(.init(identity: "donor@example.org", heartbeat: 30)), #"{"heartbeat":30,"identity":"donor@example.org","type":"welcome"}"#)
    }

    func testEveryKindOfIdentityIsWrittenAsJSONEncoderWritesIt() throws {
        var identities = [
            "", "donor@example.org", "a/b", "quote\"inside", "back\\slash", "tab\tand\nnewline", "\u{7F}del", "caf\u{E9}", "\u{1F600}",
            "\u{2028}\u{2029}", "<script>", "&amp;", "\u{0}nul", String(repeating: "x", count: 300),
        ]
        identities += (0..<0x80).map { "byte\(String(UnicodeScalar(UInt8($0))))end" }
        // A seeded sample of identities from every UTF-8 length: one to four bytes a scalar.
        var random = SeededRandom(seed: 2_817)
        let ranges: [ClosedRange<UInt32>] = [0...0x7F, 0x80...0x7FF, 0x800...0xFFFF, 0x10000...0x10FFFF]
        for _ in 0..<500 {
            let scalars = (0..<Int.random(in: 0...40, using: &random)).compactMap { _ in
                UnicodeScalar(UInt32.random(in: ranges.randomElement(using: &random)!, using: &random))
            }
            identities.append(String(String.UnicodeScalarView(scalars)))
        }
        for identity in identities {
            for heartbeat in [0, 1, 30, 86_400, Int(Int32.max), -1] {
                let welcome = ServerFrame.Welcome(identity: identity, heartbeat: heartbeat)
                XCTAssertEqual(direct(welcome), try encoder(welcome), identity.debugDescription)
            }
        }
    }
}
