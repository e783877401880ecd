import Benchmark
import BrokerBenchmarkFixtures

/// `TokenVerifier.verify` of an HS256 token, as the broker checks every WebSocket handshake: signature, `exp`,
/// the identity claim.
func registerTokenBenchmarks() {
    Benchmark("TokenVerifier.HS256", configuration: MicroConfiguration.configuration(iterations: 10_000)) { (benchmark: Benchmark, fixture: TokenFixture) async in
        for _ in benchmark.scaledIterations {
            blackHole(await fixture.verifyOnce())
        }
    } setup: {
        let fixture = try await TokenFixture()
        guard await fixture.verifyOnce() == "volunteer@example.org" else {
            throw BenchmarkSetupError(description: "the broker refused the benchmark's own token")
        }
        return fixture
    }
}
