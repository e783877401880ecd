#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// Runs a handler for signals (Ctrl-C, SIGTERM) on a dispatch queue instead of their default action.
enum SignalTrap {
    /// Installs `handler` for each of `signals`; keep the returned sources alive for as long as it should run.
    static func install(_ signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        signals.map { number in
            // The default action must be off, or the process would die before the source sees the signal.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }
}
