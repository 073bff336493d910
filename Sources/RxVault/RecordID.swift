import RxCrypto

@_exported import struct RxStore.AttachmentID
@_exported import struct RxStore.ClientID
@_exported import struct RxStore.GrantID
@_exported import struct RxStore.PatientID
@_exported import struct RxStore.PrescriptionID
@_exported import enum RxStore.RecordID
@_exported import protocol RxStore.RecordIdentifier

// The ids are the store's (RxStore/RecordStore/RecordIDs.swift), one type per kind of row, and
// part of this module's API: re-exported, so the CLI and the API name them without importing
// the storage layer.

extension RecordIdentifier {
    /// A new id: 16 random bytes.
    public static func random() -> Self {
        Self(bytes: randomBytes(RecordID.byteCount))!
    }

    /// The id `hex` spells, where RxVault keeps ids as text (the manifest, sealed grant info, the
    /// audit log): an integrity error if it is not one.
    static func checked(_ hex: String) throws(VaultError) -> Self {
        guard let id = Self(hex: hex) else { throw .integrity("a stored id is malformed") }
        return id
    }

    /// Normalises what a person typed as an id of this kind or a prefix of one (`RecordID.prefix`).
    public static func prefix(from text: String) throws(VaultError) -> String {
        try RecordID.prefix(from: text)
    }
}

extension RecordID {
    /// Normalises what a person typed as an id or prefix: lower case, hex only, long enough.
    public static func prefix(from text: String) throws(VaultError) -> String {
        let lowered = text.lowercased()
        guard (minimumPrefixLength...length).contains(lowered.count), isHex(lowered) else { throw .malformedID(text) }
        return lowered
    }
}

extension String {
    func padding(_ length: Int) -> String { String(repeating: "0", count: Swift.max(0, length - count)) + self }
}
