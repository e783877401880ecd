/// Starts a child task of the group ``withChildTasks(_:)`` runs.
package typealias AddChildTask = (@escaping @Sendable () async -> Void) -> Void

/// Runs `body` with a task group that lets each child go as it finishes, so a long-lived group that starts a child
/// per connection or per delivery does not grow.
///
/// `body` gets `add`, which starts a child, and `cancelAll`. Where the platform has discarding task groups (Linux,
/// macOS 14, iOS 17) that is what runs; on macOS 13 and iOS 16, the package's floor, a plain task group runs
/// instead, which keeps each finished child's record until the group ends: fine for a broker built on a
/// development Mac, and the only way to build there at all.
package func withChildTasks(_ body: (_ add: AddChildTask, _ cancelAll: () -> Void) async -> Void) async {
    if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
        await withDiscardingTaskGroup { group in
            await body({ group.addTask(operation: $0) }, { group.cancelAll() })
        }
    } else {
        await withTaskGroup(of: Void.self) { group in
            await body({ group.addTask(operation: $0) }, { group.cancelAll() })
        }
    }
}
