import BrokerProtocol
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The bodies PubNub's SDKs parse: a publish's `[1,"Sent","<timetoken>"]`, a subscribe's `{"t":..,"m":[..]}`,
/// `/time/0`'s `[<timetoken>]`, presence's `{"status":200,..}`, and errors as PubNub's services write them
/// (`{"status":403,"error":true,"message":..,"service":"Access Manager",..}`), which the SDKs read by status:
/// 403 is "access denied".
enum PubNubAnswers {
    private static let headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]

    static func json(_ data: Data, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    private struct ErrorBody: Encodable {
        struct Payload: Encodable {
            let channels: [String]
        }

        let status: Int
        let error = true
        let service: String
        let message: String
        /// The broker's documented error code, for a person or a script reading the answer.
        let code: String
        let payload: Payload?
    }

    /// An error in PubNub's shape; a 403 names the channels it refuses, as PubNub's Access Manager does.
    static func error(_ status: HTTPResponse.Status, _ error: BrokerError, channels: [String] = []) -> Response {
        let body = ErrorBody(
            status: status.code, service: status == .forbidden ? "Access Manager" : "location-broker", message: error.message,
            code: error.code.rawValue, payload: channels.isEmpty ? nil : .init(channels: channels))
        return json((try? WireJSON.encode(body)) ?? Data(#"{"status":500,"error":true,"message":"?"}"#.utf8), status: status)
    }

    /// A publish the broker took: `[1,"Sent","<timetoken>"]`.
    static func sent(timetoken: Int64) -> Response {
        json(Data(#"[1,"Sent","\#(timetoken)"]"#.utf8))
    }

    /// `/time/0`: the broker's clock in PubNub's unit, 100 ns since the Unix epoch.
    static func time(nowMilliseconds: Int64) -> Response {
        json(Data("[\(nowMilliseconds * 10_000)]".utf8))
    }

    /// Leave and heartbeat: accepted, with no effect on what anyone sees.
    static func presence(action: String?) -> Response {
        let action = action.map { #","action":"\#($0)""# } ?? ""
        return json(Data(#"{"status":200,"message":"OK"\#(action),"service":"Presence"}"#.utf8))
    }

    /// The region every timetoken of this broker names. PubNub's service always answers one (its data centre)
    /// and the SDKs send it back as `tr`; a broker has one region, the same in the answer's `t` and every
    /// message's `p`.
    static let region = 1

    /// One message of a subscribe answer: its channel, its seq (the message's own timetoken) and its encoded `d`.
    struct Message {
        var channel: String
        var seq: Int64
        var payload: Data
    }

    /// A subscribe's answer: the next timetoken and the messages (already encoded `d` payloads) after it, in
    /// PubNub's envelope. A plain message carries no `e` (PubNub's type 0 is the field left out: SDKs route a
    /// message with another `e` to other listeners).
    static func subscribe(timetoken: Int64, subscribeKey: String, messages: [Message]) -> Response {
        var body = Data(#"{"t":{"t":"\#(timetoken)","r":\#(region)},"m":["#.utf8)
        let keyJSON = quoted(subscribeKey)
        for (index, message) in messages.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            let channelJSON = quoted(message.channel)
            body.append(
                contentsOf: Data(
                    #"{"a":"0","f":0,"i":\#(channelJSON),"p":{"t":"\#(message.seq)","r":\#(region)},"k":\#(keyJSON),"c":\#(channelJSON),"b":\#(channelJSON),"d":"#
                        .utf8))
            body.append(message.payload)
            body.append(UInt8(ascii: "}"))
        }
        body.append(contentsOf: Data("]}".utf8))
        return json(body)
    }

    /// `text` as a JSON string, escaped as the WebSocket's frames escape theirs.
    static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = []
        PositionFrameEncoder.appendString(&bytes, text)
        return String(decoding: bytes, as: UTF8.self)
    }
}
