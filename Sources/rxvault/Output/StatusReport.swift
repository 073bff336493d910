import Foundation
import RxAgent
import RxCrypto
import RxValidate
import RxVault

/// What `status` says about a vault file, gathered once and printed either way: as text, or as
/// the JSON document of docs/format.md ("status --format json"). The JSON members are the stored
/// properties (sorted by key when written); the text is made from the same values.
struct StatusReport: Encodable {
    struct Slot: Encodable {
        let slot: Int
        let kind: String
        let kdf: KeySlotCost
    }

    /// Whether an agent holds this file (asked of the agent, never its key), and until when.
    struct Agent: Encodable {
        let unlocked: Bool
        var until: String?
        var lifetimeUntil: String?
        var idleTimeoutSeconds: Int?
        var pid: Int?
        var memoryLocked: Bool?
        var note: String?
        /// The text line ("unlocked until 14:05 (agent pid 4242)", "locked (...)").
        let text: String

        enum CodingKeys: String, CodingKey {
            case unlocked, until, lifetimeUntil, idleTimeoutSeconds, pid, memoryLocked, note
        }
    }

    /// A file beside the vault that holds another state of it (`ConflictCopies`).
    struct Copy: Encodable {
        let path: String
        let name: String
        /// `ConflictCopyForm`'s raw value: syncthing, dropbox, nextcloud or vault-copy.
        let form: String
        /// Its mtime, ISO 8601 in UTC.
        let modified: String
        /// As stored, unverified; absent when the file cannot be read as a vault.
        let writeCounter: Int?
        /// The text line ("NAME (Syncthing's conflict copy, write 12, changed ...)").
        let text: String

        enum CodingKeys: String, CodingKey { case path, name, form, modified, writeCounter }

        init(_ copy: ConflictCopy) {
            path = copy.path
            name = copy.name
            form = copy.form.rawValue
            modified = ConflictCopyNotice.isoTime(copy.modified)
            writeCounter = copy.writeCounter
            text = ConflictCopyNotice.describe(copy)
        }
    }

    let path: String
    let vault = true
    let formatVersion: Int
    let vaultID: String
    let kdf: KeySlotCost
    /// A passphrase was given and opened the vault. Not whether an agent holds it (`agent.unlocked`):
    /// named apart so that a script cannot read the one for the other (was `unlocked` before 0.5).
    let passphraseCorrect: Bool
    let maxAttachmentBytes: Int
    let attachmentChecker: String
    let attachmentSandbox: String
    let keySlots: [Slot]
    /// For a client's identity: how many prescriptions it was granted.
    let granted: Int?
    /// nil for a client's identity (an agent holds owners' keys only).
    let agent: Agent?
    let prescriptions: Int?
    let versions: Int?
    let attachments: Int?
    /// Prescriptions in conflict (both copies changed them; `rxvault conflicts`), with the passphrase.
    let inConflict: Int?
    /// Slot 1 is the passphrase `init` set; its cost is the header's KDF (text only).
    let firstSlotIsInit: Bool
    /// Conflict copies and other files of this vault beside it, newest first (empty for a database).
    let conflictCopies: [Copy]

    enum CodingKeys: String, CodingKey {
        case path, vault, formatVersion, vaultID, kdf, passphraseCorrect, maxAttachmentBytes, attachmentChecker,
            attachmentSandbox
        case keySlots, granted, agent, prescriptions, versions, attachments, inConflict, conflictCopies
    }

    init(
        path: String, header: VaultHeader, counts: Vault.Counts?, granted: Int?, agent: Agent?,
        checker: String, sandboxed: Bool, copies: [ConflictCopy]
    ) {
        self.path = path
        formatVersion = header.formatVersion
        vaultID = header.vaultIDHex
        kdf = KeySlotCost(header.kdf)
        passphraseCorrect = counts != nil
        maxAttachmentBytes = header.maxAttachmentBytes
        attachmentChecker = checker
        attachmentSandbox = sandboxed ? "seccomp" : "rlimits-only"
        keySlots = header.slots.map { Slot(slot: $0.id, kind: $0.kind.rawValue, kdf: KeySlotCost($0.kdf)) }
        self.granted = granted
        self.agent = agent
        prescriptions = counts?.prescriptions
        versions = counts?.versions
        attachments = counts?.attachments
        inConflict = counts?.inConflict
        firstSlotIsInit = header.slots.first?.id == 1
        conflictCopies = copies.map(Copy.init)
        kdfText =
            "\(header.kdfAlgorithm), \(kdf.preset ?? "custom") (ops \(header.kdf.opsLimit), memory \(header.kdf.memLimit / (1 << 20)) MiB)"
        slotsText = header.slots.map { "\($0.id) \($0.kind.rawValue): \(KeySlotText.cost($0.kdf))" }.joined(
            separator: "; ")
    }

    private let kdfText: String
    private let slotsText: String

    /// Written as the CLI's other Codable documents are (`AttachmentJSON.encoder()`).
    func json() throws -> String {
        String(decoding: try AttachmentJSON.encoder().encode(self), as: UTF8.self)
    }

    var text: String {
        var lines = [
            ("vault", path),
            ("format", "rxvault vault, format version \(formatVersion)"),
            ("vault id", vaultID),
            ("kdf", firstSlotIsInit ? kdfText : "slot 1 removed; see the key slots"),
            ("key slots", slotsText),
            ("attachments", "PNG or PDF, up to \(ByteCount(maxAttachmentBytes)) each"),
            ("file checker", attachmentChecker)
        ]
        if let agent { lines.append(("agent", agent.text)) }
        if let prescriptions, let versions, let attachments {
            lines.append(("passphrase", "correct"))
            lines.append(
                (
                    "prescriptions",
                    "\(prescriptions) (\(counted(versions, "version")), \(counted(attachments, "attachment")))"
                ))
            if let inConflict, inConflict > 0 {
                lines.append(
                    ("in conflict", "\(counted(inConflict, "prescription")) changed in two copies: 'rxvault conflicts'")
                )
            }
        }
        if let granted { lines.append(("granted", "\(granted) prescriptions shared with this identity")) }
        for (i, copy) in conflictCopies.enumerated() {
            lines.append((i == 0 ? "conflict copies" : "", copy.text))
        }
        if !conflictCopies.isEmpty {
            lines.append(("", ConflictCopyNotice.advice(count: conflictCopies.count)))
        }
        return Table.keyValue(lines)
    }

    /// Nothing beyond the header could be said: no passphrase, no identity, no agent.
    var saysOnlyTheHeader: Bool { !passphraseCorrect && granted == nil && agent?.unlocked != true }
}
