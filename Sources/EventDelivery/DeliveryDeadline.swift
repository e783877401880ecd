import NIOCore

/// Runs an operation with a deadline, cancelling it when the time runs out.
enum DeliveryDeadline {
    /// Thrown when `run(until:_:)`'s deadline passed first.
    struct Exceeded: Error {}

    /// `operation`'s result, or `Exceeded` once `deadline` has passed (the operation is then cancelled).
    static func run<Result: Sendable>(until deadline: NIODeadline, _ operation: @escaping @Sendable () async throws -> Result)
        async throws -> Result
    {
        try await withThrowingTaskGroup(of: Result.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                let remaining = deadline - .now()
                try await Task.sleep(nanoseconds: UInt64(max(0, remaining.nanoseconds)))
                throw Exceeded()
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw Exceeded() }
            return first
        }
    }
}
