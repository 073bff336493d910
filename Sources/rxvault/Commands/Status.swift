import ArgumentParser
import Foundation
import RxAgent
import RxCrypto
import RxValidate
import RxVault

extension RxVaultCommand {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Tell whether a file is a vault, its format and key-derivation settings.",
            discussion: flowing(
                """
                Needs no passphrase. With one (--passphrase-file, --passphrase-fd or
                RXVAULT_PASSPHRASE_FILE), it also checks the passphrase, verifies the state root as
                every owner command does (a root forged or altered, or a header whose format was
                edited, exits 76) and shows how many prescriptions the vault holds. It never
                prompts. It also says whether the vault is
                unlocked ('rxvault unlock') and until when, without using or extending the unlock.
                It names the conflict copies a sync tool left beside the vault file, and any other
                file of the same vault there.
                """))

        @OptionGroup var options: VaultOptions

        @Option(help: "Output format: text or json.")
        var format: StatusFormat = .text

        enum StatusFormat: String, ExpressibleByArgument { case text, json }

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let report = try gather()
                switch format {
                case .json: Terminal.out(try report.json())
                case .text:
                    Terminal.out(report.text)
                    if report.saysOnlyTheHeader {
                        Terminal.err("rxvault: hint: give --passphrase-file to check the passphrase and see the counts")
                    }
                }
            }
        }

        /// Reads the header, then whatever else the given key opens, the agent's state and the checker's sandbox.
        private func gather() throws -> StatusReport {
            let path = options.vaultPath
            ConflictCopyNotice.namedInOutput()
            let header = try VaultHeader.read(at: path)
            let copies = ConflictCopies.find(besideVaultAt: path, vaultID: header.vaultID)
            var counts: Vault.Counts?
            var granted: Int?
            if options.identity != nil {
                // A client learns only how many prescriptions it was granted.
                granted = (try options.openReader() as? ClientVault)?.count
            } else if PassphraseSource.isGivenWithoutPrompt(options) {
                // The passphrase itself, never an agent's key: status checks the passphrase, and
                // must neither use nor extend an unlock.
                counts = try options.openVault(agent: false).counts()
            }
            let agent = options.identity == nil ? agentState(path: path, header: header) : nil
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
            return StatusReport(
                path: path, header: header, counts: counts, granted: granted, agent: agent,
                checker: checker, sandboxed: sandboxed, copies: copies)
        }

        /// Whether an agent holds this file: asked of the agent (never its key).
        private func agentState(path: String, header: VaultHeader) -> StatusReport.Agent {
            do {
                if let status = try AgentAccess.status(vaultIDHex: header.vaultIDHex) {
                    guard (try? VaultFileIdentity(path: path, header: header)) == status.file else {
                        let note = "another file of this vault is unlocked: \(status.path)"
                        return StatusReport.Agent(unlocked: false, note: note, text: "locked (\(note))")
                    }
                    return StatusReport.Agent(
                        unlocked: true, until: AgentAccess.isoTime(status.until),
                        lifetimeUntil: AgentAccess.isoTime(status.lifetimeUntil),
                        idleTimeoutSeconds: Int(status.idleTimeoutSeconds), pid: Int(status.pid),
                        memoryLocked: status.memoryLocked, text: AgentAccess.describe(status))
                }
                return StatusReport.Agent(unlocked: false, text: "locked")
            } catch {
                let note = "cannot ask its agent: \(CommandRunner.describe(error).1)"
                return StatusReport.Agent(unlocked: false, note: note, text: "locked (\(note))")
            }
        }
    }
}
