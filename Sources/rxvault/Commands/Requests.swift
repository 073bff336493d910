import ArgumentParser
import Foundation
import RxModel
import RxVault

extension RxVaultCommand {
    /// Access requests that client apps made over the API (`rxvault serve`), as HealthKit asks a
    /// person which records an app may read.
    struct Requests: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "requests",
            abstract: "Show client apps' access requests; approve chosen prescriptions or deny.",
            discussion: flowing(
                """
                A client app asks over the API (POST /access-requests) with a reason and, perhaps, a
                patient and kinds of prescription. Approving grants exactly the prescriptions you
                name (ordinary grants: 'rxvault grants' lists them, 'rxvault revoke' takes them back);
                the client learns what it was granted, never what else the vault holds nor that a
                request was denied. Requests expire after 7 days; a client can have 5 waiting.

                Examples:
                  rxvault requests
                  rxvault requests approve 5c1e 3f9a --expires 90d
                  rxvault requests deny 5c1e
                """),
            subcommands: [List.self, Approve.self, Deny.self], defaultSubcommand: List.self)

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list", abstract: "Pending requests (--all: every one).")
            @Flag(help: "Every request, answered and expired ones too.") var all = false
            @Option(help: "Output format.") var format: DocumentFormat = .table
            @OptionGroup var options: VaultOptions

            func run() throws {
                try CommandRunner.run(json: format == .json) {
                    let vault = try options.openVault(command: "requests")
                    let names = Dictionary(uniqueKeysWithValues: try vault.clients().map { ($0.id, $0.name) })
                    let requests = try vault.accessRequests().filter { all || $0.status == .pending }
                    if format == .json {
                        let items: [[String: Any]] = requests.map { r in
                            [
                                "id": r.id, "client": names[r.client] ?? r.client.hex, "status": r.status.rawValue,
                                "reason": r.reason,
                                "patient": r.patient as Any, "kinds": r.kinds.map(\.rawValue), "requested": r.requested,
                                "expires": r.expires, "granted": r.granted.map(\.hex)
                            ]
                        }
                        Terminal.out(try jsonText(["schema": "rxvault/requests/v1", "requests": items]))
                        return
                    }
                    if requests.isEmpty {
                        Terminal.out(all ? "no access requests" : "no access requests waiting")
                        return
                    }
                    var rows: [[String]] = []
                    for r in requests {
                        rows.append([
                            r.id.prefix(8).description, names[r.client] ?? r.client.short, r.status.rawValue,
                            r.requested,
                            r.patient ?? "any",
                            r.kinds.isEmpty ? "any" : r.kinds.map(\.rawValue).joined(separator: ","), r.reason
                        ])
                    }
                    Terminal.out(
                        Table.render(
                            headers: ["REQUEST", "CLIENT", "STATUS", "REQUESTED", "PATIENT", "KINDS", "REASON"],
                            rows: rows))
                }
            }
        }

        struct Approve: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "approve",
                abstract: "Grant the client chosen prescriptions, answering its request.")
            @Argument(help: "The request's id (any unique prefix).") var request: String
            @Argument(
                help: "The prescriptions to grant (ids, any unique prefix).",
                completion: .custom(Completion.prescriptionIDs)) var prescriptions: [String]
            @OptionGroup var terms: GrantTermsOptions
            @OptionGroup var options: VaultOptions

            func validate() throws {
                if prescriptions.isEmpty {
                    throw ValidationError("name at least one prescription to grant (or use 'requests deny')")
                }
            }

            func run() throws {
                try CommandRunner.run {
                    let end = try terms.expiry()
                    let vault = try options.openVault(command: "requests approve")
                    let found = try vault.accessRequest(request)
                    let ids = try prescriptions.map { try vault.resolve($0) }
                    let outcomes = try vault.approve(
                        found, prescriptions: ids, expires: end, attachments: terms.attachments,
                        measurements: terms.measurements)
                    let name = try vault.clients().first { $0.id == found.client }?.name ?? found.client.short
                    for outcome in outcomes { Terminal.out("\(name): \(outcome.prescriptionID.short) \(outcome)") }
                    Terminal.out("request \(found.id.prefix(8)) approved")
                }
            }
        }

        struct Deny: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "deny", abstract: "Answer a request without granting anything.")
            @Argument(help: "The request's id (any unique prefix).") var request: String
            @OptionGroup var options: VaultOptions

            func run() throws {
                try CommandRunner.run {
                    let vault = try options.openVault(command: "requests deny")
                    let found = try vault.accessRequest(request)
                    try vault.deny(found)
                    Terminal.out("request \(found.id.prefix(8)) denied (the client is told only that it was answered)")
                }
            }
        }
    }
}
