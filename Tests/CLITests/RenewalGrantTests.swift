import Foundation
import Testing

/// A renewal that supersedes a prescription client apps can read (issue 47, 9): `add` says so and
/// prints the `grant` and `revoke` lines to paste; `add --from ID --move-grants` moves the grants
/// in the write that adds it; the printed page and the CSV say `superseded` as `show` does.
/// Through the binary; today is 2026-06-15.
@Suite struct RenewalGrantTests {
    /// A vault with the harness's glasses prescription (issued 2026-03-01) granted to two
    /// clients on different terms: `lens-shop` until 2026-12-31 without attachments, and
    /// `Kim's app` (a name a shell must have quoted) with no end and the patient's measurements.
    func grantedVault() throws -> (CLIHarness, old: String) {
        let cli = try CLIHarness()
        try cli.initVault()
        let old = try cli.add(CLIHarness.glassesArguments)
        for (name, key) in [("lens-shop", "shop.key"), ("Kim's app", "kim.key")] {
            let added = try cli.run(["client", "add", name, "--generate", "--identity-out", cli.path(key)])
            #expect(added.status == 0, "\(added)")
        }
        #expect(try cli.run(["grant", "lens-shop", old, "--expires", "2026-12-31", "--no-attachments"]).status == 0)
        #expect(try cli.run(["grant", "Kim's app", old, "--measurements"]).status == 0)
        return (cli, old)
    }

    /// Every grant, as (client, prescription prefix, expires, attachments, measurements).
    func grants(_ cli: CLIHarness) throws -> [String] {
        let json = try cli.json(try cli.run(["grants", "--format", "json"]).stdout)
        return (json["grants"] as? [[String: Any]] ?? []).map { g in
            [
                g["client"] as? String ?? "?", String((g["prescription"] as? String ?? "").prefix(8)),
                g["expires"] as? String ?? "no end", (g["attachments"] as? Bool) == true ? "attachments" : "none",
                (g["measurements"] as? Bool) == true ? "measurements" : "none"
            ].joined(separator: " ")
        }.sorted()
    }

