import RxModel

/// The settings merged (issue 48; docs/format.md, "Merge rules"): `max-attachment-size` and
/// `assumed-validity`, the two `rxvault config` knows, each stamped in the key ring by the write
/// that last changed it (`KeyRingHistory.settings`). A setting changed in one copy only applies;
/// changed in both, the change with the greater stamp wins (the choice every copy makes alike,
/// as for a patient both renamed) and the report says so. A setting without a stamp has not
/// changed since format 8 began, which both copies have seen.
extension CopyMerge {
    mutating func mergeSettings(_ ourSide: CopySnapshot, _ theirSide: CopySnapshot, into history: inout KeyRingHistory)
        throws
    {
        if let bytes = decide(
            .maxAttachmentSize, ourSide.header.maxAttachmentBytes, theirSide.header.maxAttachmentBytes, ourSide,
            theirSide, into: &history, describe: { "\($0) bytes" })
        {
            try vault.store.setMaxAttachmentBytes(bytes)
        }
        if let validity = decide(
            .assumedValidity, ourSide.assumedValidity, theirSide.assumedValidity, ourSide, theirSide,
            into: &history, describe: { $0.description })
        {
            write.assumedValidity = validity
        }
    }

    /// The other copy's value when it is the one to keep, else nil; records the stamp kept.
    private mutating func decide<T: Equatable>(
        _ setting: KeyRingHistory.Setting, _ mine: T, _ their: T, _ ourSide: CopySnapshot, _ theirSide: CopySnapshot,
        into history: inout KeyRingHistory, describe: (T) -> String
    ) -> T? {
        let myStamp = ourSide.ringHistory.settings[setting]
        let theirStamp = theirSide.ringHistory.settings[setting]
        guard mine != their else {
            // The same value: the greater stamp, so both copies keep the same ring.
            history.settings[setting] = [myStamp, theirStamp].compactMap { $0 }.max()
            return nil
        }
        let theyKnowMine = myStamp.map { $0.isSeen(by: theirs) } ?? true
        let iKnowTheirs = theirStamp.map { $0.isSeen(by: ours) } ?? true
        switch (theyKnowMine, iKnowTheirs) {
        case (true, false):
            history.settings[setting] = theirStamp
            report.settingsChanged.append("\(setting.name) \(describe(their))")
            return their
        case (false, false):
            let theirsLater = theirStamp! > myStamp!
            let kept = theirsLater ? their : mine
            history.settings[setting] = theirsLater ? theirStamp : myStamp
            report.settingConflicts.append(
                "\(setting.name) was changed in both copies (\(describe(mine)) here, \(describe(their)) there): the later change is kept, \(describe(kept))"
            )
            if theirsLater { report.settingsChanged.append("\(setting.name) \(describe(their))") }
            return theirsLater ? their : nil
        case (false, true):
            return nil
        case (true, true):
            // Neither change is news to the other copy (both made before format 8 stamped
            // settings): nothing tells which came later, and this copy's stays.
            report.notes.append(
                "\(setting.name) differs between the copies (\(describe(mine)) here, \(describe(their)) there), both set before settings carried stamps: this copy's is kept"
            )
            return nil
        }
    }
}
