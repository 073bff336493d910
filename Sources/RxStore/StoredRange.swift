/// The ranges of the integers the vault's tables hold (docs/format.md, "Values read from the
/// tables"). Each is what rxvault writes, with room to spare, and small enough that the sums
/// rxvault does on a value it read (the next version, the next audit entry, the next write) can
/// never overflow.
public enum StoredRange {
    /// `prescription_version.version`: 1, 2, ... (the search index keeps it in 32 bits).
    public static let version: ClosedRange<Int64> = 1...Int64(Int32.max)
    /// `attachment_chunk.seq`: 0, 1, ... (a 64 KiB chunk each: far beyond any attachment).
    public static let chunk: ClosedRange<Int64> = 0...Int64(Int32.max)
    /// `audit_head.seq`, `vault_state.write_counter` and `key_ring.write_counter`: from 0, below
    /// 2^53 (the largest integer a JSON reader holds exactly), which no vault reaches one write or
    /// one entry at a time.
    public static let counter: ClosedRange<Int64> = 0...((1 << 53) - 1)
    /// `audit_entry.seq`: from 1, as the counters.
    public static let auditEntry: ClosedRange<Int64> = 1...counter.upperBound
    /// `search_index.bucket` and `manifest.bucket`: by the first byte of an id.
    public static let bucket: ClosedRange<Int64> = 0...255
    /// `key_slot.id` (slot 1 is the header's).
    public static let keySlot: ClosedRange<Int64> = 2...8
    /// `vault_header.format_version` and `max_attachment_bytes`: positive here; RxVault refuses a
    /// newer format (66) and a size outside what it writes.
    public static let positive: ClosedRange<Int64> = 1...Int64.max
    /// The KDF costs of the header and the key slots: not negative here; RxVault bounds them further.
    public static let nonNegative: ClosedRange<Int64> = 0...Int64.max
}
