import Foundation
import RxCrypto
import RxStore
import RxValidate

/// More than one way in (format 4; DESIGN.md, "Key hierarchy"): passphrase slots, recovery
/// codes, changing a slot's passphrase or cost, and the settings the key ring authenticates.
/// Every change is one owner write: the upgrade to format 4 first if needed, an audit entry,
/// and the key ring rewritten with the new state root.
extension Vault {
    /// Longest label a slot may carry.
    public static let maxSlotLabelLength = 64

    /// The key slots, each with its label (opened with the owner key) and KDF costs, after
    /// the key ring verified them.
    public func keySlots() throws(VaultError) -> [KeySlotSummary] {
        try reading { read in
            _ = try verifiedState(in: read)
            let current = try VaultHeader(store.header(), slots: store.keySlots())
            return try current.slots.map { slot in
                var info: KeySlotInfo?
                if slot.id > 1 { info = try openSlotInfo(slot.info, id: slot.id, kind: slot.kind) }
                return KeySlotSummary(
                    id: slot.id, kind: slot.kind, label: info?.label, created: info?.created, kdf: slot.kdf,
                    isCurrent: slot.id == openedSlot)
            }
        }
    }

    /// Adds a passphrase slot wrapping the root key under `passphrase` with `kdf`'s costs;
    /// returns its id. The derivation runs before the write transaction begins.
    public func addPassphraseSlot(passphrase: SecretBytes, kdf: PasswordKDF, label: String?) throws(VaultError) -> Int {
        guard passphrase.count > 0 else { throw .internalError("empty passphrase") }
        try Self.checkLabel(label)
        let salt = randomBytes(PasswordKDF.saltLength)
        let kek: SecretBytes
        do { kek = try kdf.deriveKey(passphrase: passphrase, salt: salt) } catch {
            throw .internalError(error.description)
        }
        return try addSlot(kind: .passphrase, algorithm: PasswordKDF.algorithmName, kdf: kdf, salt: salt, label: label)
        { _ in kek }
    }

    /// Adds a recovery slot for a new random code; returns its id and the code (shown once).
    public func addRecoverySlot(label: String?) throws(VaultError) -> (slot: Int, code: RecoveryCode) {
        try Self.checkLabel(label)
        let code = RecoveryCode.generate()
        let salt = randomBytes(RecoveryKDF.saltLength)
        let vaultID = header.vaultID
        let id = try addSlot(kind: .recovery, algorithm: RecoveryKDF.algorithmName, kdf: nil, salt: salt, label: label)
        { id in
            try RecoveryKDF.deriveKey(
                secret: code.secret, context: KeySlot.recoveryContext(vaultID: vaultID, id: id, salt: salt))
        }
        return (id, code)
    }

    private func addSlot(
        kind: KeySlot.Kind, algorithm: String, kdf: PasswordKDF?, salt: [UInt8], label: String?,
        kek: (Int) throws -> SecretBytes
    ) throws(VaultError) -> Int {
        let id: Int = try perform { write in
            let taken = Set(try store.keySlots().map(\.id))
            guard let id = (2...KeySlot.maximumID).first(where: { !taken.contains($0) }) else {
                throw VaultError.refused(
                    "every key slot (2 to \(KeySlot.maximumID)) is in use; remove one first ('rxvault key remove SLOT')"
                )
            }
            let created = clock.timestamp()
            let ad = KeySlot.associatedData(
                formatVersion: header.formatVersion, vaultID: header.vaultID, id: id, kind: kind, algorithm: algorithm,
                opsLimit: kdf?.opsLimit ?? 0, memLimit: kdf?.memLimit ?? 0, salt: salt)
            let wrapped = try AEAD.seal(rootKey, key: try kek(id), associatedData: ad)
            let info = try sealOwnerInfo(
                KeySlotInfo(label: label, created: created), purpose: .keySlotInfo,
                fields: [.int(id), .text(kind.rawValue)])
            try store.upsert(
                KeySlotRecord(
                    id: id, kind: kind.rawValue, kdfAlgorithm: algorithm, kdfOpsLimit: kdf?.opsLimit ?? 0,
                    kdfMemLimit: kdf?.memLimit ?? 0, kdfSalt: salt, wrappedRootKey: wrapped, info: info))
            try audit(
                AuditEvent(
                    time: created, actor: AuditEvent.ownerActor, action: .keyAdded,
                    detail: Self.describeSlot(id: id, kind: kind, label: label, kdf: kdf)))
            return id
        }
        try reloadHeader()
        return id
    }

