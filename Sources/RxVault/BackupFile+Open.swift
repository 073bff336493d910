import Foundation
import RxCrypto

/// Opening a backup (`restore`, `backup verify`): the ways one opens, and what each refusal
/// means. A backup is an age file around a vault file (DESIGN.md, "Backups"), or a vault file
/// itself (what `age -d` makes of one). Its age layer opens
/// - through its key slots (`BackupWaysIn`): a passphrase or a recovery code unwraps the root
///   key from a slot stanza, and the root key opens the root key stanza;
/// - with the passphrase alone (an scrypt stanza: `--passphrase-only`, or any backup before
///   0.5.0), which no recovery code can open;
/// - with an age identity (a backup to recipients) or an age passphrase the caller names.
/// The decision lives here, not in the CLI, so a test can open every kind of backup without
/// spawning the binary, and the refusals are values the CLI renders in its own words.
extension BackupFile {
    /// What opens the age layer: the vault's key (through the key slots, or an scrypt stanza
    /// with its passphrase), or a key for that layer alone.
    public enum AgeLayerKey: Sendable {
        /// The vault's passphrase or recovery code, as for the vault inside.
        case vault
        /// An age identity file's identities (`--age-identity`): a backup made to recipients.
        case identities([AgeIdentity])
        /// An age passphrase (`--age-passphrase-file`): a backup made with one.
        case passphrase(SecretBytes)
    }

    /// A backup decrypted into a private vault file, not yet checked (`BackupFile.verify`).
    public struct Opened: Sendable {
        /// The backup was a vault file already (what `age -d` makes of one), copied as it is.
        public let wasVaultFile: Bool
        /// The age header's stanzas as read while opening (empty for a vault file). Read
        /// without a key, but authenticated by the header MAC once the backup opened.
        public let stanzas: [AgeFile.StanzaSummary]
    }

    /// Why a backup did not open; the CLI says each in its own words (all but `damaged` and
    /// `rootKeyStanzaDoesNotOpen` are a key that does not fit, exit 77).
    public enum OpenError: Error, Sendable, CustomStringConvertible {
        /// Neither an age file nor a vault file.
        case notABackup
        /// Locked with a passphrase alone (an scrypt stanza), and the key is a recovery code.
        case passphraseOnly
        /// The key opens none of the backup's key slots (`.wrongPassphrase`,
        /// `.wrongRecoveryCode`), or a slot stanza is one rxvault would not write (`.integrity`);
        /// `ways` as the header states them.
        case keySlots(VaultError, ways: [BackupWaysIn.Way])
        /// The age identity given opens no stanza; `ways`: the key slots the backup has.
        case identityDoesNotOpen(ways: [BackupWaysIn.Way])
        /// A key slot opened, so the root key is known, yet the root key stanza does not open
        /// with it: the backup (or the vault file it was made from) was altered.
        case rootKeyStanzaDoesNotOpen
        /// Made to age recipients alone: these stanza types (the label's left out).
        case recipientsOnly(stanzaTypes: [String])
        /// The age passphrase given does not open it.
        case agePassphraseDoesNotOpen
        /// The vault's passphrase does not open its scrypt stanza.
        case passphraseDoesNotOpen
        /// The age layer is damaged (header, MAC, armor or payload).
        case damaged(AgeError)

        public var description: String {
            switch self {
            case .notABackup: return "neither an age file nor a vault (not an rxvault backup)"
            case .passphraseOnly: return "opens only with a passphrase, never with a recovery code"
            case .keySlots(let error, _): return error.description
            case .identityDoesNotOpen: return "the identity does not open this backup"
            case .rootKeyStanzaDoesNotOpen:
                return "its \(BackupWaysIn.rootKeyStanzaType) stanza does not open with the key its slots give"
            case .recipientsOnly(let types):
                return "encrypted to age recipients alone (\(types.joined(separator: ", ")))"
            case .agePassphraseDoesNotOpen: return "the age passphrase does not open this backup"
            case .passphraseDoesNotOpen: return "the passphrase does not open this backup"
            case .damaged(let error): return "the backup is damaged: \(error.description)"
            }
        }
    }

    /// What the header of the backup being opened said (set while it is decrypted).
    private final class SeenHeader: @unchecked Sendable {
        var stanzas: [AgeFile.StanzaSummary] = []
    }

