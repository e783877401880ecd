import BrokerProtocol
import DeterministicRandom

/// How one simulated donation ends.
public enum DonationFate: String, Codable, Sendable, CaseIterable {
    /// The whole trip: assigned, picked up, taken to the institution, delivered.
    case delivered
    /// The donor cancels after a volunteer was assigned, before the trip starts.
    case cancelledBeforeStart
    /// The donor cancels while the volunteer is on the way to the home.
    case cancelledOnTheWay
    /// The volunteer drops the donation on the way to the home; nobody else takes it and the donor cancels.
    case volunteerDrops
    /// Cancelled at the door, while the hand-over waits for confirmation.
    case cancelledAtHandover

    /// Draws a fate with the shares seen in practice: most donations arrive.
    public static func draw(using rng: inout SeededRandom) -> DonationFate {
        let roll = rng.uniform(0...1)
        switch roll {
        case ..<0.05: return .cancelledBeforeStart
        case ..<0.12: return .cancelledOnTheWay
        case ..<0.20: return .volunteerDrops
        case ..<0.25: return .cancelledAtHandover
        default: return .delivered
        }
    }
}

/// One step of a donation's simulated life.
public enum LifecycleStep: Sendable, Equatable {
    /// The backend moves the donation (`PUT /v1/donations/{id}`) to `state`, with or without its volunteer.
    case update(DonationState, assigned: Bool)
    /// Nothing happens for this many simulated seconds; the volunteer stays where they are.
    case wait(seconds: Double)
    /// The volunteer drives towards `destination`; `fraction` below 1 stops part way (for a cancel or a drop).
    case drive(Destination, fraction: Double)
}

/// A donation's life as a value: the plan of backend updates, waits and drives for one fate, and the donation's
/// stage as the plan runs. Pure and deterministic for a given seed; ``FleetVolunteer`` carries it out.
public struct DonationLifecycle: Sendable, Equatable {
    /// How long people take between steps, in simulated seconds.
    public struct Timing: Sendable, Equatable {
        /// Until an administrator assigns a volunteer.
        public var assignment: ClosedRange<Double>
        /// From assignment until the volunteer sets off.
        public var departure: ClosedRange<Double>
        /// At the door, before one side marks the hand-over.
        public var atTheDoor: ClosedRange<Double>
        /// Until the other side confirms the hand-over.
        public var confirmation: ClosedRange<Double>
        /// At the institution before it is marked delivered.
        public var unloading: ClosedRange<Double>
        /// A dropped donation waits this long before the donor gives up.
        public var afterDrop: ClosedRange<Double>

        public init(
            assignment: ClosedRange<Double> = 30...180, departure: ClosedRange<Double> = 30...120, atTheDoor: ClosedRange<Double> = 30...120,
            confirmation: ClosedRange<Double> = 20...90, unloading: ClosedRange<Double> = 20...60, afterDrop: ClosedRange<Double> = 60...180
        ) {
            self.assignment = assignment
            self.departure = departure
            self.atTheDoor = atTheDoor
            self.confirmation = confirmation
            self.unloading = unloading
            self.afterDrop = afterDrop
        }

        /// Every wait this long; for showcase donations and tests.
        public static func fixed(_ seconds: Double) -> Timing {
            Timing(
                assignment: seconds...seconds, departure: seconds...seconds, atTheDoor: seconds...seconds,
                confirmation: seconds...seconds, unloading: seconds...seconds, afterDrop: seconds...seconds)
        }
    }

    public let fate: DonationFate
    public let steps: [LifecycleStep]
    /// The index of the next step.
    public private(set) var position = 0
    /// The donation's state and whether it has a volunteer, after the steps taken so far; `nil` before the first update.
    public private(set) var stage: (state: DonationState, assigned: Bool)?

    public init(fate: DonationFate, steps: [LifecycleStep]) {
        self.fate = fate
        self.steps = steps
    }

    public static func == (lhs: DonationLifecycle, rhs: DonationLifecycle) -> Bool {
        lhs.fate == rhs.fate && lhs.steps == rhs.steps && lhs.position == rhs.position && lhs.stage?.state == rhs.stage?.state
            && lhs.stage?.assigned == rhs.stage?.assigned
    }

    /// The plan for `fate`, with waits drawn from `timing`.
    public static func plan(fate: DonationFate, timing: Timing = Timing(), using rng: inout SeededRandom) -> DonationLifecycle {
        func wait(_ range: ClosedRange<Double>) -> LifecycleStep { .wait(seconds: rng.uniform(range)) }
        var steps: [LifecycleStep] = [.update(.created, assigned: false), wait(timing.assignment), .update(.created, assigned: true), wait(timing.departure)]
        if fate == .cancelledBeforeStart {
            steps.append(.update(.cancelled, assigned: true))
            return DonationLifecycle(fate: fate, steps: steps)
        }
        steps.append(.update(.beingLookedFor, assigned: true))
        switch fate {
        case .cancelledOnTheWay:
            steps += [.drive(.home, fraction: rng.uniform(0.2...0.7)), .update(.cancelled, assigned: true)]
            return DonationLifecycle(fate: fate, steps: steps)
        case .volunteerDrops:
            steps += [
                .drive(.home, fraction: rng.uniform(0.2...0.7)), .update(.created, assigned: false), wait(timing.afterDrop),
                .update(.cancelled, assigned: false),
            ]
            return DonationLifecycle(fate: fate, steps: steps)
        default:
            break
        }
        // At the door one side marks the hand-over and the other confirms it.
        let handover: DonationState = rng.chance(0.6) ? .pickedByVolunteer : .deliveredByDonor
        steps += [.drive(.home, fraction: 1), wait(timing.atTheDoor), .update(handover, assigned: true), wait(timing.confirmation)]
        if fate == .cancelledAtHandover {
            steps.append(.update(.cancelled, assigned: true))
            return DonationLifecycle(fate: fate, steps: steps)
        }
        steps += [
            .update(.beingTakenTo, assigned: true), .drive(.institution, fraction: 1), wait(timing.unloading),
            .update(.delivered, assigned: true),
        ]
        return DonationLifecycle(fate: fate, steps: steps)
    }

    /// Takes the next step and updates ``stage``; `nil` when the plan is done.
    public mutating func next() -> LifecycleStep? {
        guard position < steps.count else { return nil }
        let step = steps[position]
        position += 1
        if case .update(let state, let assigned) = step { stage = (state, assigned) }
        return step
    }

    /// Whether the plan is done.
    public var isFinished: Bool { position >= steps.count }

    /// The places the volunteer reaches while the donation is trackable, in order: where the donor must get `arrival`.
    public var expectedArrivals: [Destination] {
        steps.compactMap { step in
            if case .drive(let destination, let fraction) = step, fraction >= 1 { return destination }
            return nil
        }
    }

    /// Checks every update against Ponte's state machine, as the broker will.
    /// - Returns: `nil` when the broker would accept every update, otherwise the first refusal.
    public func refusal(volunteer: String = "volunteer@example.org") -> String? {
        var previous: DonationTransition.Stage?
        for step in steps {
            guard case .update(let state, let assigned) = step else { continue }
            let stage = DonationTransition.Stage(state, volunteer: assigned ? volunteer : nil)
            if let previous {
                if let refusal = DonationTransition.refusal(from: previous, to: stage) { return refusal }
            } else if state.requiresVolunteer && !assigned {
                return "a donation in \(state.rawValue) must have a volunteer"
            }
            previous = stage
        }
        return nil
    }
}
