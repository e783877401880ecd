import Benchmark
import BrokerBenchmarkFixtures

/// The hub's publish -> fan-out to 1, 100 and 1,000 subscribed donors: gate, encode once, keep in the history,
/// queue the same bytes in every subscriber's outbox; then each outbox is drained as its socket writer would
/// drain it (`Outbox.takeForSocket`), so no outbox fills up and conflates.
func registerHubBenchmarks() {
    for subscribers in [1, 100, 1_000] {
        Benchmark(
            "Hub.publish.\(subscribers)",
            configuration: MicroConfiguration.configuration(iterations: subscribers == 1 ? 20_000 : 2_000)
        ) { (benchmark: Benchmark, fixture: PublishFixture) in
            for _ in benchmark.scaledIterations {
                blackHole(fixture.publishOnce())
            }
        } setup: {
            try PublishFixture(subscribers: subscribers)
        }
    }
}
