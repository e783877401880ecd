import ArgumentParser
import Foundation

/// Where the broker is and the secrets to use it, shared by `fleet` and `bench`.
struct BrokerOptions: ParsableArguments {
    @Option(help: "The broker's WebSocket address (the /v1/ws path is added when missing).")
    var broker = "ws://127.0.0.1:8080"

    @Option(help: "The broker's HTTP address for the backend API (default: the --broker host and port over http).")
    var api: String?

    @Option(help: "The backend key (default: $LOCATION_BROKER_BACKEND_KEY).")
    var backendKey: String?

    @Option(help: "The JWT secret that signs client tokens (default: $LOCATION_BROKER_JWT_SECRET).")
    var jwtSecret: String?

    /// The WebSocket URL with its path.
    func webSocketURL() throws -> String {
        guard var components = URLComponents(string: broker), components.scheme == "ws" || components.scheme == "wss",
            let host = components.host, !host.isEmpty
        else { throw ValidationError("--broker must be a ws:// address, such as ws://127.0.0.1:8080") }
        if components.path.isEmpty || components.path == "/" { components.path = "/v1/ws" }
        guard let url = components.string else { throw ValidationError("--broker is not a usable address") }
        return url
    }

    /// The API's base URL.
    func apiURL() throws -> String {
        if let api { return api }
        guard let components = URLComponents(string: broker), let host = components.host else {
            throw ValidationError("--broker must be a ws:// address, such as ws://127.0.0.1:8080")
        }
        return "http://\(host):\(components.port ?? 80)"
    }

    func secrets() throws -> (backendKey: String, jwtSecret: String) {
        let environment = ProcessInfo.processInfo.environment
        guard let key = backendKey ?? environment["LOCATION_BROKER_BACKEND_KEY"], !key.isEmpty else {
            throw ValidationError("no backend key: pass --backend-key or set LOCATION_BROKER_BACKEND_KEY (see .secrets/broker.env)")
        }
        guard let secret = jwtSecret ?? environment["LOCATION_BROKER_JWT_SECRET"], !secret.isEmpty else {
            throw ValidationError("no JWT secret: pass --jwt-secret or set LOCATION_BROKER_JWT_SECRET (see .secrets/broker.env)")
        }
        return (key, secret)
    }
}

/// Reads a length of time (`500ms`, `20s`, `10m`, `1h`) from an option.
func seconds(_ text: String, option: String) throws -> Double {
    guard let duration = SimDurationParser.parse(text) else {
        throw ValidationError("\(option) must be a length of time such as 500ms, 20s, 10m or 1h, not '\(text)'")
    }
    return duration
}
