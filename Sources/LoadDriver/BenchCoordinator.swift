import BrokerProtocol
import FleetSimulation
import Foundation

/// Runs one bench scenario: creates the donations it needs through the backend API, spreads the connections
/// over worker processes and source addresses, samples the broker, makes the load, and writes the report.
///
/// Against the baseline (``BenchServer/baseline``) the same connections make the same load, with no donations,
/// tokens or subscriptions: each connection joins its channel through its URL.
public struct BenchCoordinator: Sendable {
    public let configuration: BenchConfiguration
    /// Progress lines for the person waiting.
    public let log: @Sendable (String) -> Void

    public init(configuration: BenchConfiguration, log: @escaping @Sendable (String) -> Void) {
        self.configuration = configuration
        self.log = log
    }

    /// The shape of the run, derived from the scenario.
    private struct Shape {
        var donations = 0
        var subscribers = 0
        var publishers = 0
        var storm = 0
        var publishRate = 0.0
        var positionsPerPublisher: Int?
        var duration = 0.0
    }

    private func shape() -> Shape {
        let c = configuration
        var shape = Shape(duration: c.duration)
        switch c.scenario {
        case .idle:
            shape.donations = c.connections
            shape.subscribers = c.connections
        case .pairs:
            shape.donations = c.pairs
            shape.subscribers = c.pairs
            shape.publishers = c.pairs
            shape.publishRate = c.rate / Double(c.pairs)
        case .fanout:
            shape.donations = c.watchers
            shape.subscribers = c.watchers
            shape.publishers = 1
            shape.publishRate = c.rate
            shape.positionsPerPublisher = c.positions
            shape.duration = Double(c.positions) / c.rate + 0.2
        case .fleet:
            shape.donations = c.volunteers
            shape.subscribers = c.volunteers
            shape.publishers = c.volunteers
            shape.publishRate = 1 / c.interval
        case .connect:
            shape.storm = c.connections
            shape.duration = 0
        }
        return shape
    }

    /// Runs the scenario and returns its report.
    /// - Throws: ``SimulationError`` when the settings are out of bounds, the broker cannot be reached, or the
    ///   workers fail.
    public func run() async throws -> BenchReport {
        let c = configuration
        if let problem = c.problem { throw SimulationError(problem) }
        let target = try c.target()
        let backend = c.server == .broker ? try BackendClient(baseURL: c.apiURL, backendKey: c.backendKey) : nil
        // Shut down on every path: its connections are not to outlive the run.
        do {
            let report = try await run(target: target, backend: backend)
            await backend?.shutdown()
            return report
        } catch {
            await backend?.shutdown()
            throw error
        }
    }

    private func run(target: LoadClient.Target, backend: BackendClient?) async throws -> BenchReport {
        let c = configuration
        let shape = shape()
        let names = BenchNames(runID: c.runID)
        let startedAt = ISO8601DateFormatter().string(from: Date())
        let onBroker = backend != nil
        if onBroker { _ = try await TokenMinter(secret: c.jwtSecret) }
        let sampler = c.brokerPID.map(ProcSampler.init(pid:))
        _ = try sampler?.sample()

        if let backend, shape.donations > 0 {
            log("creating \(shape.donations) donation(s) through the backend API...")
            try await forEachDonation(shape.donations, backend: backend) { index in
                try await backend.put(names.donation(index), Self.donation(index, scenario: c.scenario, names: names, area: c.area))
            }
        }
        let before = try sampler?.sample()

        let plans = self.plans(shape: shape, names: names, target: target)
        let (messages, sink) = AsyncStream.makeStream(of: WorkerMessage.self, bufferingPolicy: .bufferingNewest(10_000))
        var links: [any WorkerLink] = []
        defer { for link in links { link.terminate() } }
        var environment = ProcessInfo.processInfo.environment
        environment["LOCATION_BROKER_JWT_SECRET"] = c.jwtSecret
        for plan in plans {
            if c.procs == 0 {
                links.append(InProcessWorkerLink(plan: plan, secret: c.jwtSecret, messages: sink))
            } else {
                guard let executable = c.executable else { throw SimulationError("the bench cannot find its own executable to start workers") }
                links.append(try ProcessWorkerLink(executable: executable, plan: plan, environment: environment, messages: sink))
            }
        }
        var inbox = Inbox(messages: messages, sink: sink, log: log)
        let connections = shape.subscribers + shape.publishers
        log("connecting \(connections) connection(s) from \(plans.count) worker(s)...")
        _ = try await inbox.collect(.ready, from: plans.count, within: 60 + Double(connections + shape.storm) / 100)
        let connected = try sampler?.sample()

        log(c.scenario == .connect ? "load: a storm of \(shape.storm) connections..." : "load: \(c.scenario.rawValue) for \(String(format: "%.1f", shape.duration)) s...")
        let loadStart = ContinuousClock.now
        for link in links { link.send(.go) }
        let results = try await inbox.collect(.result, from: plans.count, within: shape.duration + 60 + Double(shape.storm) / 100)
        let loadSeconds = Self.seconds(ContinuousClock.now - loadStart)
        let after = try sampler?.sample()

        for link in links { link.send(.close) }
        _ = try? await inbox.collect(.closed, from: plans.count, within: 60)
        for link in links { await link.wait() }
        links.removeAll()

        if let backend, shape.donations > 0 {
            log("deleting the bench's donations...")
            try? await forEachDonation(shape.donations, backend: backend) { index in
                _ = try await backend.delete(names.donation(index))
            }
        }

        var merged = WorkerResult()
        for message in results { if let result = message.result { merged.merge(result) } }
        var report = BenchReport(
            target: c.server, startedAt: startedAt, command: c.command, machine: .current(),
            parameters: parameters(shape: shape, plans: plans), loadSeconds: loadSeconds,
            results: Self.results(merged, scenario: c.scenario, shape: shape, loadSeconds: loadSeconds))
        if let sampler, let before, let connected, let after {
            report.broker = usage(pid: sampler.pid, before: before, connected: connected, after: after, results: report.results, loadSeconds: loadSeconds)
        }
        return report
    }

