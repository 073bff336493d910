/// What `rxvault merge` brought in from another copy, or would with `--dry-run` (issue 48).
public struct MergeReport: Sendable {
    /// Prescriptions the other copy had and this one lacked.
    public var prescriptionsAdded: [PrescriptionID] = []
    /// Prescriptions with versions brought in (their histories joined).
    public var prescriptionsUpdated: [PrescriptionID] = []
    /// Prescriptions the other copy removed after this one last changed them.
    public var prescriptionsRemoved: [PrescriptionID] = []
    /// Prescriptions both copies changed: a merge version chose the newest edit; both stay in the history.
    public var conflicts: [PrescriptionID] = []
    public var versionsAdded = 0
    public var attachmentsAdded = 0
    public var attachmentsRemoved = 0
    public var clientsAdded: [String] = []
    public var clientsRemoved: [String] = []
    public var grantsAdded = 0
    public var grantsRemoved = 0
    /// Grants both copies hold with different terms, now held with the narrower of each term.
    public var grantsNarrowed = 0
    public var patientsAdded = 0
    public var patientsUpdated = 0
    /// Patients both copies changed (the later write's name kept; measurements from both).
    public var patientConflicts: [String] = []
    /// Key slots the other copy added (by id), brought in.
    public var keySlotsAdded: [Int] = []
    /// Key slots removed here because the other copy removed them (or changed their passphrase).
    public var keySlotsRemoved: [Int] = []
    /// Key slots whose passphrase the other copy changed: its slot replaces this one's.
    public var keySlotsChanged: [Int] = []
    /// Settings taken from the other copy, each as `name value`.
    public var settingsChanged: [String] = []
    /// Settings both copies changed, in words (the later change kept).
    public var settingConflicts: [String] = []
    public var auditEntriesJoined = 0
    /// What the merge could not bring or do and says so (a key slot, a client registered twice).
    public var notes: [String] = []
    /// Nothing to bring: the other copy's knowledge is all in this one.
    public var upToDate = false

    /// A record of the vault changed (anything but the audit log).
    public var changedRecords: Bool {
        !(prescriptionsAdded.isEmpty && prescriptionsUpdated.isEmpty && prescriptionsRemoved.isEmpty
            && clientsAdded.isEmpty && clientsRemoved.isEmpty && keySlotsAdded.isEmpty && keySlotsRemoved.isEmpty
            && keySlotsChanged.isEmpty && settingsChanged.isEmpty)
            || attachmentsAdded + attachmentsRemoved + grantsAdded + grantsRemoved + grantsNarrowed + patientsAdded
                + patientsUpdated > 0
    }

    public var changedAnything: Bool { changedRecords || auditEntriesJoined > 0 }

    /// One line for the audit entry that records the merge.
    var summary: String {
        var parts = [
            "\(prescriptionsAdded.count) prescriptions added", "\(prescriptionsUpdated.count) updated",
            "\(prescriptionsRemoved.count) removed", "\(conflicts.count) in conflict",
            "\(attachmentsAdded) attachments added", "\(attachmentsRemoved) removed",
            "\(clientsAdded.count) clients added", "\(clientsRemoved.count) removed",
            "\(grantsAdded) grants added", "\(grantsRemoved) removed", "\(grantsNarrowed) narrowed"
        ]
        if !(keySlotsAdded + keySlotsRemoved + keySlotsChanged).isEmpty {
            parts.append(
                "key slots added \(Self.slots(keySlotsAdded)), removed \(Self.slots(keySlotsRemoved)), changed \(Self.slots(keySlotsChanged))"
            )
        }
        if !settingsChanged.isEmpty { parts.append("settings: " + settingsChanged.joined(separator: ", ")) }
        if !conflicts.isEmpty { parts.append("conflicts: " + conflicts.map(\.short).joined(separator: " ")) }
        return parts.joined(separator: ", ")
    }

    /// `2 3`, or `none`.
    public static func slots(_ ids: [Int]) -> String {
        ids.isEmpty ? "none" : ids.map(String.init).joined(separator: " ")
    }
}
