import Benchmark
import BrokerProtocol

/// A volunteer's publish as the phone sends it (all optional fields present, with an `id` to acknowledge).
let publishFrame =
    #"{"type":"publish","id":"p-42","position":{"lat":-34.6037,"lon":-58.3816,"accuracy":5.437,"speed":8.5,"heading":270,"timestamp":1795000000000}}"#

/// A donor's subscribe by donation, as the tracking page sends it.
let subscribeFrame = #"{"type":"subscribe","id":"s-1","donation":"d-20261122-0042"}"#

/// `ClientFrameDecoder.decode` on a publish and a subscribe frame (the reader's bytes are the text frame's UTF-8
/// view, as in `WebSocketSession`), and `PositionFrameEncoder.encode` of the frame every subscriber receives.
func registerFrameBenchmarks() {
    let decoder = ClientFrameDecoder()
    Benchmark("ClientFrameDecoder.publish", configuration: MicroConfiguration.configuration(iterations: 20_000)) { (benchmark: Benchmark, text: String) in
        for _ in benchmark.scaledIterations {
            blackHole(decoder.decode(text.utf8))
        }
    } setup: {
        guard case .success(.publish) = decoder.decode(publishFrame.utf8) else {
            throw BenchmarkSetupError(description: "the publish frame does not decode as a publish")
        }
        return publishFrame
    }

    Benchmark("ClientFrameDecoder.subscribe", configuration: MicroConfiguration.configuration(iterations: 20_000)) { (benchmark: Benchmark, text: String) in
        for _ in benchmark.scaledIterations {
            blackHole(decoder.decode(text.utf8))
        }
    } setup: {
        guard case .success(.subscribe) = decoder.decode(subscribeFrame.utf8) else {
            throw BenchmarkSetupError(description: "the subscribe frame does not decode as a subscribe")
        }
        return subscribeFrame
    }

    let position = Position(lat: -34.6200, lon: -58.4400, accuracy: 5.437, speed: 8.5, heading: 270, timestamp: 1_795_000_000_000)
    Benchmark("PositionFrameEncoder.encode", configuration: MicroConfiguration.configuration(iterations: 50_000)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(PositionFrameEncoder.encode(channel: "volunteer@example.org", seq: 1_795_000_000_000_042, position: position))
        }
    }
}
