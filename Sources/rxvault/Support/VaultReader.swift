import RxModel
import RxValidate
import RxVault

/// What the read commands (list, show, attachments, extract, preview) need, from the owner's
/// vault or a client's view of it. Access rules live in RxVault; this only lets one command
/// body serve both.
protocol VaultReader {
    func list() throws -> [PrescriptionRecord]
    func query(_ filter: PrescriptionFilter) throws -> [PrescriptionRecord]
    func resolve(_ idOrPrefix: String) throws -> PrescriptionID
    func prescription(_ id: PrescriptionID, version: Int?) throws -> PrescriptionRecord
    func attachments(of prescriptionID: PrescriptionID) throws -> [AttachmentInfo]
    func resolveAttachment(_ reference: String, of prescriptionID: PrescriptionID) throws -> AttachmentID
    func readAttachment(_ id: AttachmentID, of prescriptionID: PrescriptionID, write: ([UInt8]) throws -> Void) throws
        -> AttachmentInfo
    func previewAttachment(_ id: AttachmentID, of prescriptionID: PrescriptionID, width: UInt32, parser: IsolatedParser)
        throws -> [UInt8]
    /// Which of `records` a newer prescription this reader can see replaces (RxVault's
    /// `Supersession`): the `superseded` status of list, query and show.
    func supersession(of records: [PrescriptionRecord]) throws -> [PrescriptionID: PrescriptionID]
    /// The vault's `assumed-validity` setting, by which a prescription with no expiry written is
    /// judged (`none` for a client: the setting is the owner's, in the key ring a client cannot
    /// verify; a client goes by written dates and those assumed at import).
    func assumedValidity() throws -> AssumedValidity
    var attachmentLimits: ValidationLimits { get }
    /// Set when a client's read could not be written to the audit log: why.
    var readLogFailure: VaultError? { get }
}

extension Vault: VaultReader {
    var readLogFailure: VaultError? { nil }
}

extension ClientVault: VaultReader {
    var readLogFailure: VaultError? { lastLogFailure }
    func assumedValidity() throws -> AssumedValidity { .none }
}
