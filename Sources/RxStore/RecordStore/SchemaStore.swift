/// Which format the stored tables are in, and the steps from one format to the next
/// (docs/format.md). Each step runs inside the caller's write transaction (`StoreEngine.write`),
/// so an upgrade is stored whole or not at all.
///
/// A store is created at the current format; the steps exist for vaults an earlier rxvault made.
/// An engine that only ever holds vaults created at the current format (a server database, into
/// which older vaults are copied after `upgrade`) answers every step with
/// `StoreError.unsupportedVersion`.
public protocol SchemaStore: AnyObject {
    /// The format the stored tables are in (`1` until upgraded). Not authenticated: RxVault
    /// requires it to equal the header's format version, which is.
    func schemaVersion() throws(StoreError) -> Int
    /// Format 1 to 2: adds the state root and manifest, and moves the header to format 2 with the
    /// root key re-wrapped for it.
    func upgradeToFormat2(wrappedRootKey: [UInt8]) throws(StoreError)
    /// Format 2 to 3: rebuilds the client and grant tables in their format-3 form holding
    /// `clients` and `grants` (already in that form), and moves the header to format 3.
    func upgradeToFormat3(wrappedRootKey: [UInt8], clients: [ClientRecord], grants: [GrantRecord]) throws(StoreError)
    /// Format 4, patients: creates the patient table (the header and schema version move with
    /// `upgradeToFormat4`).
    func createPatientTable() throws(StoreError)
    /// Format 4, key slots: creates the key-slot and key-ring tables.
    func upgradeKeySlotsToFormat4() throws(StoreError)
    /// Moves the header to format 4 with the root key re-wrapped for it, and the schema version
    /// to 4 (after each format-4 part added its tables).
    func upgradeToFormat4(wrappedRootKey: [UInt8]) throws(StoreError)
    /// Format 4 to 5: no table changes. The header and the schema version move to 5 (RxVault
    /// moves the state root to its schema 3 in the same transaction). Every engine supports it:
    /// a server database made in format 4 is upgraded in place.
    func upgradeToFormat5() throws(StoreError)
    /// Format 5 to 6: no table changes (grants may carry measurements inside their sealed
    /// parts). The header and the schema version move to 6; every engine supports it.
    func upgradeToFormat6() throws(StoreError)
    /// Format 6 to 7: no table changes (the key ring's content and records' sealed content may
    /// say more). The header and the schema version move to 7; every engine supports it.
    func upgradeToFormat7() throws(StoreError)
}
