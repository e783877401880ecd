import ArgumentParser
import Foundation

/// The options of `serve`, which `check-config` reads the same way: `--config`, and every setting of
/// ``ConfigurationKey/all`` as its flag (``SettingFlags``), so that a new setting has its flag without a line here.
struct ServeOptions: ParsableArguments {
    @Option(help: "YAML configuration file (default: config/broker.yaml when it exists).")
    var config: String?

    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp("Any setting, as --name VALUE or --name=VALUE (listed below); a flag wins over the file and the environment.", valueName: "--setting VALUE"))
    var settings: [String] = []

    /// The flags given, by setting name, in the order of the layers.
    func flags() throws -> [(key: String, value: String)] {
        do {
            return try SettingFlags.parse(settings)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// Refuses an unknown flag, a flag without a value or a secret before anything is read.
    package func validate() throws {
        _ = try flags()
    }
}

/// `location-broker settings`: the settings table as config/broker.yaml or as docs/CONFIGURATION.md's tables,
/// for `scripts/generate-settings`.
struct SettingsCommand: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Print every setting as config/broker.yaml (--yaml) or as the Markdown document given with its settings tables made again (--markdown FILE)."
    )

    @Flag(help: "Print config/broker.yaml: every setting with its default.")
    var yaml = false

    @Option(help: "Print this Markdown file (docs/CONFIGURATION.md) with its settings tables made from the settings.")
    var markdown: String?

    package func validate() throws {
        guard yaml != (markdown != nil) else { throw ValidationError("give one of --yaml and --markdown FILE") }
    }

    package func run() throws {
        if let markdown {
            let document = try String(contentsOfFile: markdown, encoding: .utf8)
            print(try SettingsDocument.markdown(updating: document), terminator: "")
        } else {
            print(SettingsDocument.yaml, terminator: "")
        }
    }
}
