import Dispatch
import BrokerBenchmarkFixtures
import Synchronization

/// Builds a fixture whose set-up is async (jwt-kit's key collection is an actor) from the synchronous main: the
/// set-up runs as a task on the cooperative pool while the main thread waits, before anything is measured.
enum FixtureLoader {
    static func make<Fixture: Sendable>(_ build: @escaping @Sendable () async throws -> Fixture) throws -> Fixture {
        let result = Mutex<Result<Fixture, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let made: Result<Fixture, any Error>
            do { made = .success(try await build()) } catch { made = .failure(error) }
            result.withLock { $0 = made }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }
}
