import Foundation
import RxCrypto
import RxTestSupport
import Testing

@testable import RxVault

/// `BackupFolder.prunePlan` on a folder of real backups: the policy's decision, bounded by the
/// rule that the newest backup that verifies, and every newer one, is never removed.
@Suite struct BackupPrunePlanTests {
    static func day(_ n: Int) -> BackupTime { BackupTime(iso: "2026-06-1\(n)T02:00:00Z")! }

    /// Verifies as `backup prune --verify` with the passphrase does (`BackupCheck`).
    static func opens(_ t: TestVault) -> (BackupFolder.Entry) -> String? {
        let check = BackupCheck(vaultKey: .passphrase(t.passphrase), agePassphrase: nil, identities: nil)
        return { entry in
            let outcome = check.check(entry, in: t.folder.path)
            return outcome.isOK ? nil : outcome.text
        }
    }

    @Test func aCheckOpensWhatItsKeysOpenAndSaysWhyNotOfTheRest() throws {
        let (t, vault, code) = try BackupOpenTests.vault(recovery: true)
        let slots = try BackupOpenTests.backup(t, vault, time: Self.day(1))
        let identity = try AgeIdentity.generate()
        let recipients = try BackupOpenTests.backup(
            t, vault, to: [.x25519(identity.recipient)], waysIn: false, time: Self.day(2))
        let logN = BackupFile.scryptWorkFactor(for: vault.header)
        let passphraseOnly = try BackupOpenTests.backup(
            t, vault, to: [.scrypt(passphrase: t.passphrase, logN: logN)], waysIn: false, time: Self.day(3))
        let before = try FileManager.default.contentsOfDirectory(atPath: t.folder.path).sorted()
        let entries = try BackupFolder.scan(t.folder.path, readWhole: true)
        func outcomes(_ check: BackupCheck) -> [String: String] {
            Dictionary(uniqueKeysWithValues: entries.map { ($0.path, check.check($0, in: t.folder.path).text) })
        }
        #expect(
            outcomes(BackupCheck(vaultKey: .passphrase(t.passphrase), agePassphrase: nil, identities: [identity])) == [
                slots: "ok", recipients: "ok", passphraseOnly: "ok"
            ])
        let byCode = outcomes(BackupCheck(vaultKey: .recoveryCode(code!), agePassphrase: nil, identities: nil))
        #expect(byCode[slots] == "ok")
        #expect(byCode[recipients] == "not checked: made to recipients: give --age-identity")
        #expect(
            byCode[passphraseOnly]?.hasPrefix("not opened: opens only with the passphrase the vault had on 2026-06-13")
                == true)
        let wrong = outcomes(BackupCheck(vaultKey: .passphrase(secret("wrong")), agePassphrase: nil, identities: nil))
        #expect(wrong[slots]?.hasPrefix("not opened: the passphrase opens none of its key slots") == true)
        // Only what the check made is gone: the folder holds the backups and the vault as before.
        #expect(try FileManager.default.contentsOfDirectory(atPath: t.folder.path).sorted() == before)
    }

    @Test func theNewestThatVerifiesIsKeptWhateverThePolicySays() throws {
        let (t, vault, _) = try BackupOpenTests.vault()
        let id = vault.header.vaultIDHex
        let oldest = try BackupOpenTests.backup(t, vault, time: Self.day(1))
        let kept = try BackupOpenTests.backup(t, vault, time: Self.day(2))
        // The newest opens with no key the owner gives: made to a recipient whose identity is gone.
        let lost = try AgeIdentity.generate()
        let newest = try BackupOpenTests.backup(
            t, vault, to: [.x25519(lost.recipient)], waysIn: false, time: Self.day(3))
        // A copy renamed to another time contradicts its label: never removed, said why.
        let renamed = t.folder.path(BackupName(vaultID: id, time: Self.day(0)).description)
        try FileManager.default.copyItem(atPath: oldest, toPath: renamed)
        // Another vault's backup is not even mentioned.
        let (u, other, _) = try BackupOpenTests.vault()
        let foreign = try BackupOpenTests.backup(u, other, time: Self.day(1))
        try FileManager.default.copyItem(
            atPath: foreign, toPath: t.folder.path(PathText.name(of: foreign)))

        let entries = try BackupFolder.scan(t.folder.path, readWhole: true)
        #expect(entries.count == 5)
        let plan = BackupFolder.prunePlan(entries, ofVault: id, policy: BackupPolicy(daily: 1), verifies: Self.opens(t))
        #expect(plan.items.map(\.entry.path) == [newest, kept, oldest])
        #expect(plan.items.map(\.reasons) == [[.period(.daily)], [.newestVerifying], []])
        #expect(plan.newestVerifying?.path == kept)
        #expect(plan.findings.map(\.fileName) == [PathText.name(of: newest)])
        #expect(plan.leftAlone.map(\.entry.path) == [renamed])
        #expect(plan.leftAlone.first?.why.hasPrefix("was renamed") == true)
        #expect(plan.removals.map(\.entry.path) == [oldest])

        var told: [String: BackupPrunePlan.Outcome] = [:]
        plan.carryOut(dryRun: true) { told[$0.entry.path] = $1 }
        #expect(told == [newest: .kept, kept: .kept, oldest: .removed])
        #expect(FileManager.default.fileExists(atPath: oldest))
        plan.carryOut(dryRun: false) { _, _ in }
        #expect(!FileManager.default.fileExists(atPath: oldest))
        #expect([newest, kept, renamed].allSatisfy { FileManager.default.fileExists(atPath: $0) })
    }

    @Test func withoutVerifyingTheNewestWholeOneStandsAndNewerDamagedOnesStay() throws {
        let (t, vault, _) = try BackupOpenTests.vault()
        let paths = try (1...4).map { try BackupOpenTests.backup(t, vault, time: Self.day($0)) }
        // The two newest cut short: their labels say how long they should be.
        for path in paths.suffix(2) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            try bytes.prefix(bytes.count - 10).write(to: URL(fileURLWithPath: path))
        }
        let plan = BackupFolder.prunePlan(
            try BackupFolder.scan(t.folder.path, readWhole: true), ofVault: vault.header.vaultIDHex,
            policy: BackupPolicy(daily: 1))
        #expect(plan.items.map(\.reasons) == [[.period(.daily)], [.newerThanNewestVerifying], [.newestVerifying], []])
        #expect(plan.items.prefix(2).allSatisfy { $0.finding?.contains("is damaged") == true })
        #expect(plan.removals.map(\.entry.path) == [paths[0]])
    }

    @Test func whenNoneVerifiesNothingIsRemoved() throws {
        let (t, vault, _) = try BackupOpenTests.vault()
        let paths = try (1...3).map { try BackupOpenTests.backup(t, vault, time: Self.day($0)) }
        var asked = 0
        let plan = BackupFolder.prunePlan(
            try BackupFolder.scan(t.folder.path, readWhole: true), ofVault: vault.header.vaultIDHex,
            policy: BackupPolicy(daily: 1)
        ) { _ in
            asked += 1
            return "not opened"
        }
        #expect(asked == 3 && plan.newestVerifying == nil && plan.removals.isEmpty)
        #expect(plan.findings.count == 3)
        plan.carryOut(dryRun: false) { _, outcome in #expect(outcome == .kept) }
        #expect(paths.allSatisfy { FileManager.default.fileExists(atPath: $0) })
    }

    @Test func aFolderWithoutThisVaultsBackupsAsksForNoKey() throws {
        let (t, vault, _) = try BackupOpenTests.vault()
        let plan = try BackupFolder.prunePlan(
            try BackupFolder.scan(t.folder.path, readWhole: true), ofVault: vault.header.vaultIDHex,
            policy: BackupPolicy(daily: 1)
        ) { _ in throw VaultError.wrongPassphrase() }
        #expect(plan.items.isEmpty && plan.leftAlone.isEmpty && plan.newestVerifying == nil)
    }
}
