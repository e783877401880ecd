import BrokerProtocol
import NIOCore
import NIOWebSocket

/// The close and heartbeat life of one client WebSocket, as a value: events go in, the actions to perform come
/// out, and ``WebSocketConnectionHandler`` performs them. Modelled on WSCore's `WebSocketStateMachine` and
/// NIO's `NIOTypedHTTPServerUpgraderStateMachine`; no channel, no clock, so every path is tested on its own.
///
/// ```
/// open ──ping timeout / broker close queued / close frame written──▶ closing ──client's close──▶ closed (close TCP)
///  │                                                                    │
///  └──client's close (echoed)──▶ echoing ──echo written──▶ closed       └──grace expired──▶ closed (abort)
///                                   └──grace expired──▶ closed (abort)
/// open, closing ──input ended (FIN without a close frame)──▶ closed (close TCP)
/// any state ──channel inactive──▶ closed
/// ```
///
/// The grace starts when a close begins (``closeGrace``): a client that does not read can receive neither the
/// broker's close frame nor the echo of its own, so the socket is cut when the grace expires.
///
/// While open, a heartbeat comes every `heartbeat_seconds` and asks for a ping (``Ping``). When a frame of a
/// message was written to the client within the heartbeat, the ping waits to go right after the next frame
/// written to it, so that it rides in a wake-up of a phone's radio that data causes anyway; it goes alone at the
/// next heartbeat if none came, so the client never hears nothing for two heartbeats. Once the ping is written,
/// the next heartbeat is a heartbeat from then, and the client is closed if nothing at all arrived from it
/// meanwhile (a frame of any kind, as any frame shows it is there).
package struct WebSocketConnectionStateMachine {
    /// How long a close handshake may take before the socket is cut (docs/PROTOCOL.md §5.10, §7).
    static let closeGrace: TimeAmount = .seconds(2)
    /// The close sent to a client from which nothing arrived between two pings.
    static let pingTimeout = (code: CloseCode.goingAway, reason: "Ping timeout")

    enum State: Equatable {
        /// Serving; `ping` says where the heartbeat's ping is.
        case open(ping: Ping)
        /// The broker's close is queued (`closeWritten` once it went to the socket); the client's answer is awaited.
        case closing(closeWritten: Bool)
        /// The client closed first; its close is being echoed.
        case echoing
        /// The socket is closed, or being closed: nothing more happens.
        case closed
    }

    /// Where the heartbeat's ping is, while open.
    enum Ping: Equatable {
        /// None is asked for: the next heartbeat asks for one.
        case none
        /// Asked for while data flowed: it goes right after the next frame written to the client, or alone at the
        /// next heartbeat.
        case ridesWithData
        /// Asked for alone: it goes as soon as the socket takes it.
        case alone
        /// Written (``pingWritten()``): the next heartbeat, a heartbeat later, judges the client.
        case written
    }

    /// What to do when a heartbeat is due.
    enum HeartbeatAction: Equatable {
        /// Send a ping now, and schedule the next heartbeat (``pingWritten()`` moves it to a heartbeat after the write).
        case sendPing
        /// Let a ping go with the next frame written to the client, and schedule the next heartbeat, at which it
        /// goes alone if it has not gone by then.
        case pingWithData
        /// Close with ``pingTimeout``, dropping what is queued, and start the ``closeGrace`` timer.
        case closeForPingTimeout
        /// The connection is closing: no more heartbeats.
        case stop
    }

    /// What to do when a close begins or ends.
    enum CloseAction: Equatable {
        /// Start the timer that ends in ``closeGraceExpired()``.
        case startGrace(TimeAmount)
        /// Close the TCP connection: the handshake is over.
        case closeTCP
        /// Cut the socket: the handshake did not finish within the grace.
        case abort
        case none
    }

    /// What to do with the client's close frame.
    enum ClientCloseAction: Equatable {
        /// Drop what is queued and write a close frame with this code (none when the client's had none), then
        /// report ``echoWritten()``; start the grace timer when `startGrace` is set.
        case echo(code: UInt16?, startGrace: TimeAmount?)
        /// The client answered the broker's close: close TCP (the server closes first, RFC 6455 §7.1.1).
        case closeTCP
        /// A close was already answered, or the socket is gone.
        case none
    }

    private(set) var state: State = .open(ping: .none)
    let grace: TimeAmount
    /// The first heartbeat is to come: the welcome frame, written with the upgrade's answer, is data flowing only
    /// if the client said something too.
    private var firstHeartbeat = true

    init(grace: TimeAmount = Self.closeGrace) {
        self.grace = grace
    }

    /// Whether the client's messages (and pings) are still read: not once any close has begun.
    var isOpen: Bool {
        if case .open = state { return true }
        return false
    }

    /// A heartbeat is due.
    /// - Parameters:
    ///   - clientWasHeard: a frame of any kind arrived since the ping was written (since the previous heartbeat
    ///     when none was).
    ///   - dataWasWritten: a frame of a message was written to the client since the ping was written (since the
    ///     previous heartbeat when none was).
    mutating func heartbeatDue(clientWasHeard: Bool, dataWasWritten: Bool) -> HeartbeatAction {
        guard case .open(let ping) = state else { return .stop }
        // A client that only ever heard its welcome is pinged alone: the ping is the first it hears since then.
        let dataFlowed = dataWasWritten && (clientWasHeard || !firstHeartbeat)
        firstHeartbeat = false
        switch ping {
        case .written, .alone:
            // A ping the socket did not take for a whole heartbeat (its client does not read) counts as sent.
            guard clientWasHeard else {
                state = .closing(closeWritten: false)
                return .closeForPingTimeout
            }
        case .ridesWithData:
            // No data came to carry it for a whole heartbeat: it goes alone.
            state = .open(ping: .alone)
            return .sendPing
        case .none:
            break
        }
        state = .open(ping: dataFlowed ? .ridesWithData : .alone)
        return dataFlowed ? .pingWithData : .sendPing
    }

    /// The heartbeat's ping was written to the socket.
    /// - Returns: whether the next heartbeat is now a heartbeat away (not once a close has begun).
    mutating func pingWritten() -> Bool {
        guard case .open = state else { return false }
        state = .open(ping: .written)
        return true
    }

    /// The broker queued a close (for any reason), or gave up on the connection: the handshake begins.
    mutating func brokerCloseQueued() -> CloseAction {
        guard case .open = state else { return .none }
        state = .closing(closeWritten: false)
        return .startGrace(grace)
    }

    /// The broker's close frame went to the socket. It may be seen before the close was reported queued.
    mutating func closeFrameWritten() -> CloseAction {
        switch state {
        case .open:
            state = .closing(closeWritten: true)
            return .startGrace(grace)
        case .closing:
            state = .closing(closeWritten: true)
            return .none
        case .echoing, .closed:
            return .none
        }
    }

    /// The client sent a close frame carrying `code` (`nil` when it carried none).
    mutating func clientCloseReceived(code: UInt16?) -> ClientCloseAction {
        switch state {
        case .open:
            state = .echoing
            return .echo(code: Self.echoCode(for: code), startGrace: grace)
        case .closing(closeWritten: false):
            // The broker's close is still queued: the client's close is answered in its place.
            state = .echoing
            return .echo(code: Self.echoCode(for: code), startGrace: nil)
        case .closing(closeWritten: true):
            state = .closed
            return .closeTCP
        case .echoing, .closed:
            return .none
        }
    }

    /// The echo of the client's close was written.
    mutating func echoWritten() -> CloseAction {
        guard state == .echoing else { return .none }
        state = .closed
        return .closeTCP
    }

    /// The grace started by a close has passed.
    mutating func closeGraceExpired() -> CloseAction {
        switch state {
        case .closing, .echoing:
            state = .closed
            return .abort
        case .open, .closed:
            return .none
        }
    }

    /// The client's input ended (TCP FIN) without a close frame: an app the system killed, a crash, a discarded
    /// tab. Nothing more can come from it, so no close handshake can finish: the socket is closed now, rather than
    /// at the next heartbeat's failed write. An echo of the client's own close still in flight closes the socket
    /// when written.
    mutating func inputEnded() -> CloseAction {
        switch state {
        case .open, .closing:
            state = .closed
            return .closeTCP
        case .echoing, .closed:
            return .none
        }
    }

    /// The socket is gone.
    mutating func channelInactive() {
        state = .closed
    }

    /// The code that answers a client's close: its own when a peer may send it, 1002 otherwise, none for none.
    static func echoCode(for code: UInt16?) -> UInt16? {
        guard let code else { return nil }
        return mayBeEchoed(code) ? code : UInt16(webSocketErrorCode: .protocolError)
    }

    /// Codes a peer may send in a close frame (RFC 6455 §7.4, with 1012 to 1014 from the IANA registry).
    static func mayBeEchoed(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }
}
