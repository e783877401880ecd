// hot-path: the broker's publish -> fan-out, run for `scripts/callgrind` under `valgrind --tool=callgrind`.
//
//   hot-path fanout [--subscribers 1000] [--positions 200] [--warmup 64]
//   hot-path pairs  [--pairs 1000] [--rounds 20] [--warmup 64]
//   hot-path decode [--frames 20000]
//   hot-path delivery [--subscribers 1000] [--positions 200] [--warmup 64]
//   hot-path delivery-pairs [--rounds 20000] [--warmup 64]
//   hot-path verify [--tokens 2000] [--warmup 64]
//   hot-path accept [--connections 2000] [--warmup 64]
//   hot-path nio-frame | nio-bytes [--subscribers 1000] [--positions 200]
//
// Every run builds what it needs, warms it up, then does the measured work inside one function whose name starts
// with `callgrindMeasured` (scripts/callgrind collects only inside it: `--collect-atstart=no
// --toggle-collect=*callgrindMeasured*`), and prints `deliveries N` (the frames that reached a subscriber,
// counted by the run, not assumed) so that the script divides the instructions by what was actually delivered.
// Synchronous on purpose: valgrind 3.19 dies on Swift's async main (libdispatch's main thread).

import Foundation

let options = RunOptions(CommandLine.arguments.dropFirst())
let deliveries: Int
do {
    switch options.scenario {
    case "fanout":
        deliveries = try BrokerRuns.fanOut(
            subscribers: options.int("subscribers", 1_000), positions: options.int("positions", 200), warmup: options.int("warmup", 64))
    case "pairs":
        deliveries = try BrokerRuns.pairs(pairs: options.int("pairs", 1_000), rounds: options.int("rounds", 20), warmup: options.int("warmup", 64))
    case "delivery":
        deliveries = try DeliveryRuns.fanOut(
            subscribers: options.int("subscribers", 1_000), positions: options.int("positions", 200), warmup: options.int("warmup", 64))
    case "delivery-pairs":
        deliveries = try DeliveryRuns.pairs(rounds: options.int("rounds", 20_000), warmup: options.int("warmup", 64))
    case "decode":
        deliveries = try BrokerRuns.decode(frames: options.int("frames", 20_000))
    case "verify":
        deliveries = try BrokerRuns.verify(tokens: options.int("tokens", 2_000), warmup: options.int("warmup", 64))
    case "accept":
        deliveries = try AcceptRuns.accept(connections: options.int("connections", 2_000), warmup: options.int("warmup", 64))
    case "nio-frame":
        deliveries = try TransportRuns.fanOut(
            subscribers: options.int("subscribers", 1_000), positions: options.int("positions", 200), framedByEncoder: true)
    case "nio-bytes":
        deliveries = try TransportRuns.fanOut(
            subscribers: options.int("subscribers", 1_000), positions: options.int("positions", 200), framedByEncoder: false)
    default:
        RunOptions.fail("unknown scenario \(options.scenario) (fanout, pairs, decode, delivery, delivery-pairs, verify, accept, nio-frame, nio-bytes)")
    }
} catch {
    // A run that did not deliver what it should has no figure: say why and exit 1 (scripts/callgrind stops there).
    FileHandle.standardError.write(Data("hot-path: \(options.scenario): \(error)\n".utf8))
    exit(1)
}
print("deliveries \(deliveries)")
