import RxModel
import RxVault

/// When a prescription last changed for one client: the `meta.lastUpdated` it is served with and
/// what `_lastUpdated` compares (docs/api.md, "Keeping a copy in step").
///
/// A client's copy goes stale when a new version is recorded (an edit, or a re-key: a revoke
/// or another client's removal stores the same content under a new key), when the prescription
/// is granted to it (an old prescription appears in its view), and when an attachment it may
/// read is added. So the time is the latest of the newest version's, the client's own grant's,
/// and, where that grant includes attachments, the newest attachment's. Nothing else counts:
/// not another client's grant, and not an attachment this client may not read, so the time
/// tells a client nothing its grant does not show it.
enum ClientLastUpdated {
    /// The time, in rxvault's one timestamp form (`YYYY-MM-DDTHH:MM:SSZ`), so the latest is the
    /// greatest text.
    static func of(_ record: PrescriptionRecord, grant: GrantSummary, newestAttachment: String?) -> String {
        var latest = max(record.recorded, grant.granted)
        if grant.includesAttachments, let added = newestAttachment { latest = max(latest, added) }
        return latest
    }

    /// The newest version as the client is served it: the API's rendering, `meta.lastUpdated` this
    /// client's time.
    static func resource(_ record: PrescriptionRecord, lastUpdated: String) -> JSONValue {
        var resource = FHIR.visionPrescriptionResource(record, for: .api)
        resource["meta"] = .fields([
            "lastUpdated": .string(lastUpdated), "versionId": .string(String(record.version))
        ])
        return resource
    }
}
