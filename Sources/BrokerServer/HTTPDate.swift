import BrokerCore
import Foundation

/// The `Date` header of every HTTP response (RFC 9110 §6.6.1: an origin server with a clock sends one), in the
/// IMF-fixdate form, `Sun, 06 Nov 1994 08:49:37 GMT`.
///
/// Formatted at most once a second: the responses of one second share the string.
package final class HTTPDate: Sendable {
    private struct Cache {
        var second = Int.min
        var text = ""
        let formatter: DateFormatter = {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            return formatter
        }()
    }

    // The formatter is used only inside the lock.
    private let cache = LockedValue<Cache>(Cache())

    package init() {}

    /// The header's value for now.
    package var now: String { text(for: Date()) }

    /// The header's value for `date`, to the second.
    package func text(for date: Date) -> String {
        let second = Int(date.timeIntervalSince1970.rounded(.down))
        return cache.withLock { cache in
            if cache.second != second {
                cache.second = second
                cache.text = cache.formatter.string(from: Date(timeIntervalSince1970: TimeInterval(second)))
            }
            return cache.text
        }
    }
}
