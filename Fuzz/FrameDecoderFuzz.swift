// libFuzzer target: the client frame decoder. Compiled together with Sources/BrokerProtocol by scripts/fuzz.
import Foundation

/// Any bytes: decoding must not crash; an accepted frame must survive a round trip unchanged, an accepted
/// position must validate without crashing, and the publish fast path must read exactly what the strict
/// decoder reads whenever it accepts a frame.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrameDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let decoder = ClientFrameDecoder()
    if let publish = PublishFastPath.parse(bytes) {
        guard case .success(.publish(let strict)) = decoder.decodeStrictly(bytes), strict == publish else {
            fatalError("the fast path read a publish the strict decoder reads differently: \(String(decoding: bytes, as: UTF8.self))")
        }
    }
    switch decoder.decode(bytes) {
    case .failure(let rejection):
        if rejection.error.message.isEmpty { fatalError("a refusal without a message") }
    case .success(let frame):
        if case .publish(let publish) = frame { _ = publish.position.validationError(now: 1_763_757_670_000) }
        guard let encoded = try? WireJSON.encode(frame) else { fatalError("an accepted frame does not encode") }
        guard case .success(let again) = decoder.decode(Array(encoded)), again == frame else {
            fatalError("round trip changed the frame: \(String(decoding: encoded, as: UTF8.self))")
        }
    }
    return 0
}
