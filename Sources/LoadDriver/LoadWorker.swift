import Atomics
import BrokerProtocol
import DeterministicRandom
import FleetSimulation
import Foundation
import NIOCore
import NIOPosix

/// One bench worker: opens the connections of its ``WorkerPlan`` on one event loop, reports `ready`, makes the
/// load on `go`, reports its counts, and closes everything on `close`.
///
/// `tracker-sim bench` runs several as child processes (`tracker-sim worker`), each under the per-process limit
/// on open files; tests run one in-process. Either way it speaks ``WorkerMessage``s and ``WorkerCommand``s.
public struct LoadWorker: Sendable {
    public let plan: WorkerPlan
    public let secret: String
    public let emit: @Sendable (WorkerMessage) -> Void

    public init(plan: WorkerPlan, secret: String, emit: @escaping @Sendable (WorkerMessage) -> Void) {
        self.plan = plan
        self.secret = secret
        self.emit = emit
    }

    private struct Job: Sendable {
        /// The client's JWT; `nil` on the baseline, which has no auth.
        var token: String?
        var role: LoadRole
        var connection: Int
        /// The baseline's channel for this connection (the broker's channel comes from the donation instead).
        var channel: String
    }

    /// A publisher's state, on its event loop.
    private struct Publisher {
        var index: Int
        /// The channel it publishes on, written into baseline frames.
        var channel: String
        var sent = 0
        var rng: SeededRandom
        var motion: MotionModel?
        var motionStart = ContinuousClock.now
    }

