/// What one `rxvault sync` did: what it pulled and merged, what it pushed, and how much moved.
public struct SyncReport: Sendable {
    /// The devices whose state was pulled and merged, each with what its merge brought in.
    public var merged: [(device: String, report: MergeReport)] = []
    /// This device pushed its state (its head was replaced).
    public var pushed = false
    /// Heads read (every device that has pushed to the remote).
    public var headsRead = 0
    /// Chunks read from the remote, and their sealed bytes.
    public var chunksDownloaded = 0
    public var bytesDownloaded = 0
    /// Chunks a pulled state shared with this device's own snapshot (not read from the remote).
    public var chunksReused = 0
    /// Chunks written to the remote, and their sealed bytes; chunks it had already.
    public var chunksUploaded = 0
    public var bytesUploaded = 0
    public var chunksAlreadyThere = 0
    /// Pieces removed after the push: no head names them, and none was written or relied on
    /// for a day (`FolderRemote.pruneAfter`).
    public var chunksPruned = 0
    public var bytesPruned = 0
    /// Prescriptions in conflict after the sync's merges (left for the owner: a sync never resolves one).
    public var conflicts: [PrescriptionID] = []

    /// Nothing was pulled or pushed: this device and the remote were in step.
    public var inStep: Bool { merged.isEmpty && !pushed }
}
