// libFuzzer target: the backend's donation JSON. Compiled together with Sources/BrokerProtocol by scripts/fuzz.
import Foundation

/// Any bytes: decoding and validation must not crash; a valid update must survive a round trip, and the
/// state machine must answer for any pair of stages.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDonation(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    guard let update = try? JSONDecoder().decode(DonationUpdate.self, from: bytes) else { return 0 }
    switch update.validated() {
    case .failure(let error):
        if error.message.isEmpty { fatalError("a refusal without a message") }
    case .success(let valid):
        guard let encoded = try? WireJSON.encode(valid), let again = try? JSONDecoder().decode(DonationUpdate.self, from: encoded),
            case .success(let revalidated) = again.validated(), revalidated == valid
        else { fatalError("a valid update did not survive a round trip") }
        for state in DonationState.allCases {
            _ = DonationTransition.refusal(from: .init(state, volunteer: valid.volunteer), to: .init(valid.state, volunteer: valid.volunteer))
        }
    }
    return 0
}
