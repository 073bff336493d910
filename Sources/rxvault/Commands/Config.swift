import ArgumentParser
import RxValidate
import RxVault

extension RxVaultCommand {
    struct Config: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "config",
            abstract: "Show or change the vault's settings.",
            discussion: flowing(
                """
                One setting today: max-attachment-size, the largest attachment the vault accepts
                (chosen at 'rxvault init --max-attachment-size', 32 MiB unless told). It is kept in
                the vault header and, from format 4, authenticated by the owner's key ring: an edit
                by someone without the key fails every owner command and 'rxvault check'.

                Examples:
                  rxvault config show
                  rxvault config get max-attachment-size
                  rxvault config set max-attachment-size 64MiB
                """),
            subcommands: [ConfigShow.self, ConfigGet.self, ConfigSet.self])
    }

    enum SettingName: String, ExpressibleByArgument, CaseIterable {
        case maxAttachmentSize = "max-attachment-size"
    }

    struct ConfigShow: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show every setting.")
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let header = try options.openVault(command: "config show").verifiedHeader()
                if format == .json {
                    Terminal.out(
                        try jsonText(["schema": "rxvault/config/v1", "max-attachment-size": header.maxAttachmentBytes]))
                } else {
                    Terminal.out(
                        Table.keyValue([
                            (
                                SettingName.maxAttachmentSize.rawValue,
                                "\(ByteCount(header.maxAttachmentBytes)) (\(header.maxAttachmentBytes) bytes)"
                            )
                        ]))
                }
            }
        }
    }

    struct ConfigGet: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get", abstract: "Print one setting's value (bytes for sizes).")
        @Argument(help: "The setting: max-attachment-size.") var name: SettingName
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                let header = try options.openVault(command: "config get").verifiedHeader()
                switch name {
                case .maxAttachmentSize: Terminal.out(String(header.maxAttachmentBytes))
                }
            }
        }
    }

    struct ConfigSet: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Change one setting (written to the audit log).",
            discussion: "Sizes take a unit: 64MiB, 100M, 500k (K, M, G are powers of 1024; KB, MB, GB of 1000).")
        @Argument(help: "The setting: max-attachment-size.") var name: SettingName
        @Argument(help: "The new value.") var value: String
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                switch name {
                case .maxAttachmentSize:
                    guard let size = ByteSize(argument: value), ValidationLimits.maxBytesRange.contains(size.bytes)
                    else {
                        throw CLIError(
                            .usage,
                            "'\(value)' is not an attachment size limit rxvault accepts (\(ByteCount(ValidationLimits.maxBytesRange.lowerBound)) to \(ByteCount(ValidationLimits.maxBytesRange.upperBound)))",
                            hint: "give a size with a unit, e.g. 64MiB")
                    }
                    let vault = try options.openVault(command: "config set")
                    let before = try vault.setMaxAttachmentBytes(size.bytes)
                    Terminal.out("max-attachment-size: \(ByteCount(before)) -> \(ByteCount(size.bytes))")
                }
            }
        }
    }
}
