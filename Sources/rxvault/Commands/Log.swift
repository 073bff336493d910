import ArgumentParser
import Foundation
import RxCrypto
import RxModel
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

extension RxVaultCommand {
    struct Log: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "log",
            abstract: "Show the audit log: grants, revokes, client reads, exports, backups.",
            discussion:
                "The log is encrypted and hash-chained; 'rxvault check' verifies it. An entry the owner cannot vouch for (a client read not authenticated by the client it names) is shown marked NOT VERIFIED, with a warning. The table shows the newest entries first, through a pager on a terminal when it is taller than the window (PAGER, default less; --no-pager prints directly); JSON keeps the log's order. --limit N keeps the newest N."
        )
        @Option(
            help: "Only entries about this client (name or id prefix).", completion: .custom(Completion.clientNames))
        var client: String?
        @Option(
            help: "Only entries about this prescription (id prefix).", completion: .custom(Completion.prescriptionIDs))
        var rx: String?
        @Option(help: ArgumentHelp("Only entries on or after this day.", valueName: "yyyy-mm-dd")) var since: String?
        @Option(help: ArgumentHelp("Only the newest N entries.", valueName: "n")) var limit: Int?
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @Flag(help: "Every prescription id of an entry (an export names many), not the first and a count.")
        var long = false
        @Flag(help: "Print directly, never through a pager.") var noPager = false
        @OptionGroup var options: VaultOptions

        func validate() throws {
            if let limit, limit < 1 { throw ValidationError("--limit \(limit): give 1 or more entries") }
        }

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let day = try since.map { text -> CalendarDate in
                    guard let d = CalendarDate(iso: text) else {
                        throw CLIError(.invalidInput, "--since '\(text)': \(CalendarDate.problem(iso: text)!)")
                    }
                    return d
                }
                let vault = try options.openVault(command: "log")
                let c = try client.map { try vault.resolveClient($0) }
                let p = try rx.map { try vault.resolve($0) }
                var entries = try vault.log(client: c, prescription: p, since: day)
                if let limit { entries = Array(entries.suffix(limit)) }
                let names = Dictionary(uniqueKeysWithValues: try vault.clients().map { ($0.id.hex, $0.name) })
                func who(_ id: String?) -> String {
                    guard let id else { return "-" }
                    return id == AuditEvent.ownerActor ? "owner" : names[id] ?? "removed client \(id.prefix(8))"
                }
                if format == .json {
                    let items: [[String: Any]] = entries.map { r in
                        var item: [String: Any] = [
                            "seq": r.sequence, "time": r.event.time, "actor": who(r.event.actor),
                            "action": r.event.action.rawValue, "prescriptions": r.event.prescriptions,
                            "countersigned": r.countersigned, "verified": r.isVerified
                        ]
                        if let problem = r.problem { item["problem"] = problem }
                        if let cl = r.event.client {
                            item["client"] = who(cl)
                            item["clientID"] = cl
                        }
                        if let a = r.event.attachments { item["attachments"] = a }
                        if let d = r.event.detail { item["detail"] = d }
                        return item
                    }
                    Terminal.out(try jsonText(["schema": "rxvault/log/v1", "entries": items]))
                } else if entries.isEmpty {
                    Terminal.err(
                        "rxvault: the log has no entries\(c != nil || p != nil || day != nil ? " matching that" : "")")
                } else {
                    // Newest first, as `git log`; an export's many ids as the first and a count.
                    func prescriptions(_ ids: [String]) -> String {
                        let shown = ids.map { String($0.prefix(8)) }
                        if long || shown.count <= 1 { return shown.joined(separator: ",") }
                        return "\(shown[0]) +\(shown.count - 1)"
                    }
                    Pager.show(
                        Table.render(
                            headers: ["SEQ", "TIME", "ACTOR", "ACTION", "CLIENT", "PRESCRIPTIONS", "DETAIL"],
                            rows: entries.reversed().map { r in
                                [
                                    String(r.sequence), r.event.time, who(r.event.actor), r.event.action.rawValue,
                                    who(r.event.client), prescriptions(r.event.prescriptions),
                                    (r.isVerified ? "" : "NOT VERIFIED ") + (r.event.readableDetail ?? "")
                                ]
                            }, overflow: [.init(columns: [1]), .init(columns: [6])],
                            style: .forStandardOutput(wide: long)),
                        enabled: !noPager)
                }
                let unverified = entries.filter { !$0.isVerified }
                if !unverified.isEmpty {
                    // Said on stderr in every format; JSON also carries "verified" and "problem" per entry.
                    Terminal.warning(
                        "entries \(unverified.map { String($0.sequence) }.joined(separator: ", ")) are NOT VERIFIED: the owner cannot vouch for them (a read not authenticated by the client it names, or an entry that lost its MAC)"
                    )
                    Terminal.err("rxvault: hint: 'rxvault check' says what is wrong with each")
                }
            }
        }
    }
}
