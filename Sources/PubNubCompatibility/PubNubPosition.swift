import BrokerProtocol
import Foundation

/// The message of a PubNub publish read as a position, and a kept position written as the message a PubNub
/// subscriber receives, in the shape its volunteer publishes in.
///
/// Accepted: a JSON object with the coordinates as `lat`/`lng`, `lat`/`lon` or `latitude`/`longitude`
/// (degrees), when the fix was taken as `timestamp`, `ts` or `time` (a number below 10^11 is seconds since the
/// Unix epoch, anything larger milliseconds), and optionally `accuracy` (metres), `speed` (m/s) and `heading`
/// (degrees). Every other field is ignored and never reaches a subscriber.
///
/// The time is required, as on the WebSocket: a fix stamped when it arrived would pass the window and age rules
/// whenever it was taken, so one queued on the phone before a donation's window opened would reach its donor.
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

    /// The one value of a field that has several spellings, and its name, or why there is not one.
    private static func one(_ values: [(String, Double?)], required: Bool) -> Result<(name: String, value: Double)?, BrokerError> {
        let given = values.compactMap { name, value in value.map { (name: name, value: $0) } }
        let names = values.map(\.0).joined(separator: ", ")
        if given.count > 1 { return .failure(BrokerError(.invalidPosition, "give only one of \(names)")) }
        if required && given.isEmpty { return .failure(BrokerError(.invalidPosition, "a position needs one of \(names)")) }
        return .success(given.first)
    }

    /// Reads `data` as a position and checks it as a WebSocket publish is checked (`Position.validationError`).
    /// - Parameter now: the broker's clock, milliseconds since the Unix epoch.
    package static func read(_ data: Data, now: Int64) -> Result<(position: Position, shape: PubNubShape), BrokerError> {
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
        let lat: (name: String, value: Double)?
        let lon: (name: String, value: Double)?
        let time: (name: String, value: Double)?
        switch (
            one([("lat", message.lat), ("latitude", message.latitude)], required: true),
            one([("lng", message.lng), ("lon", message.lon), ("longitude", message.longitude)], required: true),
            one([("timestamp", message.timestamp), ("ts", message.ts), ("time", message.time)], required: true)
        ) {
        case (.failure(let error), _, _), (_, .failure(let error), _), (_, _, .failure(let error)):
            return .failure(error)
        case (.success(let la), .success(let lo), .success(let t)):
            (lat, lon, time) = (la, lo, t)
        }
        guard let lat, let lon, let time else {
            return .failure(BrokerError(.invalidPosition, "a position needs a latitude, a longitude and a time"))
        }
        let milliseconds = (time.value < secondsBelow ? time.value * 1000 : time.value).rounded()
        guard milliseconds.isFinite, milliseconds > 0, milliseconds < 9e15 else {
            return .failure(BrokerError(.invalidPosition, "the time must be seconds or milliseconds since the Unix epoch"))
        }
        let timestamp = Int64(milliseconds)
        let position = Position(
            lat: lat.value, lon: lon.value, accuracy: message.accuracy, speed: message.speed, heading: message.heading, timestamp: timestamp)
        // The very checks of a WebSocket publish: ranges, the clock's skew.
        if let error = position.validationError(now: now) { return .failure(error) }
        let shape = PubNubShape(
            latitude: lat.name, longitude: lon.name, time: time.name, timeInSeconds: time.value < secondsBelow)
        return .success((position, shape))
    }

    /// A kept position as a PubNub subscriber receives it: in `shape` when the volunteer's PubNub app publishes in
    /// one (its coordinate and time names, the time in its unit), else (a volunteer who only ever published over
    /// the WebSocket or OwnTracks) the coordinates under every accepted name and `timestamp` in milliseconds.
    /// `accuracy`, `speed` and `heading` come when known. Nothing else the publisher sent is passed on.
    package static func message(_ position: Position, shape: PubNubShape?) -> Data {
        var fields: [(String, String)] = []
        // Finite (checked when published), so Swift's shortest form is a JSON number.
        func number(_ value: Double) -> String { "\(value)" }
        if let shape {
            fields.append((shape.latitude, number(position.lat)))
            fields.append((shape.longitude, number(position.lon)))
            if let time = shape.time {
                fields.append((time, shape.timeInSeconds ? number(Double(position.timestamp) / 1000) : String(position.timestamp)))
            }
        } else {
            for name in ["lat", "latitude"] { fields.append((name, number(position.lat))) }
            for name in ["lng", "lon", "longitude"] { fields.append((name, number(position.lon))) }
            fields.append(("timestamp", String(position.timestamp)))
        }
        if let accuracy = position.accuracy { fields.append(("accuracy", number(accuracy))) }
        if let speed = position.speed { fields.append(("speed", number(speed))) }
        if let heading = position.heading { fields.append(("heading", number(heading))) }
        // The names are the fixed ones above, so they need no escaping.
        return Data(("{" + fields.map { #""\#($0.0)":\#($0.1)"# }.joined(separator: ",") + "}").utf8)
    }
}
