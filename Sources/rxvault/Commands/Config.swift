import ArgumentParser
import RxModel
import RxValidate
import RxVault

extension RxVaultCommand {
    struct Config: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "config",
            abstract: "Show or change the vault's settings.",
            discussion: flowing(
                """
                max-attachment-size: the largest attachment the vault accepts (chosen at 'rxvault
                init --max-attachment-size', 32 MiB unless told). It is kept in the vault header
                and, from format 4, authenticated by the owner's key ring.

                assumed-validity: how long a prescription with no expiry date written is taken to
                stay valid after its issue date, per kind: glasses=2y, contacts=1y, both
                (glasses=2y,contacts=1y), or none (the default). Durations are 2y, 18m, 26w or 90d.
                show, list, query (--valid-on, --expired, --expiring-within), due, printed pages
                and the API then judge such a prescription by that date and show it as 'no expiry
                written (assumed to DATE)'; nothing writes it as the prescriber's expiry. Without
                it, one issued more than two years ago reads 'no expiry written (issued DATE)'. It
                is kept in the owner's key ring (format 7).

                An edit of either by someone without the key fails every owner command and
                'rxvault check'.

                Examples:
                  rxvault config show
                  rxvault config get max-attachment-size
                  rxvault config set max-attachment-size 64MiB
                  rxvault config set assumed-validity glasses=2y,contacts=1y
                  rxvault config set assumed-validity none
                """),
            subcommands: [ConfigShow.self, ConfigGet.self, ConfigSet.self])
    }

    enum SettingName: String, ExpressibleByArgument, CaseIterable {
        case maxAttachmentSize = "max-attachment-size"
        case assumedValidity = "assumed-validity"
    }

    struct ConfigShow: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show every setting.")
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openVault(command: "config show")
                let header = try vault.verifiedHeader()
                let validity = try vault.assumedValidity()
                if format == .json {
                    // Per kind, the duration as written; {} when none is assumed.
                    var assumed: [String: String] = [:]
                    for kind in PrescriptionKind.allCases { assumed[kind.rawValue] = validity[kind]?.description }
                    Terminal.out(
                        try jsonText([
                            "schema": "rxvault/config/v1", "max-attachment-size": header.maxAttachmentBytes,
                            "assumed-validity": assumed
                        ]))
                } else {
                    Terminal.out(
                        Table.keyValue([
                            (
                                SettingName.maxAttachmentSize.rawValue,
                                "\(ByteCount(header.maxAttachmentBytes)) (\(header.maxAttachmentBytes) bytes)"
                            ),
                            (SettingName.assumedValidity.rawValue, Self.describe(validity))
                        ]))
                }
            }
        }

        /// `glasses=2y,contacts=1y`, or `none (undated prescriptions read valid for two years)`.
        static func describe(_ validity: AssumedValidity) -> String {
            validity.isEmpty
                ? "none (no expiry written: valid for \(PrescriptionStatus.undatedYears) years from the issue date)"
                : validity.description
        }
    }

    struct ConfigGet: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get", abstract: "Print one setting's value (bytes for sizes).")
        @Argument(help: "The setting: max-attachment-size or assumed-validity.") var name: SettingName
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                let vault = try options.openVault(command: "config get")
                switch name {
                case .maxAttachmentSize: Terminal.out(String(try vault.verifiedHeader().maxAttachmentBytes))
                case .assumedValidity: Terminal.out(try vault.assumedValidity().description)
                }
            }
        }
    }

    struct ConfigSet: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Change one setting (written to the audit log).",
            discussion: flowing(
                """
                Sizes take a unit: 64MiB, 100M, 500k (K, M, G are powers of 1024; KB, MB, GB of 1000).
                The assumed validity is per kind: glasses=2y, contacts=1y, glasses=2y,contacts=18m,
                or none to clear it (a kind left out assumes nothing).
                """))
        @Argument(help: "The setting: max-attachment-size or assumed-validity.") var name: SettingName
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
                case .assumedValidity:
                    guard let validity = AssumedValidity(parsing: value) else {
                        throw CLIError(
                            .usage, "'\(value)' is not an assumed validity rxvault accepts",
                            hint:
                                "give glasses=2y, contacts=1y, both comma-separated, or none (durations: 2y, 18m, 26w, 90d)"
                        )
                    }
                    let vault = try options.openVault(command: "config set")
                    let before = try vault.setAssumedValidity(validity)
                    Terminal.out("assumed-validity: \(before) -> \(validity)")
                }
            }
        }
    }
}
