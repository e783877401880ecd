/// The settings given on the command line of `serve` and `check-config`: `--KEY VALUE` or `--KEY=VALUE`, one flag
/// per setting of ``ConfigurationKey/all`` (the key with dashes), read after the file and the environment. A secret
/// has none: its flag is refused with the reason.
enum SettingFlags {
    /// A command line that names no setting, or names one without a value, said so that the operator can fix it.
    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    /// The settings named in `arguments`, by key, in the order given (a later one wins).
    static func parse(_ arguments: [String]) throws(Invalid) -> [(key: String, value: String)] {
        var settings: [(key: String, value: String)] = []
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw Invalid(description: "unexpected argument '\(argument)': settings are given as --name VALUE (location-broker serve --help lists them)")
            }
            let flag = String(argument.prefix { $0 != "=" })
            guard let key = ConfigurationKey.flagged(flag) else {
                throw Invalid(description: "unknown option '\(flag)'; location-broker serve --help lists every setting's flag")
            }
            // On the command line a secret is in the process list, readable by every user of the machine.
            guard !key.isSecret else {
                throw Invalid(
                    description: "\(flag) would show the secret to every user of this machine (the process list); set \(key.environmentVariable) or \(key.name) in the configuration file")
            }
            let value: String
            if flag.count < argument.count {
                value = String(argument.dropFirst(flag.count + 1))
            } else if let next = rest.first, !next.hasPrefix("--") {
                value = next
                rest = rest.dropFirst()
            } else {
                throw Invalid(description: "\(flag) needs a value: \(flag) VALUE or \(flag)=VALUE")
            }
            settings.append((key.name, value))
        }
        return settings
    }
}
