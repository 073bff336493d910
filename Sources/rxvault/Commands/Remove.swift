import ArgumentParser
import Foundation
import RxModel
import RxVault

extension RxVaultCommand {
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Delete a prescription and all its versions.",
            discussion: flowing(
                """
                The content is overwritten in the file and its write-ahead log, not just unlinked.
                Asks for confirmation on a terminal; scripts pass --yes.
                """))

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs))
        var id: String
        @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation.") var yes = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                let confirmation = Confirmation(yes: yes, noInput: options.noInput, command: "remove", verb: "remove")
                let vault = try options.openVault(command: "remove")
                let prescriptionID = try vault.resolve(id)
                try confirmation.require(
                    {
                        let record = try vault.prescription(prescriptionID)
                        let rx = record.prescription
                        // What else goes with it: its attachments, and what clients lose.
                        let attachments = try vault.attachments(of: prescriptionID).count
                        let clients = Set(try vault.grants(prescription: prescriptionID).map(\.client.name)).sorted()
                        var also: [String] = []
                        if attachments > 0 {
                            also.append(attachments == 1 ? "its attachment" : "its \(attachments) attachments")
                        }
                        if !clients.isEmpty {
                            also.append(
                                "the \(clients.count == 1 ? "grant" : "grants") of \(clients.joined(separator: ", ")) (\(clients.count == 1 ? "it" : "they") can no longer read it)"
                            )
                        }
                        return
                            "Remove the \(rx.kind.rawValue) prescription \(prescriptionID.short) of \(rx.patient.name), issued \(rx.issued), with all \(record.version) version(s)\(also.isEmpty ? "" : ", " + also.joined(separator: " and "))?"
                    }())
                try vault.remove(prescriptionID)
                warnIfNotPurged(vault)
                Terminal.out("removed \(prescriptionID.short)")
            }
        }
    }
}