    /// Runs the plan, taking commands from `commands`, until `close` (or the end of the commands).
    public func run(commands: AsyncStream<WorkerCommand>) async {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            try await work(on: group, commands: commands)
        } catch {
            emit(WorkerMessage(kind: .failed, worker: plan.worker, message: "\(error)"))
        }
        try? await group.shutdownGracefully()
    }

    private func work(on group: MultiThreadedEventLoopGroup, commands: AsyncStream<WorkerCommand>) async throws {
        let loop = group.next()
        let stats = LoadStats()
        // The baseline has no auth: no tokens, and no secret needed.
        let minter = plan.server == .broker ? try await TokenMinter(secret: secret) : nil
        let ttl = plan.tokenTTL
        func token(_ identity: String) async throws -> String? { try await minter?.token(identity: identity, ttlSeconds: ttl) }
        var commands = commands.makeAsyncIterator()
        let names = plan.names
        var jobs: [Job] = []
        var connection = 0
        for index in plan.subscribers {
            let channel = names.volunteer(plan.scenario.volunteer(forDonation: index))
            jobs.append(Job(token: try await token(names.donor(index)), role: .subscriber(donation: names.donation(index)), connection: connection, channel: channel))
            connection += 1
        }
        for index in plan.publishers {
            jobs.append(Job(token: try await token(names.volunteer(index)), role: .publisher, connection: connection, channel: names.volunteer(index)))
            connection += 1
        }
        var stormJobs: [Job] = []
        for index in plan.storm {
            let identity = names.stormIdentity(index)
            stormJobs.append(Job(token: try await token(identity), role: .plain, connection: connection, channel: identity))
            connection += 1
        }

        var channels = await connectAll(jobs, loop: loop, stats: stats)
        let publishers = channels.filter { $0.role == .publisher }.map(\.channel)
        emit(WorkerMessage(kind: .ready, worker: plan.worker, connected: stats.value(.connected)))

        guard await commands.next() == .go else { return await close(channels.map(\.channel)) }
        var result: WorkerResult
        switch plan.scenario {
        case .connect:
            let start = LatencyStamp.nowMicroseconds()
            channels += await connectAll(stormJobs, loop: loop, stats: stats)
            let end = LatencyStamp.nowMicroseconds()
            result = stats.result()
            result.stormStart = start
            result.stormEnd = end
        case .idle:
            try? await Task.sleep(for: .milliseconds(Int64(plan.duration * 1000)))
            result = stats.result()
        case .pairs, .fanout, .fleet:
            let tasks = startPublishing(publishers, stats: stats)
            try? await Task.sleep(for: .milliseconds(Int64(plan.duration * 1000)))
            for task in tasks { task.cancel() }
            await drain(stats)
            result = stats.result()
        }
        emit(WorkerMessage(kind: .result, worker: plan.worker, connected: stats.value(.connected), result: result))
        while let command = await commands.next(), command != .close {}
        await close(channels.map(\.channel))
    }

    /// Opens `jobs` with at most ``WorkerPlan/concurrency`` handshakes in flight; failures are counted, not thrown.
    private func connectAll(_ jobs: [Job], loop: any EventLoop, stats: LoadStats) async -> [(role: LoadRole, channel: any Channel)] {
        let lanes = max(1, min(plan.concurrency, jobs.count))
        let done = AttemptCounter()
        let emit = emit, worker = plan.worker
        return await withTaskGroup(of: [(role: LoadRole, channel: any Channel)].self) { group in
            for lane in 0..<lanes {
                group.addTask {
                    var opened: [(role: LoadRole, channel: any Channel)] = []
                    var index = lane
                    while index < jobs.count {
                        let job = jobs[index]
                        var target = plan.target
                        if plan.server == .baseline { target.path = BenchServer.baselinePath(target.path, channel: job.channel) }
                        do {
                            let channel = try await LoadClient.connect(
                                on: loop, target: target, source: plan.sourceAddress(forConnection: job.connection), token: job.token,
                                role: job.role, stats: stats, server: plan.server
                            ).get()
                            opened.append((job.role, channel))
                        } catch {
                            stats.add(.connectFailures)
                            stats.error("connect", detail: "\(error)")
                        }
                        if done.count.wrappingIncrementThenLoad(by: 1, ordering: .relaxed) % 1_000 == 0 {
                            emit(WorkerMessage(kind: .progress, worker: worker, connected: stats.value(.connected)))
                        }
                        index += lanes
                    }
                    return opened
                }
            }
            var all: [(role: LoadRole, channel: any Channel)] = []
            for await opened in group { all += opened }
            return all
        }
    }

    /// Schedules each publisher's fixes on its event loop, spread evenly over one period, at a fixed rate
    /// (``FixedRateTicker``: a late send does not push the publisher's later ones).
    private func startPublishing(_ channels: [any Channel], stats: LoadStats) -> [FixedRateTicker] {
        guard plan.publishRate > 0 else { return [] }
        let period = TimeAmount.nanoseconds(Int64(1e9 / plan.publishRate))
        let limit = plan.positionsPerPublisher
        let area = plan.area
        let fleet = plan.scenario == .fleet
        let baseline = plan.server == .baseline
        let names = plan.names
        let root = SeededRandom(seed: plan.seed)
        let start = NIODeadline.now()
        return channels.enumerated().map { offset, channel in
            let index = plan.publishers.lowerBound + offset
            let phase = TimeAmount.nanoseconds(period.nanoseconds * Int64(offset) / Int64(max(1, channels.count)))
            let publisher = Publisher(index: index, channel: names.volunteer(index), rng: root.fork(UInt64(index)))
            let box = NIOLoopBoundBox.makeBoxSendingValue(publisher, eventLoop: channel.eventLoop)
            return FixedRateTicker.start(on: channel.eventLoop, first: start + phase, period: period) { task in
                if let limit, box.value.sent >= limit { return task.cancel() }
                let fix = fleet ? Self.routeFix(&box.value, area: area) : Self.nearbyFix(&box.value.rng, area: area)
                let micros = LatencyStamp.nowMicroseconds()
                let (timestamp, accuracy) = LatencyStamp.stamp(micros)
                var position = fix
                position.timestamp = timestamp
                position.accuracy = accuracy
                box.value.sent += 1
                stats.add(.published)
                // The baseline forwards what it gets, so its publisher sends the frame the broker would deliver,
                // its seq counted here as the broker counts a donor's view.
                let frame =
                    baseline
                    ? LoadClient.baselineFrame(position, channel: box.value.channel, seq: Int64(box.value.sent), allocator: channel.allocator)
                    : LoadClient.publishFrame(position, allocator: channel.allocator)
                channel.writeAndFlush(frame, promise: nil)
            }
        }
    }

    /// A point near the area's centre (pairs and fan-out: where it is does not matter).
    private static func nearbyFix(_ rng: inout SeededRandom, area: Area) -> Position {
        let b = area.bounds
        let centre = GeoPoint(lat: (b.south + b.north) / 2, lon: (b.west + b.east) / 2)
        let point = centre.moved(bearing: rng.uniform(0...359), distance: rng.uniform(0...2_000))
        return Position(lat: (point.lat * 1e6).rounded() / 1e6, lon: (point.lon * 1e6).rounded() / 1e6, speed: 8, heading: 90, timestamp: 1)
    }

    /// The next fix of a volunteer driving street-like routes in real time, one route after another.
    private static func routeFix(_ publisher: inout Publisher, area: Area) -> Position {
        let elapsed = ContinuousClock.now - publisher.motionStart
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if publisher.motion == nil || seconds > publisher.motion?.duration ?? 0 {
            let from = publisher.motion?.route.end ?? area.randomPoint(using: &publisher.rng)
            let to = area.point(near: from, minimum: 1_500, maximum: 5_000, using: &publisher.rng)
            let route = Route.manhattan(from: from, to: to, gridBearing: area.gridBearing ?? 0, using: &publisher.rng)
            publisher.motion = MotionModel(route: route, using: &publisher.rng)
            publisher.motionStart = .now
            return routeFix(&publisher, area: area)
        }
        guard let motion = publisher.motion else { return nearbyFix(&publisher.rng, area: area) }
        return motion.fix(at: seconds, timestamp: 1, using: &publisher.rng)
    }

    /// Waits until deliveries stop arriving (one quiet second), at most 10 seconds.
    private func drain(_ stats: LoadStats) async {
        var last = stats.value(.deliveries)
        var quiet = 0
        for _ in 0..<40 {
            try? await Task.sleep(for: .milliseconds(250))
            let now = stats.value(.deliveries)
            quiet = now == last ? quiet + 1 : 0
            last = now
            if quiet >= 4 { return }
        }
    }

    private func close(_ channels: [any Channel]) async {
        for chunk in stride(from: 0, to: channels.count, by: 500) {
            let batch = channels[chunk..<min(chunk + 500, channels.count)]
            for channel in batch { channel.close(promise: nil) }
            for channel in batch { try? await channel.closeFuture.get() }
        }
        emit(WorkerMessage(kind: .closed, worker: plan.worker))
    }
}

/// Handshakes attempted so far, shared by the connecting lanes for progress reports.
private final class AttemptCounter: Sendable {
    let count = ManagedAtomic<Int>(0)
}
