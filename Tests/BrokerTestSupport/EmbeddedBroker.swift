import BrokerProtocol
import NIOCore
import NIOEmbedded

@testable import BrokerCore
@testable import BrokerWebSocket
@testable import LocationBroker

/// One broker's hub, served to several ``EmbeddedWebSocket``s that share one event loop and one hand-moved clock:
/// a volunteer and the donor watching it, with virtual time, so an hour of tracking runs in moments.
final class EmbeddedBroker {
    static let volunteer = "vol@example.org"
    static let donor = "donor@example.org"

    let loop = EmbeddedEventLoop()
    let clock = ManualClock(start: 1_700_000_000_000)
    let metrics = BrokerMetrics()
    let hub: Hub
    let messages: ClientMessageHandler

    /// - Parameter heartbeatSeconds: the ping period, as `heartbeat_seconds`.
    init(heartbeatSeconds: Int) {
        hub = Hub(settings: HubSettings(BrokerConfiguration()), metrics: metrics, clock: clock.wallClock, framing: TextFrame.framing)
        messages = ClientMessageHandler(hub: hub, metrics: metrics, clock: clock.wallClock, heartbeatSeconds: heartbeatSeconds)
    }

    /// The volunteer is on the way to the donor's home: donation `d-1` is trackable from now on.
    func startTrip() {
        let donation = Donation(
            id: "d-1", donor: Self.donor, volunteer: Self.volunteer, state: .beingLookedFor,
            home: Home(lat: -34.6037, lon: -58.3816, label: "Av. Corrientes 1234"),
            institution: Institution(lat: -34.5875, lon: -58.4206, name: "Caritas Palermo"), createdAt: 0, updatedAt: 0)
        hub.apply(DonationChange(id: "d-1", revision: 1, old: nil, new: donation))
    }

    /// Opens a socket for `identity`; its welcome frame waits to be read.
    func connect(_ identity: String) throws -> EmbeddedWebSocket {
        try EmbeddedWebSocket(channel: EmbeddedChannel(loop: loop), identity: identity, messages: messages, metrics: metrics, clock: clock)
    }

    /// Moves the clock and the event loop's virtual time on together, running every timer due meanwhile.
    func advance(by amount: TimeAmount) {
        clock.advance(by: amount.nanoseconds / 1_000_000)
        loop.advanceTime(by: amount)
    }

    /// The volunteer's publish of a fix taken now, far from the donor's home and the institution, with `id`.
    func publishFrame(id: String) -> String {
        #"{"type":"publish","id":"\#(id)","position":{"lat":-34.62,"lon":-58.44,"accuracy":5,"timestamp":\#(clock.now)}}"#
    }
}
