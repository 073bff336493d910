import RxCrypto
import RxModel
import RxVault

/// Where an export's items come from: the owner's vault (everything, or what one client is
/// granted), or a client's view of the file (what it is granted). Each hands the items over as
/// they are read and records the export in the audit log the way its reader must.
struct ExportSource {
    /// The owner's vault, for the bound JSON export and the audit entry (nil for a client).
    let owner: Vault?
    /// The client the owner exports for (`--for`).
    let grantee: ClientSummary?
    /// Hands the items to `body` a batch at a time, in order, as they are read; `count` hears the
    /// total first.
    let produce: (_ count: @escaping (Int) -> Void, _ body: ([ExportItem]) throws -> Void) throws -> Void
    /// Said when nothing matched.
    let emptyWarning: String
    /// The owner's patient records the JSON export carries (`Vault.exportPatients`): none for a
    /// client, nor for the owner's export for a client (`--for`): clients get prescriptions only.
    var patients: () throws -> [ExportPatient] = { [] }
    /// Which of the records a newer one the reader can see replaces (`VaultReader.supersession`):
    /// the printed page and the CSV say `superseded` where `show` and `list` do.
    var supersession: ([PrescriptionRecord]) throws -> [PrescriptionID: PrescriptionID] = { _ in [:] }

    /// The owner's export: opens the vault (the passphrase or the agent) and resolves ids and client.
    static func owner(
        _ options: VaultOptions, ids given: [String], filter: PrescriptionFilter, client: String?,
        attachments: Bool, versions: Bool
    ) throws -> ExportSource {
        let vault = try options.openVault(command: "export")
        let grantee = try client.map { try vault.resolveClient($0) }
        let ids = given.isEmpty ? nil : try given.map { try vault.resolve($0) }
        let warning =
            grantee.map { "\($0.name) is granted no prescriptions now: the export holds none (see 'rxvault grants')" }
            ?? "no prescription matches: the export holds none"
        var source = ExportSource(
            owner: vault, grantee: grantee,
            produce: { count, body in
                try vault.forEachExportBatch(
                    ids: ids, filter: filter, for: grantee, attachments: attachments,
                    versions: versions, count: count, body)
            }, emptyWarning: warning)
        if grantee == nil { source.patients = { try vault.exportPatients(ids: ids, filter: filter) } }
        source.supersession = { try vault.supersession(of: $0) }
        return source
    }

    /// A client's export of what it is granted, read now (its reads are logged as one export).
    static func client(
        _ options: VaultOptions, ids given: [String], filter: PrescriptionFilter, attachments: Bool,
        format: String
    ) throws -> ExportSource {
        guard let view = try options.openReader() as? ClientVault else { throw CLIError(.failure, "not a client view") }
        let ids = given.isEmpty ? nil : try given.map { try view.resolve($0) }
        let items = try view.exportItems(ids: ids, filter: filter, attachments: attachments, format: format)
        warnIfNotLogged(view)
        var source = ExportSource(
            owner: nil, grantee: nil,
            produce: { count, body in
                count(items.count)
                for batch in items.chunks(of: Vault.exportBatchSize) { try body(Array(batch)) }
            }, emptyWarning: "no prescription you are granted matches: the export holds none")
        source.supersession = { try view.supersession(of: $0) }
        return source
    }

    /// Records the owner's export (a client's was recorded as it read).
    func record(
        prescriptions: [String], attachments: [String], patients: [ExportPatient] = [], format: String,
        recipients: String?
    ) throws {
        try owner?.recordExport(
            prescriptions: prescriptions, attachments: attachments, patients: patients, format: format,
            client: grantee, recipients: recipients)
    }
}
