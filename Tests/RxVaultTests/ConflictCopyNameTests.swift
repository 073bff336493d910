import RxVault
import Testing

/// The sync tools' names for a conflict copy, as each tool's source makes them (Syncthing's
/// `conflictName` in lib/model/folder_sendrecv.go; the Nextcloud and ownCloud desktop clients'
/// `Utility::makeConflictFileName`, and their older `_conflict-` form; Dropbox's documented
/// "(... conflicted copy YYYY-MM-DD)"), and names that only look like them.
@Suite struct ConflictCopyNameTests {
    func form(_ name: String, of vault: String = "vault.rxv") -> ConflictCopyForm? {
        ConflictCopyName.form(of: name, copyOf: vault)
    }

    @Test func syncthingPutsItsMarkerBeforeTheLastExtension() {
        #expect(form("vault.sync-conflict-20261207-101500-ABCDEFG.rxv") == .syncthing)
        #expect(form("my.vault.sync-conflict-20261207-101500-7QRST2Z.rxv", of: "my.vault.rxv") == .syncthing)
        #expect(form("vault.sync-conflict-20261207-101500-ABCDEFG", of: "vault") == .syncthing)
        // Go's filepath.Ext takes a leading dot as the extension: the marker goes before it.
        #expect(form(".sync-conflict-20261207-101500-ABCDEFG.vault", of: ".vault") == .syncthing)
    }

    @Test func notSyncthingsForm() {
        for name in [
            "vault.sync-conflict-20261207-101500-abcdefg.rxv", // device ids are capitals and digits
            "vault.sync-conflict-2026127-101500-ABCDEFG.rxv", // seven-digit date
            "vault.sync-conflict-20261207-101500-.rxv", // no device
            "vault.sync-conflict-20261207-101500-ABCDEFG.rxv-wal", // another extension
            "other.sync-conflict-20261207-101500-ABCDEFG.rxv", // another file's copy
            "vault.rxv.sync-conflict-20261207-101500-ABCDEFG", // not where Syncthing puts it
            "vault.rxv"
        ] {
            #expect(form(name) == nil, "\(name)")
        }
    }

    @Test func dropboxNamesTheHostOrNothing() {
        #expect(form("vault (conflicted copy 2026-12-07).rxv") == .dropbox)
        #expect(form("vault (Sam's conflicted copy 2026-12-07).rxv") == .dropbox)
        #expect(form("vault (Sam\u{2019}s conflicted copy 2026-12-07).rxv") == .dropbox)
        #expect(form("vault (Sam's MacBook Pro's conflicted copy 2026-12-07).rxv") == .dropbox)
        #expect(form("vault (Sam's conflicted copy 2026-12-07 (1)).rxv") == .dropbox)
        #expect(form("vault (conflicted copy 2026-12-07)", of: "vault") == .dropbox)
    }

    @Test func notDropboxsForm() {
        for name in [
            "vault (conflicted copy).rxv", "vault (copy 2026-12-07).rxv", "vault (Sam conflicted copy 2026-12-07).rxv",
            "vault (conflicted copy 2026-12-07 (x)).rxv", "vault (conflicted copy 2026-12-07).rxv.bak",
            "vault(conflicted copy 2026-12-07).rxv", "vault (conflicted copy 2026-12-7).rxv"
        ] {
            #expect(form(name) == nil, "\(name)")
        }
    }

    @Test func nextcloudAndOwnCloudBothForms() {
        #expect(form("vault (conflicted copy 2026-12-07 101500).rxv") == .nextcloud)
        #expect(form("vault (conflicted copy sam 2026-12-07 101500).rxv") == .nextcloud)
        #expect(form("vault (conflicted copy Sam Rivera 2026-12-07 101500).rxv") == .nextcloud)
        #expect(form("vault_conflict-20261207-101500.rxv") == .nextcloud)
        #expect(form("vault_conflict_sam-20261207-101500.rxv") == .nextcloud)
        // The Qt clients take a leading dot as part of the name, not as an extension.
        #expect(form(".vault (conflicted copy 2026-12-07 101500)", of: ".vault") == .nextcloud)
        #expect(form(".vault_conflict-20261207-101500", of: ".vault") == .nextcloud)
    }

    @Test func notNextcloudsForm() {
        for name in [
            "vault_conflict-2026127-101500.rxv", "vault_conflict_-20261207-101500.rxv", "vault_conflict-20261207.rxv",
            "vault (conflicted copy 2026-12-07 1015).rxv", "vault (conflicted copy sam2026-12-07 101500).rxv",
            "vault.rxv_conflict-20261207-101500"
        ] {
            #expect(form(name) == nil, "\(name)")
        }
    }

    @Test func eachFormSaysWhoseItIs() {
        #expect(ConflictCopyForm.syncthing.described.contains("Syncthing"))
        #expect(ConflictCopyForm.vaultCopy.rawValue == "vault-copy")
        #expect(Set(ConflictCopyForm.allCases.map(\.described)).count == ConflictCopyForm.allCases.count)
    }
}
