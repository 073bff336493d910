import ArgumentParser
import Foundation
import RxAgent
import RxCrypto
import RxValidate
import RxVault

extension RxVaultCommand {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Tell whether a file is a vault, its format and key-derivation settings.",
            discussion: flowing("""
            Needs no passphrase. With one (--passphrase-file, --passphrase-fd or
            RXVAULT_PASSPHRASE_FILE), it also checks the passphrase and shows how many
            prescriptions the vault holds. It never prompts. It also says whether the vault is
            unlocked ('rxvault unlock') and until when, without using or extending the unlock.
            """))

        @OptionGroup var options: VaultOptions

        @Option(help: "Output format: text or json.")
        var format: StatusFormat = .text

        enum StatusFormat: String, ExpressibleByArgument { case text, json }

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let path = options.vaultPath
                let header = try VaultHeader.read(at: path)
                var counts: Vault.Counts?
                var granted: Int?
                if options.identity != nil {
                    // A client learns only how many prescriptions it was granted.
                    granted = (try options.openReader() as? ClientVault)?.count
                } else if PassphraseSource.isGivenWithoutPrompt(options) {
                    counts = try options.openVault().counts()
                }
                // Whether an agent holds this file: asked of the agent (never its key).
                var agent: AgentStatus?
                var agentNote: String?
                if options.identity == nil {
                    do {
                        if let status = try AgentAccess.status(vaultIDHex: header.vaultIDHex) {
                            if (try? VaultFileIdentity(path: path, header: header)) == status.file {
                                agent = status
                            } else {
                                agentNote = "another file of this vault is unlocked: \(status.path)"
                            }
                        }
                    } catch {
                        agentNote = "cannot ask its agent: \(CommandRunner.describe(error).1)"
                    }
                }
                // Which sandbox the attachment checker gets here: asked of the child itself.
                let checker: String
                var sandboxed = false
                do {
                    let sandbox = try ParserFactory.make(limits: ValidationLimits()).probeSandbox()
                    checker = sandbox.description
                    sandboxed = sandbox.isSeccomp
                } catch {
                    checker = "cannot start: \((error as? AttachmentRefusal)?.message ?? String(describing: error))"
                }
                let kdf = header.kdf
                let presetName = kdf.preset?.rawValue ?? "custom"
                let memoryMiB = kdf.memLimit / (1 << 20)
                switch format {
                case .json:
                    var object: [String: Any] = [
                        "path": path, "vault": true, "formatVersion": header.formatVersion, "vaultID": header.vaultIDHex,
                        "kdf": ["algorithm": header.kdfAlgorithm, "preset": presetName,
                                "opsLimit": kdf.opsLimit, "memLimitBytes": kdf.memLimit] as [String: Any],
                        "unlocked": counts != nil, "maxAttachmentBytes": header.maxAttachmentBytes,
                        "attachmentChecker": checker, "attachmentSandbox": sandboxed ? "seccomp" : "rlimits-only",
                    ]
                    if let granted { object["granted"] = granted }
                    // Every way in, with its cost (read without a key: the owner's key ring
                    // vouches for them at the next owner command and in 'check').
                    object["keySlots"] = header.slots.map { slot -> [String: Any] in
                        ["slot": slot.id, "kind": slot.kind.rawValue, "kdf": KeySlotText.costJSON(slot.kdf)]
                    }
                    if options.identity == nil {
                        var lock: [String: Any] = ["unlocked": agent != nil]
                        if let agent {
                            lock["until"] = AgentAccess.isoTime(agent.until)
                            lock["lifetimeUntil"] = AgentAccess.isoTime(agent.lifetimeUntil)
                            lock["idleTimeoutSeconds"] = Int(agent.idleTimeoutSeconds)
                            lock["pid"] = Int(agent.pid)
                            lock["memoryLocked"] = agent.memoryLocked
                        }
                        if let agentNote { lock["note"] = agentNote }
                        object["agent"] = lock
                    }
                    if let counts {
                        object["prescriptions"] = counts.prescriptions
                        object["versions"] = counts.versions
                        object["attachments"] = counts.attachments
                    }
                    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
                    Terminal.out(String(decoding: data, as: UTF8.self))
                case .text:
                    var lines = [
                        ("vault", path),
                        ("format", "rxvault vault, format version \(header.formatVersion)"),
                        ("vault id", header.vaultIDHex),
                        ("kdf", header.slots.first?.id == 1
                            ? "\(header.kdfAlgorithm), \(presetName) (ops \(kdf.opsLimit), memory \(memoryMiB) MiB)"
                            : "slot 1 removed; see the key slots"),
                        ("key slots", header.slots.map { "\($0.id) \($0.kind.rawValue): \(KeySlotText.cost($0.kdf))" }.joined(separator: "; ")),
                        ("attachments", "PNG or PDF, up to \(ByteCount(header.maxAttachmentBytes)) each"),
                        ("file checker", checker),
                    ]
                    if options.identity == nil {
                        lines.append(("agent", agent.map(AgentAccess.describe) ?? (agentNote.map { "locked (\($0))" } ?? "locked")))
                    }
                    if let counts {
                        lines.append(("passphrase", "correct"))
                        lines.append(("prescriptions", "\(counts.prescriptions) (\(counts.versions) versions, \(counts.attachments) attachments)"))
                    }
                    if let granted { lines.append(("granted", "\(granted) prescriptions shared with this identity")) }
                    Terminal.out(Table.keyValue(lines))
                    if counts == nil && granted == nil && agent == nil {
                        Terminal.err("rxvault: hint: give --passphrase-file to check the passphrase and see the counts")
                    }
                }
            }
        }
    }
}
