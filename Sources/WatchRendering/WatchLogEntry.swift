/// One line of the donor's event log: what happened, when, as words and as `key=value` facts.
public struct WatchLogEntry: Sendable, Equatable {
    /// What kind of event this is; the raw value is the word plain mode prints.
    public enum Kind: String, Sendable {
        case subscribed, resubscribed, state, pause, resume, arrival, presence, stale, fresh, connection, retry, reconnect, error, ended
    }

    /// A fact of the event, printed as `key=value` in plain mode.
    public struct Field: Sendable, Equatable {
        public var key: String
        public var value: String

        public init(_ key: String, _ value: String) {
            self.key = key
            self.value = value
        }
    }

    /// When the watcher learned of it, in milliseconds since the Unix epoch.
    public var at: Int64
    public var kind: Kind
    public var fields: [Field]
    /// A sentence for people.
    public var text: String

    public init(at: Int64, kind: Kind, fields: [Field] = [], text: String) {
        self.at = at
        self.kind = kind
        self.fields = fields
        self.text = text
    }
}
