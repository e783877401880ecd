import Foundation
import NIOConcurrencyHelpers

/// How long a test waits for something by default before it fails, saying what it waited for.
let defaultWait: Duration = .seconds(15)

/// A wait that ran out: says what the test waited for.
struct WaitTimeout: Error, CustomStringConvertible {
    let description: String

    init(_ what: String, deadline: ContinuousClock.Instant) {
        description = "timed out waiting until \(what) (deadline passed \(ContinuousClock.now - deadline) ago)"
    }
}

/// Retries `condition` every `poll` until it holds; once `deadline` has passed, throws ``WaitTimeout`` naming
/// `what`. The one polling wait of the tests: none of them loops without a bound.
func waitUntil(
    _ what: String, deadline: ContinuousClock.Instant = .now + defaultWait, poll: Duration = .milliseconds(50),
    _ condition: () async throws -> Bool
) async throws {
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw WaitTimeout(what, deadline: deadline) }
        try await Task.sleep(for: poll)
    }
}

/// Runs `operation` and returns what it returns; once `deadline` has passed, throws ``WaitTimeout`` naming `what`
/// instead, cancels the operation and leaves it behind. For waits that could otherwise never end: a stream
/// nobody finishes, a continuation nobody resumes, a task that ignores cancellation.
func withDeadline<T: Sendable>(
    _ what: String, deadline: ContinuousClock.Instant = .now + defaultWait, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = Race<T>()
    return try await withCheckedThrowingContinuation { continuation in
        race.begin(continuation)
        let timer = Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            if race.finish(.failure(WaitTimeout(what, deadline: deadline)), timedOut: true) { race.cancelWork() }
        }
        race.setWork(
            Task {
                let result: Result<T, any Error>
                do { result = .success(try await operation()) } catch { result = .failure(error) }
                if race.finish(result) { timer.cancel() }
            })
    }
}

/// Runs a blocking call (a socket read, a wait for a child process) on a thread of its own, never on the
/// cooperative pool that runs the async tests, and fails naming `what` once `deadline` has passed.
func blocking<T: Sendable>(
    _ what: String, deadline: ContinuousClock.Instant = .now + defaultWait, _ body: @escaping @Sendable () throws -> T
) async throws -> T {
    try await withDeadline(what, deadline: deadline) {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
}

extension Task where Failure == Never {
    /// The task's value; once `deadline` has passed, the task is cancelled and ``WaitTimeout`` names `what`.
    @discardableResult
    func value(waitingFor what: String, deadline: ContinuousClock.Instant = .now + defaultWait) async throws -> Success {
        do {
            return try await withDeadline(what, deadline: deadline) { await self.value }
        } catch {
            cancel()
            throw error
        }
    }
}

extension Task where Failure == any Error {
    /// The task's value; once `deadline` has passed, the task is cancelled and ``WaitTimeout`` names `what`.
    @discardableResult
    func value(waitingFor what: String, deadline: ContinuousClock.Instant = .now + defaultWait) async throws -> Success {
        do {
            return try await withDeadline(what, deadline: deadline) { try await self.value }
        } catch let timeout as WaitTimeout {
            cancel()
            throw timeout
        }
    }
}

/// The continuation of ``withDeadline(_:deadline:_:)``, resumed by whichever of the operation and the timer ends
/// first.
private final class Race<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var work: Task<Void, Never>?
        var timedOut = false
    }

    private let state = NIOLockedValueBox(State())

    func begin(_ continuation: CheckedContinuation<T, any Error>) {
        state.withLockedValue { $0.continuation = continuation }
    }

    func setWork(_ work: Task<Void, Never>) {
        let cancel = state.withLockedValue { state -> Bool in
            state.work = work
            return state.timedOut
        }
        if cancel { work.cancel() }
    }

    /// Resumes the caller with `result` unless the other side already did; returns whether it was first.
    func finish(_ result: Result<T, any Error>, timedOut: Bool = false) -> Bool {
        let continuation = state.withLockedValue { state -> CheckedContinuation<T, any Error>? in
            defer { state.continuation = nil }
            if timedOut, state.continuation != nil { state.timedOut = true }
            return state.continuation
        }
        continuation?.resume(with: result)
        return continuation != nil
    }

    func cancelWork() {
        state.withLockedValue { $0.work }?.cancel()
    }
}