    /// Runs `line` as a user pasting it into sh would, with `rxvault` on the PATH.
    func paste(_ cli: CLIHarness, _ line: String) throws -> CLIHarness.Result {
        let bin = cli.path("bin")
        if !FileManager.default.fileExists(atPath: bin) {
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                atPath: bin + "/rxvault", withDestinationPath: URL(fileURLWithPath: CLIHarness.binary).path)
        }
        return try cli.tool(["/bin/sh", "-c", line], environment: ["PATH": bin + ":/usr/bin:/bin"])
    }

    @Test func aRenewalPrintsTheGrantAndRevokeLinesAndThoseLinesWork() throws {
        let (cli, old) = try grantedVault()
        let r = try cli.run(["add", "--from", old, "--expires", "2028-06-15"])
        #expect(r.status == 0, "\(r)")
        let renewal = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(renewal.count == 8, "only the id on stdout: \(r)")
        #expect(
            r.stderr.contains("\(renewal) supersedes \(old), which 2 clients (Kim's app, lens-shop) can still read"),
            "\(r)")
        let lines = r.stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("  rxvault ") }
        #expect(
            lines == [
                "  rxvault grant 'Kim'\\''s app' \(renewal) --no-expiry --attachments --measurements",
                "  rxvault revoke 'Kim'\\''s app' \(old)",
                "  rxvault grant lens-shop \(renewal) --expires 2026-12-31 --no-attachments",
                "  rxvault revoke lens-shop \(old)"
            ], "\(r)")
        #expect(r.stderr.contains("'rxvault add --from \(old) --move-grants'"), "\(r)")
        // Pasted, they do what they say: the same terms on the renewal, none left on the old one.
        for line in lines {
            let pasted = try paste(cli, line)
            #expect(pasted.status == 0, "\(line): \(pasted)")
        }
        #expect(
            try grants(cli) == [
                "Kim's app \(renewal) no end attachments measurements",
                "lens-shop \(renewal) 2026-12-31 none none"
            ])
        // The next renewal (days later) names the one the clients now read, and not the old one.
        let next = try cli.run(
            ["add", "--from", renewal, "--expires", "2y"], environment: ["RXVAULT_TODAY": "2026-06-20"])
        #expect(next.status == 0, "\(next)")
        #expect(next.stderr.contains("supersedes \(renewal), which 2 clients"), "\(next)")
        #expect(!next.stderr.contains(old), "\(next)")
    }

    @Test func aPlainAddThatSupersedesSaysSoAndOneThatDoesNotSaysNothing() throws {
        let (cli, old) = try grantedVault()
        // Issued before the granted one: it supersedes nothing.
        let earlier = try cli.run([
            "add", "glasses", "--patient", "Quintessa Marlowe", "--dob", "1980-04-02", "--prescriber", "Dr A. Lee",
            "--issued", "2025-03-01", "--expires", "2027-03-01", "--od", "-2.00", "--os", "-1.50"
        ])
        #expect(earlier.status == 0 && !earlier.stderr.contains("supersedes"), "\(earlier)")
        let newer = try cli.run([
            "add", "glasses", "--patient", "quintessa  MARLOWE", "--dob", "1980-04-02", "--prescriber", "Dr A. Lee",
            "--issued", "2026-06-01", "--expires", "2028-06-01", "--od", "-2.50", "--os", "-1.75"
        ])
        #expect(newer.status == 0, "\(newer)")
        let id = newer.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(newer.stderr.contains("\(id) supersedes \(old)"), "\(newer)")
        #expect(newer.stderr.contains("  rxvault revoke lens-shop \(old)"), "\(newer)")
    }

    @Test func moveGrantsMovesEveryGrantOnTheSameTermsInOneAuditedWrite() throws {
        let (cli, old) = try grantedVault()
        let r = try cli.run(["add", "--from", old, "--expires", "2028-06-15", "--move-grants"])
        #expect(r.status == 0, "\(r)")
        let renewal = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            r.stderr.contains(
                "moved lens-shop's grant from \(old) to \(renewal) (until 2026-12-31, without attachments)"), "\(r)")
        #expect(
            r.stderr.contains(
                "moved Kim's app's grant from \(old) to \(renewal) (no end, with attachments, with the patient's measurements)"
            ), "\(r)")
        #expect(!r.stderr.contains("rxvault grant"), "nothing left to paste: \(r)")
        #expect(
            try grants(cli) == [
                "Kim's app \(renewal) no end attachments measurements",
                "lens-shop \(renewal) 2026-12-31 none none"
            ])
        // Each client now reads the renewal and not the old one.
        let asShop = try cli.run(
            ["--identity", cli.path("shop.key"), "list", "--format", "json"],
            environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        let seen = (try cli.json(asShop.stdout)["prescriptions"] as? [[String: Any]] ?? []).compactMap {
            ($0["id"] as? String)?.prefix(8)
        }
        #expect(seen == [Substring(renewal)], "\(asShop)")
        // The old one re-keyed as revoke re-keys it.
        let history = try cli.json(try cli.run(["history", old, "--format", "json"]).stdout)
        let reasons = (history["prescriptions"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }
        #expect(reasons.contains("re-keyed: grants moved to \(renewal)"), "\(history)")
        // Audited as grant and revoke are: a grant on the renewal and a revoke of the old, per client.
        let log = try cli.json(try cli.run(["log", "--format", "json"]).stdout)["entries"] as? [[String: Any]] ?? []
        let moves = log.compactMap { e -> String? in
            guard let detail = e["detail"] as? String, detail.contains("moved") else { return nil }
            return "\(e["action"] as? String ?? "?") \(detail)"
        }
        #expect(moves.filter { $0.hasPrefix("grant moved from ") }.count == 2, "\(moves)")
        #expect(moves.filter { $0.hasPrefix("revoke moved to ") }.count == 2, "\(moves)")
        #expect(try cli.run(["check"]).status == 0)
    }

    @Test func moveGrantsIsRefusedWhereItCannotApplyAndWritesNothing() throws {
        let (cli, old) = try grantedVault()
        let before = try grants(cli)
        let count = try cli.run(["list"]).stdout.split(separator: "\n").count
        // Without --from there is nothing to move from.
        let noFrom = try cli.run(CLIHarness.contactsArguments + ["--move-grants"])
        #expect(noFrom.status == 64 && noFrom.stderr.contains("--move-grants moves the grants"), "\(noFrom)")
        // Issued the same day as the old one: both stand, nothing is superseded.
        let sameDay = try cli.run([
            "add", "--from", old, "--issued", "2026-03-01", "--expires", "2028-03-01", "--move-grants"
        ])
        #expect(sameDay.status == 65, "\(sameDay)")
        #expect(sameDay.stderr.contains("the renewal does not supersede \(old)"), "\(sameDay)")
        #expect(sameDay.stderr.contains("only a later one supersedes"), "\(sameDay)")
        // Another patient's renewal supersedes nothing of this one's.
        let other = try cli.run([
            "add", "--from", old, "--expires", "2028-06-15", "--patient", "Kim Park", "--new-patient", "--move-grants"
        ])
        #expect(other.status == 65 && other.stderr.contains("another patient"), "\(other)")
        #expect(try grants(cli) == before)
        #expect(try cli.run(["list"]).stdout.split(separator: "\n").count == count)
    }

    @Test func thePrintedPageAndTheCSVSaySupersededAsShowDoes() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let old = try cli.add(CLIHarness.glassesArguments)
        let renewal = try cli.add(["add", "--from", old, "--expires", "2028-06-15"])
        #expect(try cli.run(["show", old]).stdout.contains("superseded by"))
        let pdf = cli.path("rx.pdf")
        #expect(try cli.run(["export", old, renewal, "--format", "pdf", "--out", pdf]).status == 0)
        let text = try PrintTests.poppler(cli, ["pdftotext", "-layout", pdf, "-"]).stdout
        let pages = text.split(separator: "\u{0C}").map(String.init)
        #expect(pages.count >= 2, "\(text)")
        let oldPage = pages.first { $0.contains("prescription \(old)") } ?? ""
        let newPage = pages.first { $0.contains("prescription \(renewal)") } ?? ""
        #expect(oldPage.contains("superseded by \(renewal) on 2026-06-15"), "\(oldPage)")
        #expect(!oldPage.contains("valid on"), "\(oldPage)")
        #expect(newPage.contains("valid on 2026-06-15"), "\(newPage)")
        let csv = try cli.run(["export", old, renewal, "--format", "csv", "--out", "-"])
        let statuses = Dictionary(
            csv.stdout.split(separator: "\n").dropFirst().map { row -> (String, String) in
                let cells = row.split(separator: ",", omittingEmptySubsequences: false)
                return (String(cells[0].prefix(8)), String(cells[3]))
            }, uniquingKeysWith: { a, _ in a })
        #expect(statuses == [old: "superseded", renewal: "valid"], "\(csv)")
    }
}
