import BrokerCore

/// How a volunteer's PubNub app spells a position: the names of its coordinates and time, and the time's unit.
/// Names only, never values: it holds nothing of where anyone is.
package struct PubNubShape: Sendable, Equatable {
    /// `lat` or `latitude`.
    package var latitude: String
    /// `lng`, `lon` or `longitude`.
    package var longitude: String
    /// `timestamp`, `ts` or `time`; `nil` when the app sends no time.
    package var time: String?
    /// Whether the app's time is in seconds (else milliseconds).
    package var timeInSeconds: Bool
}

/// The shape each volunteer's PubNub app last published in, so that its donors' SDKs receive positions in that
/// shape, whichever transport each one came over. Bounded: past `capacity` volunteers, a new one is not
/// remembered and its donors receive the full shape (``PubNubPosition/message(_:shape:)``).
package final class PubNubShapes: Sendable {
    private let shapes = LockedValue<[String: PubNubShape]>([:])
    private let capacity: Int

    package init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    /// Notes the shape `channel`'s volunteer published in.
    package func remember(_ shape: PubNubShape, for channel: String) {
        shapes.withLock { shapes in
            guard shapes[channel] != shape else { return }
            if shapes[channel] == nil && shapes.count >= capacity { return }
            shapes[channel] = shape
        }
    }

    /// The shape `channel`'s volunteer last published in, if they publish over PubNub.
    package func shape(of channel: String) -> PubNubShape? {
        shapes.withLock { $0[channel] }
    }
}