    /// Removes a key slot. Refused when it would leave the vault without a passphrase slot (a
    /// vault only a recovery code opens is one `passwd --recovery-key-file` away from being
    /// usable again, so the last passphrase is changed, never removed). Removing slot 1 empties
    /// the header's wrapping.
    public func removeKeySlot(_ id: Int) throws(VaultError) {
        try perform { write in
            let current = try VaultHeader(store.header(), slots: store.keySlots())
            guard let slot = current.slots.first(where: { $0.id == id }) else { throw VaultError.keySlotNotFound(id) }
            let passphrases = current.slots.filter { $0.kind == .passphrase }
            if slot.kind == .passphrase && passphrases.count == 1 {
                let recovery = current.slots.contains { $0.kind == .recovery }
                throw VaultError.refused(
                    "slot \(id) is the vault's last passphrase: removing it would leave "
                        + (recovery ? "only the recovery code" : "no way into the vault")
                        + "; change it with 'rxvault passwd' instead, or add another passphrase first ('rxvault key add')"
                )
            }
            var label: String?
            if id == 1 {
                let r = current.record
                try store.replaceHeaderKey(
                    opsLimit: r.kdfOpsLimit, memLimit: r.kdfMemLimit, salt: r.kdfSalt, wrapped: [])
            } else {
                label = try openSlotInfo(slot.info, id: slot.id, kind: slot.kind).label
                try store.deleteKeySlot(id)
            }
            try audit(
                AuditEvent(
                    time: clock.timestamp(), actor: AuditEvent.ownerActor, action: .keyRemoved,
                    detail: Self.describeSlot(id: id, kind: slot.kind, label: label, kdf: slot.kdf)))
        }
        try reloadHeader()
        purge()
    }

    /// The slot `passwd` changes: the passphrase slot that opened the vault, or slot 1 when a
    /// recovery code (or the agent's root key) opened it.
    public var passphraseSlotToChange: Int { openedWithRecovery ? 1 : openedSlot ?? 1 }

    /// Re-wraps the root key under `newPassphrase` in the slot `passphraseSlotToChange` names,
    /// with a new salt and `kdf`'s costs (nil: the slot's own). No record is rewritten;
    /// afterwards the slot's old passphrase no longer opens the vault (backups made with it
    /// still need it). After a recovery, slot 1 is filled again if it had been removed.
    @discardableResult
    public func changePassphrase(to newPassphrase: SecretBytes, kdf newKDF: PasswordKDF? = nil) throws(VaultError)
        -> Int
    {
        guard newPassphrase.count > 0 else { throw .internalError("empty passphrase") }
        let target = passphraseSlotToChange
        let kdf = newKDF ?? header.slots.first(where: { $0.id == target })?.kdf ?? header.kdf
        let salt = randomBytes(PasswordKDF.saltLength)
        let kek: SecretBytes
        do { kek = try kdf.deriveKey(passphrase: newPassphrase, salt: salt) } catch {
            throw .internalError(error.description)
        }
        let recovered = openedWithRecovery
        try perform { write in
            // Sealed here, after an older vault was upgraded, so the format version in the
            // associated data is the one the header now says.
            let oldKDF: PasswordKDF?
            if target == 1 {
                oldKDF = header.record.wrappedRootKey.isEmpty ? nil : header.kdf
                let ad = VaultHeader.rootKeyAssociatedData(
                    formatVersion: header.formatVersion, vaultID: header.vaultID, kdf: kdf, salt: salt)
                try store.replaceHeaderKey(
                    opsLimit: kdf.opsLimit, memLimit: kdf.memLimit, salt: salt,
                    wrapped: try AEAD.seal(rootKey, key: kek, associatedData: ad))
            } else {
                guard let row = try store.keySlots().first(where: { $0.id == target }),
                    row.kind == KeySlot.Kind.passphrase.rawValue
                else {
                    throw VaultError.keySlotNotFound(target)
                }
                oldKDF = PasswordKDF(opsLimit: row.kdfOpsLimit, memLimit: row.kdfMemLimit)
                let ad = KeySlot.associatedData(
                    formatVersion: header.formatVersion, vaultID: header.vaultID, id: target, kind: .passphrase,
                    algorithm: PasswordKDF.algorithmName, opsLimit: kdf.opsLimit, memLimit: kdf.memLimit, salt: salt)
                try store.upsert(
                    KeySlotRecord(
                        id: target, kind: row.kind, kdfAlgorithm: PasswordKDF.algorithmName, kdfOpsLimit: kdf.opsLimit,
                        kdfMemLimit: kdf.memLimit, kdfSalt: salt,
                        wrappedRootKey: try AEAD.seal(rootKey, key: kek, associatedData: ad),
                        info: row.info))
            }
            var detail = "slot \(target) (\(Self.describe(kdf))"
            if let oldKDF, oldKDF != kdf { detail += ", was \(Self.describe(oldKDF))" }
            detail += ")"
            if recovered, let slot = openedSlot { detail += " with the recovery code of slot \(slot)" }
            try audit(
                AuditEvent(
                    time: clock.timestamp(), actor: AuditEvent.ownerActor, action: .passphraseChanged, detail: detail))
        }
        try reloadHeader()
        purge()
        return target
    }