    /// The donation of bench donor `index`: trackable from the start, its home far from where volunteers drive
    /// (so no arrival fires), the volunteer the scenario gives it.
    static func donation(_ index: Int, scenario: BenchScenario, names: BenchNames, area: Area) -> DonationUpdate {
        let place = area.institutions.first.map { Institution(lat: $0.lat, lon: $0.lon, name: $0.name) }
            ?? Institution(lat: area.bounds.north, lon: area.bounds.east, name: "Institution")
        return DonationUpdate(
            donor: names.donor(index), volunteer: names.volunteer(scenario.volunteer(forDonation: index)), state: .beingLookedFor,
            home: Home(lat: area.bounds.south - 0.5, lon: area.bounds.west - 0.5, label: "bench"), institution: place)
    }

    /// Runs `body` for donations `0..<count`, 16 at a time.
    private func forEachDonation(_ count: Int, backend: BackendClient, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
        let lanes = min(16, count)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<lanes {
                group.addTask {
                    var index = lane
                    while index < count {
                        try await body(index)
                        index += lanes
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Splits the connections over the workers, each with its own source addresses.
    private func plans(shape: Shape, names: BenchNames, target: LoadClient.Target) -> [WorkerPlan] {
        let c = configuration
        let total = shape.subscribers + shape.publishers + shape.storm
        let needed = (total + BenchConfiguration.connectionsPerWorker - 1) / BenchConfiguration.connectionsPerWorker
        let count = max(1, max(c.procs, needed))
        func slice(_ n: Int, _ worker: Int) -> Range<Int> {
            (n * worker / count)..<(n * (worker + 1) / count)
        }
        var nextAddress = 2
        return (0..<count).map { worker in
            let subscribers = slice(shape.subscribers, worker)
            // Pairs stay in one worker; the fan-out's one publisher goes with worker 0.
            let publishers = c.scenario == .fanout ? (worker == 0 ? 0..<1 : 0..<0) : slice(shape.publishers, worker)
            let storm = slice(shape.storm, worker)
            let connections = subscribers.count + publishers.count + storm.count
            var addresses: [String] = []
            if BenchConfiguration.isLoopback(target.host) {
                let needed = max(1, (connections + c.perAddress - 1) / c.perAddress)
                addresses = (0..<needed).map { "127.0.0.\(min(254, nextAddress + $0))" }
                nextAddress += needed
            }
            return WorkerPlan(
                worker: worker, scenario: c.scenario, names: names, target: target, sourceAddresses: addresses, perAddress: c.perAddress,
                subscribers: subscribers, publishers: publishers, storm: storm, publishRate: shape.publishRate,
                positionsPerPublisher: shape.positionsPerPublisher, duration: shape.duration, area: c.area, seed: c.seed,
                concurrency: c.concurrency, tokenTTL: Int64(shape.duration) + 3_600, server: c.server)
        }
    }

    private func parameters(shape: Shape, plans: [WorkerPlan]) -> BenchReport.Parameters {
        let c = configuration
        let s = c.scenario
        return BenchReport.Parameters(
            scenario: s, connections: s == .idle || s == .connect ? c.connections : nil, pairs: s == .pairs ? c.pairs : nil,
            rate: s == .pairs || s == .fanout ? c.rate : nil, watchers: s == .fanout ? c.watchers : nil, positions: s == .fanout ? c.positions : nil,
            volunteers: s == .fleet ? c.volunteers : nil, interval: s == .fleet ? c.interval : nil,
            duration: s == .fanout || s == .connect ? nil : c.duration, procs: c.procs == 0 ? 0 : plans.count, sourceAddresses: plans.flatMap(\.sourceAddresses))
    }

    private static func results(_ merged: WorkerResult, scenario: BenchScenario, shape: Shape, loadSeconds: Double) -> BenchReport.Results {
        var results = BenchReport.Results()
        results.connections = merged.connected
        results.connectFailures = merged.connectFailures
        results.published = merged.published
        let refusals = ["rate-limited", "invalid-position", "forbidden", "bad-request"]
        results.publishErrors = merged.errors.filter { refusals.contains($0.key) }
        let accepted = merged.published - results.publishErrors.values.reduce(0, +)
        results.expectedDeliveries = max(0, accepted) * scenario.watchersPerChannel(subscribers: shape.subscribers)
        results.deliveries = merged.deliveries
        results.lost = max(0, results.expectedDeliveries - merged.deliveries)
        results.gaps = merged.gaps
        results.duplicates = merged.duplicates
        results.closedByServer = merged.closedByServer
        results.errors = merged.errors
        results.firstFailure = merged.firstFailure
        if merged.latency.count > 0 {
            results.latency = merged.latency.summary
            results.latencyBySecond = merged.latencyTimeline.summary
        }
        if merged.connectLatency.count > 0 { results.connectLatency = merged.connectLatency.summary }
        if scenario != .idle && scenario != .connect {
            results.deliveriesPerSecond = (Double(merged.deliveries) / max(0.001, min(loadSeconds, shape.duration)) * 10).rounded() / 10
        }
        if let start = merged.stormStart, let end = merged.stormEnd, end > start {
            let seconds = Double(end - start) / 1e6
            results.connectSeconds = (seconds * 1000).rounded() / 1000
            results.connectionsPerSecond = (Double(merged.connected) / seconds).rounded()
        }
        return results
    }

    private func usage(
        pid: Int32, before: ProcSampler.Sample, connected: ProcSampler.Sample, after: ProcSampler.Sample, results: BenchReport.Results,
        loadSeconds: Double
    ) -> BenchReport.BrokerUsage {
        let cpu = after.cpuSeconds - connected.cpuSeconds
        var usage = BenchReport.BrokerUsage(
            pid: pid, rssBeforeKB: before.rssKB, rssConnectedKB: connected.rssKB, rssAfterKB: after.rssKB, kbPerConnection: nil,
            cpuSeconds: (cpu * 1000).rounded() / 1000, cpuCores: (cpu / max(0.001, loadSeconds) * 100).rounded() / 100)
        switch configuration.scenario {
        case .connect:
            if results.connections > 0 {
                usage.kbPerConnection = (Double(after.rssKB - before.rssKB) / Double(results.connections) * 100).rounded() / 100
                usage.cpuMicrosecondsPerConnection = (cpu * 1e6 / Double(results.connections) * 10).rounded() / 10
            }
        default:
            if results.connections > 0 {
                usage.kbPerConnection = (Double(connected.rssKB - before.rssKB) / Double(results.connections) * 100).rounded() / 100
            }
            if results.deliveries > 0 { usage.cpuMicrosecondsPerDelivery = (cpu * 1e6 / Double(results.deliveries) * 100).rounded() / 100 }
        }
        return usage
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// The coordinator's reading of the workers' messages, with deadlines.
private struct Inbox {
    var iterator: AsyncStream<WorkerMessage>.Iterator
    let sink: AsyncStream<WorkerMessage>.Continuation
    let log: @Sendable (String) -> Void

    init(messages: AsyncStream<WorkerMessage>, sink: AsyncStream<WorkerMessage>.Continuation, log: @escaping @Sendable (String) -> Void) {
        self.iterator = messages.makeAsyncIterator()
        self.sink = sink
        self.log = log
    }

    /// Waits for `kind` from `count` workers, logging progress.
    /// - Throws: when a worker fails or the deadline passes first.
    mutating func collect(_ kind: WorkerMessage.Kind, from count: Int, within seconds: Double) async throws -> [WorkerMessage] {
        let sink = sink
        let watchdog = Task {
            try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
            sink.yield(WorkerMessage(kind: .failed, worker: -1, message: "the workers did not report \(kind.rawValue) within \(Int(seconds)) s"))
        }
        defer { watchdog.cancel() }
        var got: [Int: WorkerMessage] = [:]
        var progress: [Int: Int] = [:]
        var lastLog = ContinuousClock.now
        while got.count < count, let message = await iterator.next() {
            switch message.kind {
            case kind:
                got[message.worker] = message
            case .failed:
                throw SimulationError("bench worker \(message.worker): \(message.message ?? "failed")")
            case .progress:
                progress[message.worker] = message.connected ?? 0
                if ContinuousClock.now - lastLog > .seconds(2) {
                    log("  \(progress.values.reduce(0, +)) connected...")
                    lastLog = .now
                }
            default:
                break
            }
        }
        guard got.count == count else { throw SimulationError("the workers stopped before reporting \(kind.rawValue)") }
        return got.keys.sorted().compactMap { got[$0] }
    }
}