    /// Decrypts the backup read from `source` into a new private file at `path` (mode 0600) with
    /// `vaultKey` (or `ageLayer`'s key for the age layer). `prepare` runs once the backup looks
    /// like one (age, or a vault file), before `path` is written; `progress` is told how many
    /// bytes of `source` were taken. Refusals are `OpenError`; a file system error, or what
    /// `prepare` throws, passes through. Nothing is left at `path` when it throws.
    public static func open(
        _ source: FileHandle, with vaultKey: VaultKey, ageLayer: AgeLayerKey = .vault, into path: String,
        prepare: () throws -> Void = {}, progress: (Int) -> Void = { _ in }
    ) throws -> Opened {
        let seen = SeenHeader()
        let chosen: AgeFile.Key
        switch ageLayer {
        case .identities(let identities): chosen = .identities(identities)
        case .passphrase(let passphrase): chosen = .passphrase(passphrase, maxLogN: AgeFile.maxReadLogN)
        case .vault: chosen = .identities([]) // not used: chosen from the header below
        }
        // Every key goes through the header, so a refusal can say what the backup opens with.
        let key = AgeFile.Key.fromHeader { stanzas in
            seen.stanzas = stanzas
            guard case .vault = ageLayer else { return chosen }
            // Through the backup's key slots, or an scrypt stanza (a passphrase alone).
            guard stanzas.contains(where: { $0.type == "scrypt" }) else {
                return try BackupWaysIn.ageKey(vaultKey, in: stanzas)
            }
            guard let passphrase = vaultKey.passphrase else { throw OpenError.passphraseOnly }
            return .passphrase(passphrase, maxLogN: AgeFile.maxReadLogN)
        }
        var peek: [UInt8] = []
        while peek.count < 64, let more = try source.read(upToCount: 64 - peek.count), !more.isEmpty {
            peek += more
        }
        // A vault file itself (what `age -d` makes of a backup, e.g. one to an SSH key:
        // age -d -i ~/.ssh/id_ed25519 b.age | rxvault restore -) is taken as it is.
        let isVault = peek.starts(with: Array("SQLite format 3\0".utf8))
        guard isVault || AgeFile.looksLikeAge(peek) else { throw OpenError.notABackup }
        try prepare()
        // Progress is against the file's size: the bytes taken from it, the peeked ones first.
        let file = PeekedFile(handle: source, peeked: peek)
        let raw: (inout [UInt8]) throws -> Int = { try file.read(&$0) }
        if isVault {
            try copy(read: raw, to: path) { _ in progress(file.consumed) }
            return Opened(wasVaultFile: true, stanzas: [])
        }
        // `age -a` output (or a backup re-encrypted that way) is read through the armor.
        let armor =
            peek.first(where: { !AgeFile.isWhitespace($0) }) == UInt8(ascii: "-") ? AgeArmorStream(source: raw) : nil
        do {
            try decrypt(
                read: { buffer in try armor?.read(&buffer) ?? raw(&buffer) }, key: key, to: path,
                progress: { _ in progress(file.consumed) })
        } catch let error as VaultError {
            switch error {
            case .wrongPassphrase, .wrongRecoveryCode, .integrity:
                // From the backup's key slots (a write that fails is the file system's, as is).
                throw OpenError.keySlots(error, ways: (try? BackupWaysIn.ways(in: seen.stanzas)) ?? [])
            default: throw error
            }
        } catch AgeError.noMatch {
            throw noMatch(seen.stanzas, ageLayer: ageLayer)
        } catch let error as AgeError {
            throw OpenError.damaged(error)
        }
        return Opened(wasVaultFile: false, stanzas: seen.stanzas)
    }

    /// Why no stanza opened, from what the header holds and what was tried.
    private static func noMatch(_ stanzas: [AgeFile.StanzaSummary], ageLayer: AgeLayerKey) -> OpenError {
        let ways = (try? BackupWaysIn.ways(in: stanzas)) ?? []
        switch ageLayer {
        case .identities: return .identityDoesNotOpen(ways: ways)
        case .vault where !ways.isEmpty:
            // A slot opened, so the root key is known: its stanza should open with it.
            return .rootKeyStanzaDoesNotOpen
        default: break
        }
        let types = stanzas.map(\.type)
        if !types.isEmpty, !types.contains("scrypt") {
            return .recipientsOnly(stanzaTypes: types.filter { $0 != BackupLabel.stanzaType })
        }
        if case .passphrase = ageLayer { return .agePassphraseDoesNotOpen }
        return .passphraseDoesNotOpen
    }

    /// The stanzas of the age header of the file at `path`, read without a key (armored or
    /// not); empty when the file cannot be opened. A claim until the backup opens.
    public static func headerStanzas(at path: String) throws -> [AgeFile.StanzaSummary] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        var first = [UInt8]()
        if let byte = try handle.read(upToCount: 1) { first = Array(byte) }
        let file = PeekedFile(handle: handle, peeked: first)
        let raw: (inout [UInt8]) throws -> Int = { try file.read(&$0) }
        let armored = first.first == UInt8(ascii: "-") || first.first.map(AgeFile.isWhitespace) == true
        let stream = armored ? AgeArmorStream(source: raw) : nil
        return try AgeFile.peekHeader { buffer in try stream?.read(&buffer) ?? raw(&buffer) }
    }

    /// Whether the file at `path` is locked with a passphrase alone (an scrypt stanza), which no
    /// recovery code opens: told before a recovery code is asked for. False when unreadable.
    public static func isPassphraseOnly(at path: String) -> Bool {
        ((try? headerStanzas(at: path)) ?? []).contains { $0.type == "scrypt" }
    }
}
