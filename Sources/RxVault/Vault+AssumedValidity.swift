import RxModel
import RxStore

/// The `assumed-validity` setting (format 7, issue 47): how long a prescription with no expiry
/// date written is taken to stay valid, per kind. It lives in the owner's key ring (`KeyRing`,
/// ring schema 2), MAC'd with the state root's counter, so what a command reads is what the
/// owner set last.
extension Vault {
    /// The setting as the owner set it last (verified by the key ring); `none` before format 7
    /// and until it is set.
    public func assumedValidity() throws(VaultError) -> AssumedValidity {
        guard header.formatVersion >= 7 else { return .none }
        return try reading { read in
            _ = try verifiedState(in: read)
            return try storedAssumedValidity()
        }
    }

    /// The setting in the stored ring, unverified: for a caller that verified the ring already
    /// (an owner write verifies it when it begins), or that reads nothing else from it.
    func storedAssumedValidity() throws -> AssumedValidity {
        guard let ring = try store.keyRing() else { return .none }
        guard let content = KeyRing.decode(ring.content) else {
            throw VaultError.integrity(
                "the key ring (the owner's list of key slots and settings) does not decode; run 'rxvault check'")
        }
        return content.assumedValidity ?? .none
    }

    /// Sets the assumed validity (`config set assumed-validity glasses=2y`; `.none` clears it),
    /// written to the audit log. Returns the setting before.
    @discardableResult
    public func setAssumedValidity(_ validity: AssumedValidity) throws(VaultError) -> AssumedValidity {
        try perform { write in
            let before = try storedAssumedValidity()
            write.assumedValidity = validity
            try audit(
                AuditEvent(
                    time: clock.timestamp(), actor: AuditEvent.ownerActor, action: .settingChanged,
                    detail: "assumed-validity \(before) -> \(validity)"))
            return before
        }
    }
}
