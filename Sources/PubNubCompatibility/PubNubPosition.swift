import BrokerProtocol
import Foundation

/// The message of a PubNub publish read as a position, and a kept position written as the message a PubNub
/// subscriber receives.
///
/// Accepted: a JSON object with the coordinates as `lat`/`lng`, `lat`/`lon` or `latitude`/`longitude`
/// (degrees); optionally when the fix was taken as `timestamp`, `ts` or `time` (a number below 10^11 is seconds
/// since the Unix epoch, anything larger milliseconds; absent, the broker's clock at receipt), `accuracy`
/// (metres), `speed` (m/s) and `heading` (degrees). Every other field is ignored and never reaches a subscriber.
package enum PubNubPosition {
    /// A time below this is seconds since the epoch (10^11 s is the year 5138; 10^11 ms is 1973).
    static let secondsBelow: Double = 1e11

    private struct Message: Decodable {
        let lat: Double?
        let latitude: Double?
        let lng: Double?
        let lon: Double?
        let longitude: Double?
        let timestamp: Double?
        let ts: Double?
        let time: Double?
        let accuracy: Double?
        let speed: Double?
        let heading: Double?
    }

    /// The one value of a field that has several spellings, or why there is not one.
    private static func one(_ values: [(String, Double?)], required: Bool) -> Result<Double?, BrokerError> {
        let given = values.filter { $0.1 != nil }
        let names = values.map(\.0).joined(separator: ", ")
        if given.count > 1 { return .failure(BrokerError(.invalidPosition, "give only one of \(names)")) }
        if required && given.isEmpty { return .failure(BrokerError(.invalidPosition, "a position needs one of \(names)")) }
        return .success(given.first?.1)
    }

    /// Reads `data` as a position and checks it as a WebSocket publish is checked (`Position.validationError`).
    /// - Parameter now: the broker's clock, milliseconds since the Unix epoch; the fix's time when none is given.
    package static func read(_ data: Data, now: Int64) -> Result<Position, BrokerError> {
        let message: Message
        do {
            message = try JSONDecoder().decode(Message.self, from: data)
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
            return .failure(BrokerError(.invalidPosition, "the message must be a JSON object such as {\"lat\":52.5,\"lng\":13.4}"))
        } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context) {
            return .failure(BrokerError(.invalidPosition, "\(context.codingPath.map(\.stringValue).joined(separator: ".")) must be a number"))
        } catch {
            return .failure(BrokerError(.badRequest, "the message is not valid JSON (or holds a number JSON cannot represent)"))
        }
        let lat: Double?
        let lon: Double?
        let time: Double?
        switch (
            one([("lat", message.lat), ("latitude", message.latitude)], required: true),
            one([("lng", message.lng), ("lon", message.lon), ("longitude", message.longitude)], required: true),
            one([("timestamp", message.timestamp), ("ts", message.ts), ("time", message.time)], required: false)
        ) {
        case (.failure(let error), _, _), (_, .failure(let error), _), (_, _, .failure(let error)):
            return .failure(error)
        case (.success(let la), .success(let lo), .success(let t)):
            (lat, lon, time) = (la, lo, t)
        }
        var timestamp = now
        if let time {
            let milliseconds = (time < secondsBelow ? time * 1000 : time).rounded()
            guard milliseconds.isFinite, milliseconds > 0, milliseconds < 9e15 else {
                return .failure(BrokerError(.invalidPosition, "the time must be seconds or milliseconds since the Unix epoch"))
            }
            timestamp = Int64(milliseconds)
        }
        let position = Position(
            lat: lat ?? .nan, lon: lon ?? .nan, accuracy: message.accuracy, speed: message.speed, heading: message.heading, timestamp: timestamp)
        // The very checks of a WebSocket publish: ranges, the clock's skew.
        if let error = position.validationError(now: now) { return .failure(error) }
        return .success(position)
    }

    /// What a PubNub subscriber receives as a message's `d`.
    private struct Delivered: Encodable {
        let lat: Double
        let lng: Double
        let lon: Double
        let latitude: Double
        let longitude: Double
        let timestamp: Int64
        let accuracy: Double?
        let speed: Double?
        let heading: Double?
    }

    /// A kept position as a subscriber receives it, whatever shape or transport it was published in: the
    /// coordinates under every accepted name (so an app written for any of them reads it), the time in
    /// milliseconds, and accuracy, speed and heading when known. Nothing else the publisher sent is passed on.
    package static func message(_ position: Position) -> Data {
        let delivered = Delivered(
            lat: position.lat, lng: position.lon, lon: position.lon, latitude: position.lat, longitude: position.lon,
            timestamp: position.timestamp, accuracy: position.accuracy, speed: position.speed, heading: position.heading)
        return (try? WireJSON.encode(delivered)) ?? Data("{}".utf8)
    }
}
