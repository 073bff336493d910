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
            abstract: "Register, list and remove client apps (the apps you grant read access to).",
            discussion: flowing("""
            A client app is identified by an age X25519 key: it keeps the identity
            (AGE-SECRET-KEY-1...), you register its recipient (age1...). Then 'rxvault grant'.
            """),
            subcommands: [ClientAdd.self, ClientList.self, ClientShow.self, ClientRemove.self])
    }

    struct ClientAdd: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Register a client app by its age recipient, or make a new identity for it.",
            discussion: flowing("""
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
        @Option(help: ArgumentHelp("Where to write the new identity (with --generate).", valueName: "file")) var identityOut: String?
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
                do { client = try vault.addClient(name: name, recipient: key) } catch { writer?.discard(); throw error }
                do { try writer?.commit(replace: false) } catch {
                    try? vault.removeClient(client)
                    throw error
                }
                Terminal.out("\(client.name)  \(client.id.short)  \(client.recipient)")
            }
        }
    }

    struct ClientList: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the registered client apps.")
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
                        ["id": c.id.hex, "name": c.name, "recipient": c.recipient.description, "added": c.added,
                         "activeGrants": grants.filter { $0.client.id == c.id && $0.isActive(on: today) }.count]
                    }
                    Terminal.out(try jsonText(["schema": "rxvault/clients/v1", "clients": items]))
                default:
                    guard !clients.isEmpty else { Terminal.err("rxvault: no clients yet; add one with 'rxvault client add'"); return }
                    Terminal.out(Table.render(headers: ["NAME", "ID", "GRANTS", "ADDED", "RECIPIENT"], rows: clients.map { c in
                        [c.name, c.id.short, String(grants.filter { $0.client.id == c.id && $0.isActive(on: today) }.count), c.added,
                         c.recipient.description]
                    }))
                }
            }
        }
    }

    struct ClientShow: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show a client app and what it may read.")
        @Argument(help: "The client's name or id prefix.", completion: .custom(Completion.clientNames)) var client: String
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                let vault = try options.openVault(command: "client show")
                let c = try vault.resolveClient(client)
                let grants = try vault.grants(client: c)
                Terminal.out(Table.keyValue([("client", c.name), ("id", c.id.hex), ("recipient", c.recipient.description),
                                             ("added", c.added), ("grants", String(grants.count))]))
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
            discussion: "Revoking re-keys each prescription it could read. It cannot take back what the client already read.")
        @Argument(help: "The client's name or id prefix.", completion: .custom(Completion.clientNames)) var client: String
        @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation.") var yes = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                let confirmation = Confirmation(yes: yes, noInput: options.noInput, command: "client remove", verb: "remove it")
                let vault = try options.openVault(command: "client remove")
                let c = try vault.resolveClient(client)
                try confirmation.require("Remove client \(c.name) and revoke its grants?")
                try vault.removeClient(c)
                warnIfNotPurged(vault)
                Terminal.out("removed client \(c.name)")
            }
        }
    }

    struct Grant: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Let a client app read specific prescriptions, or change the terms of its grants.",
            discussion: flowing("""
            The prescription's key (and its attachments' keys, unless --no-attachments) is sealed
            to the client's key: it can read these and nothing else, even with the vault file.
            --expires takes a date (the last day it works) or a duration such as 30d, 12w, 6m.

            Granting again keeps what is not restated: the end stays unless --expires or
            --no-expiry is given, and the attachment setting unless --attachments or
            --no-attachments is. Each prescription's line says what changed.

            Examples:
              rxvault grant lens-shop 3f9a 7c01 --expires 30d
              rxvault grant lens-shop 3f9a --expires 2026-12-31   # earlier or later
              rxvault grant lens-shop 3f9a --no-expiry --attachments
            """))

        @Argument(help: "The client's name or id prefix.", completion: .custom(Completion.clientNames)) var client: String
        @Argument(help: "The prescriptions' ids (any unique prefix).", completion: .custom(Completion.prescriptionIDs)) var prescriptions: [String]
        @OptionGroup var terms: GrantTermsOptions
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                let end = try terms.expiry()
                let vault = try options.openVault(command: "grant")
                let c = try vault.resolveClient(client)
                let ids = try prescriptions.map { try vault.resolve($0) }
                let outcomes = try vault.grant(c, ids, expires: end, attachments: terms.attachments)
                for outcome in outcomes { Terminal.out("\(c.name): \(outcome.prescriptionID.short) \(outcome)") }
                if terms.statesNothing && outcomes.contains(where: { !$0.changed }) {
                    Terminal.err("rxvault: hint: a repeated grant keeps its terms; --expires, --no-expiry, --attachments and --no-attachments change them")
                }
            }
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take back a client app's access to prescriptions.",
            discussion: flowing("""
            Deletes the grant and re-keys the prescription (a new data key and version, re-sealed
            for the remaining clients), so the key the client held opens nothing stored from now
            on, and the old sealed key is gone from the file. Revoking cannot take back what the
            client already read or copied.
            """))

        @Argument(help: "The client's name or id prefix.", completion: .custom(Completion.clientNames)) var client: String
        @Argument(help: "The prescriptions' ids (any unique prefix).", completion: .custom(Completion.prescriptionIDs)) var prescriptions: [String] = []
        @Flag(help: "Revoke all of the client's grants.") var all = false
        @OptionGroup var options: VaultOptions

        func validate() throws {
            if all == !prescriptions.isEmpty { throw ValidationError("give the prescriptions to revoke, or --all") }
        }

        func run() throws {
            try CommandRunner.run {
                let vault = try options.openVault(command: "revoke")
                let c = try vault.resolveClient(client)
                let ids = all ? nil : try prescriptions.map { try vault.resolve($0) }
                let revoked = try vault.revoke(c, ids)
                warnIfNotPurged(vault)
                Terminal.out(revoked.isEmpty ? "\(c.name) had no grants" : "revoked \(c.name)'s access to \(revoked.map(\.short).joined(separator: ", "))")
            }
        }
    }

    struct Grants: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show who can read what, since when, until when, and when they last read it.")
        @Option(help: "Only this client (name or id prefix).", completion: .custom(Completion.clientNames)) var client: String?
        @Option(help: "Only this prescription (id prefix).", completion: .custom(Completion.prescriptionIDs)) var rx: String?
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @Flag(help: "Show every cell whole, however wide the terminal (client names are otherwise cut with … to fit).") var wide = false
        @OptionGroup var options: VaultOptions


        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openVault(command: "grants")
                let c = try client.map { try vault.resolveClient($0) }
                let p = try rx.map { try vault.resolve($0) }
                let grants = try vault.grants(client: c, prescription: p)
                let today = try Environment.clock().today()
                if format == .json {
                    let items: [[String: Any]] = grants.map { g in
                        var item: [String: Any] = ["client": g.client.name, "clientID": g.client.id.hex, "prescription": g.prescriptionID.hex,
                                                   "granted": g.granted, "attachments": g.includesAttachments, "active": g.isActive(on: today)]
                        if let e = g.expires { item["expires"] = e.description }
                        if let r = g.lastRead { item["lastRead"] = r }
                        return item
                    }
                    Terminal.out(try jsonText(["schema": "rxvault/grants/v1", "grants": items]))
                } else if grants.isEmpty {
                    Terminal.err("rxvault: no grants")
                } else {
                    Terminal.out(GrantText.table(grants, today: today, style: .forStandardOutput(wide: wide)))
                }
            }
        }
    }

    struct Log: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the audit log: grants, revokes, client reads, exports, backups.",
            discussion: "The log is encrypted and hash-chained; 'rxvault check' verifies it. An entry the owner cannot vouch for (a client read not authenticated by the client it names) is shown marked NOT VERIFIED, with a warning.")
        @Option(help: "Only entries about this client (name or id prefix).", completion: .custom(Completion.clientNames)) var client: String?
        @Option(help: "Only entries about this prescription (id prefix).", completion: .custom(Completion.prescriptionIDs)) var rx: String?
        @Option(help: ArgumentHelp("Only entries on or after this day.", valueName: "yyyy-mm-dd")) var since: String?
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @OptionGroup var options: VaultOptions


        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let day = try since.map { text -> CalendarDate in
                    guard let d = CalendarDate(iso: text) else { throw CLIError(.invalidInput, "--since '\(text)': \(CalendarDate.problem(iso: text)!)") }
                    return d
                }
                let vault = try options.openVault(command: "log")
                let c = try client.map { try vault.resolveClient($0) }
                let p = try rx.map { try vault.resolve($0) }
                let entries = try vault.log(client: c, prescription: p, since: day)
                let names = Dictionary(uniqueKeysWithValues: try vault.clients().map { ($0.id.hex, $0.name) })
                func who(_ id: String?) -> String {
                    guard let id else { return "-" }
                    return id == AuditEvent.ownerActor ? "owner" : names[id] ?? "removed client \(id.prefix(8))"
                }
                if format == .json {
                    let items: [[String: Any]] = entries.map { r in
                        var item: [String: Any] = ["seq": r.sequence, "time": r.event.time, "actor": who(r.event.actor),
                                                   "action": r.event.action.rawValue, "prescriptions": r.event.prescriptions,
                                                   "countersigned": r.countersigned, "verified": r.isVerified]
                        if let problem = r.problem { item["problem"] = problem }
                        if let cl = r.event.client { item["client"] = who(cl); item["clientID"] = cl }
                        if let a = r.event.attachments { item["attachments"] = a }
                        if let d = r.event.detail { item["detail"] = d }
                        return item
                    }
                    Terminal.out(try jsonText(["schema": "rxvault/log/v1", "entries": items]))
                } else if entries.isEmpty {
                    Terminal.err("rxvault: the log has no entries\(c != nil || p != nil || day != nil ? " matching that" : "")")
                } else {
                    Terminal.out(Table.render(headers: ["SEQ", "TIME", "ACTOR", "ACTION", "CLIENT", "PRESCRIPTIONS", "DETAIL"], rows: entries.map { r in
                        [String(r.sequence), r.event.time, who(r.event.actor), r.event.action.rawValue, who(r.event.client),
                         r.event.prescriptions.map { String($0.prefix(8)) }.joined(separator: ","),
                         (r.isVerified ? "" : "NOT VERIFIED ") + (r.event.readableDetail ?? "")]
                    }))
                }
                let unverified = entries.filter { !$0.isVerified }
                if !unverified.isEmpty {
                    // Said on stderr in every format; JSON also carries "verified" and "problem" per entry.
                    Terminal.warning("entries \(unverified.map { String($0.sequence) }.joined(separator: ", ")) are NOT VERIFIED: the owner cannot vouch for them (a read not authenticated by the client it names, or an entry that lost its MAC)")
                    Terminal.err("rxvault: hint: 'rxvault check' says what is wrong with each")
                }
            }
        }
    }
}

/// Sorted, pretty JSON for the small documents these commands print.
func jsonText(_ object: [String: Any]) throws -> String {
    String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]),
           as: UTF8.self)
}

enum GrantText {
    /// EXPIRES and STATUS in red for an expired grant, yellow for one that ends within the
    /// window a prescription counts as expiring in; CLIENT (a name) is cut to fit.
    static func table(_ grants: [GrantSummary], today: CalendarDate, style: TableStyle = .plain) -> String {
        Table.render(headers: ["CLIENT", "PRESCRIPTION", "GRANTED", "EXPIRES", "ATTACHMENTS", "STATUS", "LAST READ"], rows: grants.map { g in
            [g.client.name, g.prescriptionID.short, g.granted, g.expires?.description ?? "-", g.includesAttachments ? "yes" : "no",
             g.isActive(on: today) ? "active" : "expired", g.lastRead ?? "never"]
        }, tones: grants.map { g in
            !g.isActive(on: today) ? .expired
                : g.expires.map { today.days(until: $0) <= PrescriptionStatus.defaultWarningDays } == true ? .expiring : nil
        }, tinted: [3, 5], shrinkable: [0], style: style)
    }

    /// "2026-12-31", or a duration from today: "30d", "12w", "6m". The end must be a day the
    /// vault can store and read back: 9999-12-31 at the latest (CalendarDate).
    static func parseExpiry(_ text: String, today: CalendarDate) throws -> CalendarDate {
        if let date = CalendarDate(iso: text) { return date }
        if let days = Duration.days(text), days > 0 {
            guard let end = today.adding(days: days) else {
                throw CLIError(.invalidInput, "--expires '\(text)': \(days) days from \(today) is after \(CalendarDate.latest), the last day a grant can have",
                               hint: "give a date up to \(CalendarDate.latest), or --no-expiry")
            }
            return end
        }
        if let problem = CalendarDate.problem(iso: text), problem.hasPrefix("outside") {
            throw CLIError(.invalidInput, "--expires '\(text)': \(problem)", hint: "give a date up to \(CalendarDate.latest), or --no-expiry")
        }
        throw CLIError(.invalidInput, "--expires '\(text)': give a date YYYY-MM-DD, a duration such as 30d, 12w, 6m (at most \(Duration.maxDays) days), or never")
    }
}

/// Durations people type: "60d", "8w", "2m" (months of 30 days), "1y"; a bare number is days.
enum Duration {
    /// The longest duration read: 100 years.
    static let maxDays = 36500

    static func days(_ text: String) -> Int? {
        let units: [Character: Int] = ["d": 1, "w": 7, "m": 30, "y": 365]
        let (number, unit) = text.last.flatMap { units[$0] }.map { (text.dropLast(), $0) } ?? (Substring(text), 1)
        guard let n = Int(number), n >= 0, n <= maxDays / unit else { return nil }
        return n * unit
    }
}
