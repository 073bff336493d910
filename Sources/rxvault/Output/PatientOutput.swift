import ArgumentParser
import Foundation
import RxModel
import RxVault

enum PatientOutput {
    /// A patient and its prescriptions; an expiry is `expires` only when written, and one assumed
    /// (at import, or by the vault's `assumed-validity`) is `assumedExpiry`, as in `show`.
    static func json(_ patient: PatientSummary, _ records: [PrescriptionRecord], assuming validity: AssumedValidity)
        -> JSONValue
    {
        var pairs: [(String, JSONValue)] = [("id", .string(patient.id.hex)), ("name", .string(patient.name))]
        if let dob = patient.birthDate { pairs.append(("birthDate", .string(dob.description))) }
        if let family = patient.family { pairs.append(("family", .string(family))) }
        if let given = patient.given { pairs.append(("given", .array(given.map { .string($0) }))) }
        if !patient.merged.isEmpty { pairs.append(("merged", .array(patient.merged.map { .string($0) }))) }
        pairs.append(
            (
                "prescriptions",
                .array(
                    records.map { record in
                        .object(
                            [
                                ("id", .string(record.id.hex)), ("kind", .string(record.prescription.kind.rawValue)),
                                ("issued", .string(record.prescription.issued.description))
                            ]
                                + (record.prescription.expires.map { [("expires", JSONValue.string($0.description))] }
                                    ?? [])
                                + (record.prescription.assumedExpiry(assuming: validity).map {
                                    [("assumedExpiry", JSONValue.string($0.description))]
                                } ?? []))
                    })
            ))
        return .object(pairs)
    }
}
