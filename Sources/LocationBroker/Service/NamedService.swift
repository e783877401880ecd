import ServiceLifecycle

/// A service as the service group logs it: by its type's name only.
///
/// The group logs each service it starts and stops, at `debug`, with the service's description; a struct's default
/// description lists every stored field, and the broker's services hold its secrets (the store's password, the
/// webhook URL and its secrets, the VAPID key). Wrapped, a service is told by its name and nothing else.
struct NamedService: Service, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let service: any Service

    init(_ service: any Service) { self.service = service }

    func run() async throws { try await service.run() }

    var description: String { String(describing: type(of: service)) }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
