import ArgumentParser
import Foundation
import RxCrypto
import RxModel
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

extension RxVaultCommand {
    struct Client: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "client",
            abstract: "Register, list and remove client apps (the apps you grant read access to).",
            discussion: flowing(
                """
                A client app is identified by an age X25519 key: it keeps the identity
                (AGE-SECRET-KEY-1...), you register its recipient (age1...). Then 'rxvault grant'.
                """),
            subcommands: [ClientAdd.self, ClientList.self, ClientShow.self, ClientRemove.self])
    }

    struct ClientAdd: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Register a client app by its age recipient, or make a new identity for it.",
            discussion: flowing(
                """
                Examples:
                  age-keygen -o shop.key     # on the client's side; prints its public key
                  rxvault client add lens-shop --recipient age1...
                  rxvault client add moms-phone --generate --identity-out moms-phone.key

                The identity file is written with mode 0600 and never over an existing file; hand it
                to the client and delete your copy.
                """))

        @Argument(help: "A name for the client (unique).") var name: String
        @Option(help: ArgumentHelp("The client's age X25519 recipient.", valueName: "age1...")) var recipient: String?
        @Flag(help: "Make a new identity for the client.") var generate = false
        @Option(help: ArgumentHelp("Where to write the new identity (with --generate).", valueName: "file"))
        var identityOut: String?
        @OptionGroup var options: VaultOptions

        func validate() throws {
            switch (recipient != nil, generate) {
            case (true, true): throw ValidationError("give either --recipient or --generate, not both")
            case (false, false): throw ValidationError("give --recipient age1... or --generate --identity-out FILE")
            default: break
            }
            if generate && identityOut == nil { throw ValidationError("--generate needs --identity-out FILE") }
            if !generate && identityOut != nil { throw ValidationError("--identity-out goes with --generate") }
        }

        func run() throws {
            try CommandRunner.run {
                var newIdentity: AgeIdentity?
                let key: AgeRecipient
                if let recipient {
                    guard let parsed = AgeRecipient(recipient) else {
                        throw CLIError(.invalidInput, "'\(recipient)' is not an age X25519 recipient (age1...)")
                    }
                    key = parsed
                } else {
                    _ = try WriteTarget.file(for: identityOut!, replace: false)
                    newIdentity = try AgeIdentity.generate()
                    key = newIdentity!.recipient
                }
                let vault = try options.openVault(command: "client add")
                // Write the identity to a temporary file first: if it cannot be written, the
                // client is never registered with a key nobody holds.
                var writer: SafeFileWriter?
                if let newIdentity, let path = identityOut {
                    writer = try SafeFileWriter(target: path, replace: false)
                    let created = try Environment.clock().timestamp()
                    do { try writer?.write(Array(newIdentity.fileText(created: created).utf8)) } catch {
                        writer?.discard()
                        throw error
                    }
                }
                let client: ClientSummary
                do { client = try vault.addClient(name: name, recipient: key) } catch {
                    writer?.discard()
                    throw error
                }
                do { try writer?.commit(replace: false) } catch {
                    try? vault.removeClient(client)
                    throw error
                }
                Terminal.out("\(client.name)  \(client.id.short)  \(client.recipient)")
            }
        }
    }

    struct ClientList: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the registered client apps.")
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openVault(command: "client list")
                let clients = try vault.clients()
                let grants = try vault.grants()
                let today = try Environment.clock().today()
                switch format {
                case .json:
                    let items: [[String: Any]] = clients.map { c in
                        [
                            "id": c.id.hex, "name": c.name, "recipient": c.recipient.description, "added": c.added,
                            "activeGrants": grants.filter { $0.client.id == c.id && $0.isActive(on: today) }.count
                        ]
                    }
                    Terminal.out(try jsonText(["schema": "rxvault/clients/v1", "clients": items]))
                default:
                    guard !clients.isEmpty else {
                        Terminal.err("rxvault: no clients yet; add one with 'rxvault client add'")
                        return
                    }
                    Terminal.out(
                        Table.render(
                            headers: ["NAME", "ID", "GRANTS", "ADDED", "RECIPIENT"],
                            rows: clients.map { c in
                                [
                                    c.name, c.id.short,
                                    String(grants.filter { $0.client.id == c.id && $0.isActive(on: today) }.count),
                                    c.added,
                                    c.recipient.description
                                ]
                            }, overflow: [.init(columns: [4]), .init(columns: [3])],
                            style: .forStandardOutput(wide: false)))
                }
            }
        }
    }

    struct ClientShow: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show a client app and what it may read.")
        @Argument(help: "The client's name or id prefix.", completion: .custom(Completion.clientNames)) var client:
            String
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                let vault = try options.openVault(command: "client show")
                let c = try vault.resolveClient(client)
                let grants = try vault.grants(client: c)
                Terminal.out(
                    Table.keyValue([
                        ("client", c.name), ("id", c.id.hex), ("recipient", c.recipient.description),
                        ("added", c.added), ("grants", String(grants.count))
                    ]))
                if !grants.isEmpty {
                    Terminal.out("")
                    Terminal.out(GrantText.table(grants, today: try Environment.clock().today()))
                }
            }
        }
    }

    struct ClientRemove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Revoke all of a client's grants, then remove it.",
            discussion:
                "Revoking re-keys each prescription it could read. It cannot take back what the client already read.")
        @Argument(help: "The client's name or id prefix.", completion: .custom(Completion.clientNames)) var client:
            String
        @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation.") var yes = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                let confirmation = Confirmation(
                    yes: yes, noInput: options.noInput, command: "client remove", verb: "remove it")
                let vault = try options.openVault(command: "client remove")
                let c = try vault.resolveClient(client)
                try confirmation.require("Remove client \(c.name) and revoke its grants?")
                try vault.removeClient(c)
                warnIfNotPurged(vault)
                Terminal.out("removed client \(c.name)")
            }
        }
    }
}
