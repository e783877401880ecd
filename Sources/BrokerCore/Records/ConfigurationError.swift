/// A setting that could not be used, said so that the operator knows where to fix it. Every part of the broker
/// that reads settings (the configuration's loader, the token keys, the map, TLS) throws it, and the command line
/// prints it alone, without a stack of wrappers.
package struct ConfigurationError: Error, CustomStringConvertible {
    package let description: String

    package init(description: String) {
        self.description = description
    }
}
