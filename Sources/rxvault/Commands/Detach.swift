import ArgumentParser
import Foundation
import RxModel
import RxValidate
import RxVault

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension RxVaultCommand {
    struct Detach: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "detach",
            abstract: "Delete an attachment from a prescription.",
            discussion:
                "Asks for confirmation on a terminal; scripts pass --yes. The content is overwritten in the file and its WAL."
        )

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs))
        var prescription: String
        @Argument(help: "The attachment's name or id (any unique prefix).") var attachment: String
        @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation.") var yes = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                let confirmation = Confirmation(yes: yes, noInput: options.noInput, command: "detach", verb: "delete")
                let vault = try options.openVault(command: "detach")
                let prescriptionID = try vault.resolve(prescription)
                let attachmentID = try vault.resolveAttachment(attachment, of: prescriptionID)
                try confirmation.require(
                    {
                        let name =
                            try vault.attachments(of: prescriptionID).first { $0.id == attachmentID }?.metadata.name
                            ?? attachmentID.short
                        return "Delete the attachment \(name) of prescription \(prescriptionID.short)?"
                    }())
                try vault.detach(attachmentID, of: prescriptionID)
                warnIfNotPurged(vault)
                Terminal.out("detached \(attachmentID.short)")
            }
        }
    }
}