    /// Changes the largest attachment the vault accepts (`config set max-attachment-size`).
    /// Returns the limit before.
    @discardableResult
    public func setMaxAttachmentBytes(_ bytes: Int) throws(VaultError) -> Int {
        guard ValidationLimits.maxBytesRange.contains(bytes) else {
            throw .invalidInput(
                "the attachment size limit must be between \(ValidationLimits.maxBytesRange.lowerBound) and \(ValidationLimits.maxBytesRange.upperBound) bytes"
            )
        }
        let before: Int = try perform { write in
            let before = header.maxAttachmentBytes
            try store.setMaxAttachmentBytes(bytes)
            try audit(
                AuditEvent(
                    time: clock.timestamp(), actor: AuditEvent.ownerActor, action: .settingChanged,
                    detail: "max-attachment-size \(before) -> \(bytes) bytes"))
            return before
        }
        try reloadHeader()
        return before
    }

    /// The settings as the owner last wrote them (verified by the key ring).
    public func verifiedHeader() throws(VaultError) -> VaultHeader {
        try reading { read in
            _ = try verifiedState(in: read)
            return try VaultHeader(store.header(), slots: store.keySlots())
        }
    }

    // MARK: - Helpers

    func reloadHeader() throws(VaultError) {
        header = try read { try VaultHeader(store.header(), slots: store.keySlots()) }
    }

    func openSlotInfo(_ sealed: [UInt8], id: Int, kind: KeySlot.Kind) throws -> KeySlotInfo {
        try openOwnerInfo(
            sealed, purpose: .keySlotInfo, fields: [.int(id), .text(kind.rawValue)], place: "key slot \(id)'s label")
    }

    static func checkLabel(_ label: String?) throws(VaultError) {
        guard let label else { return }
        guard !label.isEmpty, label.count <= maxSlotLabelLength,
            !label.unicodeScalars.contains(where: {
                $0.properties.generalCategory == .control || $0.properties.generalCategory == .format
            })
        else {
            throw .invalidInput(
                "a key slot's label is 1 to \(maxSlotLabelLength) characters, without control characters")
        }
    }

    static func describe(_ kdf: PasswordKDF) -> String {
        kdf.preset?.rawValue ?? "ops \(kdf.opsLimit), \(kdf.memLimit >> 20) MiB"
    }

    static func describeSlot(id: Int, kind: KeySlot.Kind, label: String?, kdf: PasswordKDF?) -> String {
        var text = "slot \(id) \(kind.rawValue)"
        if let kdf { text += " (\(describe(kdf)))" }
        if let label { text += " \"\(label)\"" }
        return text
    }
}
