import RxCrypto
import RxModel
import RxStore

/// Sealing and opening prescription version rows with the owner's keys (DESIGN.md, "Key
/// hierarchy"): a fresh data key per version, wrapped under the key-wrapping key; the content
/// sealed under the data key; the owner's MAC over the whole row. Each is bound to the row's
/// place (vault, prescription, version).
///
/// A value of its own, holding only what opening a row needs (the vault id, the format, two
/// sub-keys; made afresh from the vault each time), so that many rows can be opened on all cores at once: opening is most
/// of an export's work. It knows nothing of patient records; `Vault.open` adds the patient.
struct VersionSealing: Sendable {
    let vaultID: [UInt8]
    let formatVersion: Int
    let keyWrappingKey: SecretBytes
    let recordMACKey: SecretBytes

    /// Seals `record` as a version row. Format 4: the content names its patient record by id
    /// only; the name and birth date live in the patient record.
    func seal(_ record: PrescriptionRecord) throws(VaultError) -> PrescriptionVersionRecord {
        var prescription = record.prescription
        if formatVersion >= 4 {
            guard let patientID = prescription.patient.id else {
                throw .internalError("a prescription to seal has no patient record")
            }
            prescription.patient = Patient(name: "", id: patientID)
        }
        let content = RecordContent(
            schema: RecordContent.currentSchema, recorded: record.recorded, prescription: prescription,
            change: record.change, by: record.by?.text, parents: record.parents, conflict: record.conflict)
        let plaintext: [UInt8]
        do { plaintext = try content.sealedJSON() } catch { throw .internalError("cannot encode a prescription") }
        let dataKey = SecretBytes(randomCount: AEAD.keyLength)
        do {
            let (id, version) = (record.id, record.version)
            let wrappedKey = try AEAD.seal(
                dataKey, key: keyWrappingKey, associatedData: place(.dataKey, id, version: version))
            let sealed = try AEAD.seal(plaintext, key: dataKey, associatedData: place(.content, id, version: version))
            var row = PrescriptionVersionRecord(
                prescriptionID: record.id, version: record.version, wrappedKey: wrappedKey,
                content: sealed, mac: [])
            row.mac = try MAC.authenticate(macMessage(row), key: recordMACKey)
            return row
        } catch {
            throw .internalError(error.description)
        }
    }

    /// Checks the owner's MAC, then unwraps the row's data key and opens its content, both
    /// bound to the row's own place. The MAC matters because clients hold data keys: without it a
    /// client with write access could re-encrypt the content it was granted. The record names its
    /// patient by id only (format 4); `Vault.open` fills the patient in.
    func open(_ row: PrescriptionVersionRecord) throws(VaultError) -> PrescriptionRecord {
        guard MAC.verify(row.mac, macMessage(row), key: recordMACKey) else {
            throw .integrity(
                "prescription \(row.prescriptionID.short) version \(row.version) was altered (its owner MAC does not verify)"
            )
        }
        return try Sealing(vaultID: vaultID).openContent(row, dataKey: try dataKey(of: row))
    }

    /// What the owner's MAC over a version row covers: the whole row in its place.
    func macMessage(_ row: PrescriptionVersionRecord) -> [UInt8] {
        AssociatedData.build(
            .versionRow,
            [
                .bytes(vaultID), .text(row.prescriptionID.hex), .int(row.version),
                .bytes(row.wrappedKey), .bytes(row.content)
            ])
    }

    /// The version's data key, unwrapped with the key-wrapping key.
    func dataKey(of row: PrescriptionVersionRecord) throws(VaultError) -> SecretBytes {
        do {
            return try AEAD.open(
                row.wrappedKey, key: keyWrappingKey,
                associatedData: place(.dataKey, row.prescriptionID, version: row.version))
        } catch {
            throw .integrity(
                "prescription \(row.prescriptionID.short) version \(row.version) failed authentication (altered, moved or damaged)"
            )
        }
    }

    /// What binds a sealed piece of a version to its place (vault, prescription, version).
    private func place(_ purpose: AssociatedData.Purpose, _ id: PrescriptionID, version: Int) -> [UInt8] {
        AssociatedData.object(purpose, vaultID: vaultID, type: Vault.objectType, id: id.hex, version: version)
    }
}
