import RxCrypto
import RxModel
import RxStore

/// Sealing and opening patient rows with the owner's keys (DESIGN.md, "Patients"): the record
/// sealed under the owner-info sub-key, bound to the vault and the patient's id, and the owner's
/// MAC over the row. A value holding only what never changes while a vault is open, so that a
/// directory of 100,000 patients can be opened on all cores at once (`Vault.loadPatients`).
struct PatientSealing: Sendable {
    let vaultID: [UInt8]
    let ownerInfoKey: SecretBytes
    let recordMACKey: SecretBytes

    /// The row for `summary`, sealed and MACed.
    func seal(_ summary: PatientSummary) throws -> PatientRecord {
        let info = PatientInfo(
            schema: 1, name: summary.name, birthDate: summary.birthDate,
            merged: summary.merged.isEmpty ? nil : summary.merged, family: summary.family, given: summary.given,
            measurements: summary.measurements.isEmpty ? nil : summary.measurements.map(StoredMeasurement.init),
            by: summary.changed?.text)
        var row = PatientRecord(
            id: summary.id,
            info: try AEAD.seal(info.sealedJSON(), key: ownerInfoKey, associatedData: place(summary.id)),
            mac: [])
        row.mac = try MAC.authenticate(macMessage(row), key: recordMACKey)
        return row
    }

    /// Checks the owner's MAC, then opens and reads the record.
    func open(_ row: PatientRecord) throws -> PatientSummary {
        let id = row.id
        guard MAC.verify(row.mac, macMessage(row), key: recordMACKey) else {
            throw VaultError.integrity("patient \(id.short) is forged or altered (its owner MAC does not verify)")
        }
        let info: PatientInfo
        do {
            let plain = try AEAD.open(row.info, key: ownerInfoKey, associatedData: place(id))
            info = try plain.withUnsafeBytes { try PatientInfo(json: $0) }
        } catch {
            throw VaultError.integrity("patient \(id.short) failed authentication (altered, moved or damaged)")
        }
        let measurements: [EyeMeasurement]
        do { measurements = try (info.measurements ?? []).map { try $0.measurement() } } catch {
            throw VaultError.integrity("patient \(id.short)'s measurements do not read: \(error)")
        }
        var summary = PatientSummary(
            id: id, name: info.name, birthDate: info.birthDate, merged: info.merged ?? [], family: info.family,
            given: info.given, measurements: measurements)
        if let by = info.by {
            guard let stamp = WriteStamp(text: by) else {
                throw VaultError.integrity("patient \(id.short) names no write that wrote it")
            }
            summary.changed = stamp
        }
        return summary
    }

    /// What the owner's MAC over a patient row covers.
    func macMessage(_ row: PatientRecord) -> [UInt8] {
        AssociatedData.build(.patientRow, [.bytes(vaultID), .text(row.id.hex), .bytes(row.info)])
    }

    /// What binds a sealed patient record to its place (the owner-info sealing's fields).
    private func place(_ id: PatientID) -> [UInt8] {
        AssociatedData.build(.patientInfo, [.bytes(vaultID), .text(id.hex)])
    }
}
