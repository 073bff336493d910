/// What RxVault needs from storage, and nothing more: one protocol per table or group of tables
/// (the files beside this one), and the engine's own part (`StoreEngine`: transactions, upkeep,
/// its structural check). The table requirements are written once for every engine that speaks
/// SQL (`SQLStatements`, `Sources/RxStore/SQL/`); SQLite (`SQLiteRecordStore`, in `SQLite/`) and
/// a server engine (PostgreSQL, for a practice) each add a connection, a row reader and a
/// dialect, and RxVault never asks which engine it holds.
///
/// Implementations store what they are given: ciphertext and random ids. They never see a key.
///
/// What they hand back is checked where it is read: every integer within its `StoredRange`,
/// every id 32 lower-case hex digits (an id type only ever holds such), every value of its
/// column's type and not NULL unless the column may be, fixed-length blobs of their length. A
/// row that breaks this is `StoreError.corrupt` naming the table, the row and the column.
/// RxVault counts on it: it adds one to a stored version or sequence number, and indexes by a
/// stored bucket, without checking again.
///
/// Every method runs inside the caller's transaction when there is one (`StoreEngine.write`,
/// `StoreEngine.read`); the writes only ever run inside `write`.
public protocol RecordStore: AnyObject, VaultHeaderStore, KeySlotStore, SchemaStore, PrescriptionStore, AttachmentStore,
    ClientStore, GrantStore, SearchIndexStore, AuditLogStore, StateRootStore, PatientStore,
    StoreEngine
{}
