import ArgumentParser
import Foundation
import RxCrypto
import RxVault

extension RxVaultCommand {
    struct Key: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "key",
            abstract: "Add, list and remove the passphrases and recovery codes that open the vault.",
            discussion: flowing(
                """
                Each key slot wraps the same root key, as LUKS key slots do: any slot's passphrase
                opens the vault for every owner command and for 'rxvault unlock'. Slot 1 is the
                passphrase chosen at 'rxvault init'; 'rxvault passwd' changes the passphrase of the
                slot it is given. A recovery code ('key add --recovery') lets 'rxvault passwd
                --recovery' set a new passphrase when every passphrase is forgotten.

                Adding or removing a slot needs a passphrase of the vault (never the agent's key),
                is written to the audit log, and locks an unlocked vault.

                Examples:
                  rxvault key add --label partner
                  rxvault key add --recovery --label "paper in the safe"
                  rxvault key list
                  rxvault key remove 2
                """),
            subcommands: [KeyAdd.self, KeyList.self, KeyRemove.self])
    }

    struct KeyAdd: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add a passphrase (or, with --recovery, a recovery code) that opens the vault.",
            discussion: flowing(
                """
                Asks for a passphrase that opens the vault now, then for the new one (twice), or
                reads it from --new-passphrase-file. --kdf sets the new slot's key-derivation cost
                (default moderate).

                With --recovery, prints a new recovery code once, on standard output: 8 groups of 5
                characters holding 160 random bits, each group with a check character so a mistyped
                group is named when the code is typed back. Write it down or print it and keep it
                away from the vault file: whoever holds it and the file can open the vault.

                The code also opens backups made from now on ('restore' and 'backup verify' take
                --recovery-key-file): a backup opens with every way into the vault of its day. Not
                those made before, nor any made with --passphrase-only: 'backup list DIR' says what
                opens each.
                """))

        @Flag(help: "Add a recovery code instead of a passphrase.") var recovery = false
        @Option(help: ArgumentHelp("A label for the slot (shown by 'key list'), e.g. partner.", valueName: "text"))
        var label: String?
        @Option(
            help: "Key-derivation cost of the new passphrase: interactive, moderate or sensitive (default moderate).")
        var kdf: PasswordKDF.Preset?
        @Option(
            help: ArgumentHelp("Read the new passphrase from the first line of this file.", valueName: "file"),
            completion: .file())
        var newPassphraseFile: String?
        @OptionGroup var options: VaultOptions

        func validate() throws {
            if recovery && kdf != nil {
                throw ValidationError(
                    "--kdf is for passphrases: a recovery code is random, not chosen by a person (SECURITY.md, \"Ways in\")"
                )
            }
            if recovery && newPassphraseFile != nil {
                throw ValidationError("--new-passphrase-file is for passphrases: a recovery code is made by rxvault")
            }
        }

        func run() throws {
            try CommandRunner.run {
                // Whoever adds a way in must know one: the agent's key is not enough.
                let vault = try options.openVault(command: "key add", agent: false)
                let agent = KeyChangeAgent(vault: vault, path: options.vaultPath)
                if recovery {
                    let (slot, code) = try vault.addRecoverySlot(label: label)
                    Terminal.err(
                        "rxvault: recovery code of key slot \(slot) (vault \(vault.header.vaultIDHex.prefix(8))), shown this once: "
                            + "write it down or print it, and keep it away from the vault file; "
                            + "'rxvault passwd --recovery' takes it to set a new passphrase, "
                            + "and 'rxvault restore --recovery' to open backups made from now on")
                    Terminal.out(code.text)
                } else {
                    let passphrase = try PassphraseSource.new(
                        file: newPassphraseFile, options: options, prompt: "Passphrase for the new key slot: ")
                    if passphrase.count < 10 {
                        Terminal.warning(
                            "the new passphrase is short (\(passphrase.count) bytes); anyone with the file can try guesses offline"
                        )
                    }
                    let preset = kdf ?? .moderate
                    // A guesser picks the cheapest way in: a cheaper slot lowers the whole vault.
                    let new = PasswordKDF(preset: preset)
                    let cheapest = vault.header.slots.compactMap(\.kdf).min {
                        ($0.memLimit, $0.opsLimit) < ($1.memLimit, $1.opsLimit)
                    }
                    if let cheapest, (new.memLimit, new.opsLimit) < (cheapest.memLimit, cheapest.opsLimit) {
                        Terminal.warning(
                            "the new slot's key derivation (\(preset.rawValue)) is cheaper than every other passphrase slot's (\(cheapest.preset?.rawValue ?? KeySlotText.cost(cheapest))): the vault is now only as hard to guess as this slot; give --kdf \(cheapest.preset?.rawValue ?? "moderate") to keep it as it was"
                        )
                    }
                    let slot = try vault.addPassphraseSlot(
                        passphrase: passphrase, kdf: PasswordKDF(preset: preset), label: label)
                    Terminal.out(
                        "added passphrase slot \(slot)\(label.map { " (\($0))" } ?? "") with the \(preset.rawValue) key-derivation cost"
                    )
                }
                agent.lockAfterChange()
            }
        }
    }

    struct KeyList: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the vault's key slots: id, kind, label, key-derivation cost, when added.")
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openVault(command: "key list")
                let slots = try vault.keySlots()
                switch format {
                case .json:
                    let items: [[String: Any]] = try slots.map { slot in
                        var item: [String: Any] = [
                            "slot": slot.id, "kind": slot.kind.rawValue, "opened": slot.isCurrent
                        ]
                        if let label = slot.label { item["label"] = label }
                        if let created = slot.created { item["created"] = created }
                        item["kdf"] = try KeySlotCost(slot.kdf).jsonObject()
                        return item
                    }
                    Terminal.out(
                        try jsonText([
                            "schema": "rxvault/key-slots/v1", "vault": vault.header.vaultIDHex, "slots": items
                        ]))
                default:
                    Terminal.out(
                        Table.render(
                            headers: ["SLOT", "KIND", "LABEL", "KDF", "CREATED"],
                            rows: slots.map { slot in
                                [
                                    String(slot.id) + (slot.isCurrent ? "*" : ""), slot.kind.rawValue,
                                    slot.label ?? (slot.id == 1 ? "(init)" : "-"),
                                    KeySlotText.cost(slot.kdf), slot.created ?? "-"
                                ]
                            }))
                    if slots.contains(where: \.isCurrent) {
                        Terminal.err("rxvault: * the slot whose passphrase opened the vault now")
                    }
                }
            }
        }
    }

    struct KeyRemove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove a key slot: its passphrase or recovery code no longer opens the vault.",
            discussion: flowing(
                """
                The vault's last passphrase is never removed (exit 65): change it with 'rxvault
                passwd' instead. Removing a slot does not take back what its holder could already
                do: anyone who knew its passphrase and had a copy of the vault file (or of a backup)
                could have kept the vault's root key (SECURITY.md, "Ways in").
                """))
        @Argument(help: "The slot's number ('rxvault key list').") var slot: Int
        @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation.") var yes = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                let confirmation = Confirmation(
                    yes: yes, noInput: options.noInput, command: "key remove", verb: "remove it")
                let vault = try options.openVault(command: "key remove", agent: false)
                let agent = KeyChangeAgent(vault: vault, path: options.vaultPath)
                guard let target = try vault.keySlots().first(where: { $0.id == slot }) else {
                    throw VaultError.keySlotNotFound(slot)
                }
                try confirmation.require(
                    "Remove key slot \(slot) (\(target.kind.rawValue)\(target.label.map { ", \($0)" } ?? ""))? It will no longer open this vault."
                )
                try vault.removeKeySlot(slot)
                warnIfNotPurged(vault)
                Terminal.out("removed key slot \(slot)")
                agent.lockAfterChange()
            }
        }
    }
}
