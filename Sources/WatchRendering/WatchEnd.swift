import BrokerClient
import BrokerProtocol

/// The terminal's words and exit codes for each way watching can end.
extension WatchEnd {
    /// The process exit status: 0 delivered, 1 another end of tracking, 2 refused subscribe, 3 no connection, 130 Ctrl-C.
    public var exitCode: Int32 {
        switch self {
        case .unsubscribed(.delivered): 0
        case .unsubscribed, .refusedAfterReconnect: 1
        case .refused: 2
        case .connectionFailed, .unauthorized: 3
        case .stopped: 130
        }
    }

    /// The word plain mode prints as `reason=`.
    public var reason: String {
        switch self {
        case .unsubscribed(let reason): reason.rawValue
        case .refused(let code, _): "refused:\(code.rawValue)"
        case .refusedAfterReconnect(let code, _): "refused-after-reconnect:\(code.rawValue)"
        case .connectionFailed: "no-connection"
        case .unauthorized: "unauthorized"
        case .stopped: "interrupted"
        }
    }

    /// Whether this is the happy end: the donation reached the institution.
    public var isDelivered: Bool { exitCode == 0 }

    /// A short headline for the status panel.
    public var headline: String {
        switch self {
        case .unsubscribed(.delivered): "Delivered to the institution"
        case .unsubscribed(.cancelled): "Cancelled"
        case .unsubscribed(.volunteerChanged): "Access revoked: the volunteer changed"
        case .unsubscribed(.deleted): "Donation deleted"
        case .unsubscribed(.client): "Tracking stopped"
        case .refused: "Not allowed to watch"
        case .refusedAfterReconnect: "Tracking ended while disconnected"
        case .connectionFailed: "No connection to the broker"
        case .unauthorized: "Token not accepted"
        case .stopped: "Stopped"
        }
    }

    /// What the donor is told, with the institution's name when it is known.
    public func summary(institution: String? = nil) -> String {
        switch self {
        case .unsubscribed(.delivered):
            if let institution { return "Delivered to \(institution). Thank you!" }
            return "Delivered to the institution. Thank you!"
        case .unsubscribed(.cancelled):
            return "The donation was cancelled; tracking has ended."
        case .unsubscribed(.volunteerChanged):
            return "The volunteer no longer carries this donation (dropped or reassigned): access to their location was revoked."
        case .unsubscribed(.deleted):
            return "The donation was deleted; tracking has ended."
        case .unsubscribed(.client):
            return "Tracking stopped."
        case .refused(let code, let message):
            return "The broker refused to let you watch (\(code.rawValue)): \(message)"
        case .refusedAfterReconnect(let code, let message):
            return "After reconnecting, the broker no longer lets you watch (\(code.rawValue)): \(message). "
                + "The donation may have ended while the connection was down."
        case .connectionFailed(let why):
            return "Could not connect to the broker: \(why)"
        case .unauthorized(let why):
            return "The broker did not accept your token: \(why)"
        case .stopped:
            return "Stopped."
        }
    }
}
