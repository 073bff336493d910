import Foundation
import RxModel
import RxVault

/// What `add` says when the new prescription supersedes one a client can still read (issue 47):
/// the client now sees `superseded` and nothing newer, so the owner gets the `grant` and
/// `revoke` lines that hand it the renewal on the same terms, as commands to paste.
enum RenewalGrantText {
    /// The note, the command lines and the hint; empty when no superseded prescription has a live grant.
    static func pending(_ superseded: [Vault.SupersededGrants], renewal: PrescriptionID, vault: String?) -> [String] {
        var lines: [String] = []
        for item in superseded {
            let names = item.grants.map(\.client.name)
            lines.append(
                "rxvault: \(renewal.short) supersedes \(item.superseded.short), which "
                    + (names.count == 1
                        ? "\(names[0]) can" : "\(names.count) clients (\(names.joined(separator: ", "))) can")
                    + " still read: to give the renewal on the same terms and take back the old one:")
            for grant in item.grants {
                lines.append("  " + command(grant: grant, to: renewal, vault: vault))
                lines.append("  " + command(revoke: grant, vault: vault))
            }
            lines.append(
                "rxvault: hint: 'rxvault add --from \(item.superseded.short) --move-grants' renews and moves the grants in one write"
            )
        }
        return lines
    }

    /// What `add --from ID --move-grants` moved: a line per client.
    static func moved(_ grants: [GrantSummary], from source: PrescriptionID, to renewal: PrescriptionID) -> [String] {
        guard !grants.isEmpty else {
            return ["rxvault: \(source.short) had no live grants: none moved"]
        }
        return grants.map { grant in
            "rxvault: moved \(grant.client.name)'s grant from \(source.short) to \(renewal.short) ("
                + (grant.expires.map { "until \($0)" } ?? "no end")
                + (grant.includesAttachments ? ", with attachments" : ", without attachments")
                + (grant.includesMeasurements ? ", with the patient's measurements" : "") + ")"
        }
    }

    /// `rxvault grant NAME ID --expires DAY --attachments`: every term stated, as the old grant had it.
    static func command(grant: GrantSummary, to renewal: PrescriptionID, vault: String?) -> String {
        var words = ["rxvault", "grant", client(grant.client), renewal.short]
        words += grant.expires.map { ["--expires", $0.description] } ?? ["--no-expiry"]
        words.append(grant.includesAttachments ? "--attachments" : "--no-attachments")
        if grant.includesMeasurements { words.append("--measurements") }
        return (words + vaultWords(vault)).joined(separator: " ")
    }

    /// `rxvault revoke NAME ID`.
    static func command(revoke grant: GrantSummary, vault: String?) -> String {
        (["rxvault", "revoke", client(grant.client), grant.prescriptionID.short] + vaultWords(vault)).joined(
            separator: " ")
    }

    /// The client's name as one shell word; its id when the name starts with `-` (an option to
    /// the parser however it is quoted).
    static func client(_ client: ClientSummary) -> String {
        client.name.hasPrefix("-") ? client.id.short : shellWord(client.name)
    }

    /// `--vault PATH` when the command was given a vault file (a URL is left out: it may carry
    /// what belongs in a password file, and the lines must not repeat it).
    static func vaultWords(_ vault: String?) -> [String] {
        guard let vault, !vault.contains("://") else { return [] }
        return ["--vault", shellWord(vault)]
    }

    /// `text` as it is when it holds only characters no POSIX shell treats specially, else in
    /// single quotes (a quote inside as `'\''`).
    static func shellWord(_ text: String) -> String {
        let plain =
            !text.isEmpty
            && text.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                    || "._-/@%+=:,".unicodeScalars.contains($0)
            }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
