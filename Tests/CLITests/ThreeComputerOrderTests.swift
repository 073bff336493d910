import Foundation
import Testing

/// Issue 48: "three devices merged in any order converge". The scenario on three
/// computers (each its own HOME and vault file): A adds Ann's glasses and edits the shared
/// prescription, B adds Bob's contacts and edits the same prescription otherwise, C revokes the
/// shop's grant to it and adds Cy's glasses. The same three copies are then merged pairwise in
/// two different orders (from the same starting files and device knowledge); in each, the three
/// end holding the same, and both orders end with the same export: every prescription, the
/// shared one in conflict with both edits in its history, the shop's grant gone everywhere.
@Suite struct ThreeComputerOrderTests {
    /// Every merge of both orders is recorded at this time: the merge versions the two orders
    /// write then differ only in which computer wrote them, which no export shows.
    static let mergeTime = "2026-06-15T09:00:00Z"

    final class Computer {
        let cli: CLIHarness
        let name: String
        init(_ name: String) throws {
            self.name = name
            cli = try CLIHarness(passphrase: "three computers passphrase")
        }
        @discardableResult
        func run(_ arguments: [String], at time: String) throws -> CLIHarness.Result {
            try cli.run(arguments, environment: ["RXVAULT_NOW": time])
        }
        func merge(_ other: Computer) throws -> CLIHarness.Result {
            let r = try run(["merge", other.cli.vaultPath], at: ThreeComputerOrderTests.mergeTime)
            #expect(r.status == 0, "\(name) merging \(other.name): \(r)")
            return r
        }
        func export() throws -> String {
            let r = try run(["export", "--format", "json", "--out", "-"], at: ThreeComputerOrderTests.mergeTime)
            #expect(r.status == 0, "\(r)")
            let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] ?? [:]
            return ThreeComputerOrderTests.comparable(object)
        }
        /// This computer as it is now, on another: its vault file and its device knowledge.
        func clone() throws -> Computer {
            let twin = try Computer(name)
            _ = try cli.consistentCopy("clone.rxv")
            try FileManager.default.moveItem(atPath: cli.path("clone.rxv"), toPath: twin.cli.vaultPath)
            try FileManager.default.copyItem(atPath: cli.path(".local"), toPath: twin.cli.path(".local"))
            return twin
        }
    }

    /// Merges in `order` (pairs: into, from), then again each into each until no merge brings
    /// anything (at most three rounds); returns the three exports.
    static func converge(_ computers: [Computer], order: [(Int, Int)]) throws -> [String] {
        for (into, from) in order { _ = try computers[into].merge(computers[from]) }
        for _ in 0..<3 {
            var broughtAny = false
            for (into, from) in [(0, 1), (1, 2), (2, 0), (1, 0), (2, 1), (0, 2)] {
                let r = try computers[into].merge(computers[from])
                if !r.stdout.contains("nothing to bring in") { broughtAny = true }
            }
            if !broughtAny { break }
        }
        return try computers.map { try $0.export() }
    }

    @Test func threeComputersMergedInTwoOrdersEndTheSame() throws {
        let a = try Computer("A")
        try a.cli.initVault()
        let added = try a.run(CLIHarness.glassesArguments, at: "2026-06-15T08:00:00Z")
        #expect(added.status == 0, "\(added)")
        let shared = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            try a.run(
                ["client", "add", "shop", "--generate", "--identity-out", a.cli.path("shop.key")],
                at: "2026-06-15T08:00:01Z"
            ).status == 0)
        #expect(try a.run(["grant", "shop", shared], at: "2026-06-15T08:00:02Z").status == 0)
        let b = try Computer("B")
        let c = try Computer("C")
        for other in [b, c] {
            _ = try a.cli.consistentCopy("copy.rxv")
            try FileManager.default.moveItem(atPath: a.cli.path("copy.rxv"), toPath: other.cli.vaultPath)
        }

        let ann = try a.run(DeviceForkTests.annGlasses, at: "2026-06-15T08:01:00Z")
        #expect(ann.status == 0, "\(ann)")
        #expect(try a.run(["edit", shared, "--od-sphere", "-3.00"], at: "2026-06-15T08:01:10Z").status == 0)
        let bob = try b.run(DeviceForkTests.bobContacts, at: "2026-06-15T08:02:00Z")
        #expect(bob.status == 0, "\(bob)")
        #expect(try b.run(["edit", shared, "--os-sphere", "-3.25"], at: "2026-06-15T08:02:10Z").status == 0)
        #expect(try c.run(["revoke", "shop", shared], at: "2026-06-15T08:03:00Z").status == 0)
        var cy = DeviceForkTests.annGlasses
        cy[cy.firstIndex(of: "Ann Example")!] = "Cy Example"
        #expect(try c.run(cy, at: "2026-06-15T08:03:10Z").status == 0)

        let twins = try [a, b, c].map { try $0.clone() }
        let first = try Self.converge([a, b, c], order: [(0, 1), (0, 2), (1, 0), (2, 0)])
        let second = try Self.converge(twins, order: [(2, 1), (2, 0), (1, 2), (0, 1)])
        #expect(Set(first).count == 1, "the first order leaves the three apart")
        #expect(Set(second).count == 1, "the second order leaves the three apart")
        #expect(first[0] == second[0], "the two orders end differently")
        for name in ["Ann Example", "Bob Example", "Cy Example", "-3.25"] { #expect(first[0].contains(name)) }
        for computer in [a, b, c] + twins {
            let grants = try computer.run(["grants", "--format", "json"], at: Self.mergeTime)
            #expect(grants.status == 0 && !grants.stdout.contains("\"shop\""), "\(computer.name): \(grants)")
            let conflicts = try computer.run(["conflicts"], at: Self.mergeTime)
            #expect(conflicts.stdout.contains(String(shared.prefix(8))), "\(computer.name): \(conflicts)")
            #expect(try computer.run(["check"], at: Self.mergeTime).status == 0)
        }
    }

    /// An export as two copies that include the same writes must agree on it: without
    /// `exported` (when it was made) and the binding's `mac` (a MAC over the file, time
    /// included), attachments in id order. Everything else is the vault's content and must be
    /// the same: prescription ids, version numbers and recorded times, every version's content,
    /// patients by their record ids, attachments with their ids and data, the vault id.
    static func comparable(_ export: [String: Any]) -> String {
        var object = export
        object["exported"] = nil
        if var vault = object["vault"] as? [String: Any] {
            vault["mac"] = nil
            object["vault"] = vault
        }
        // A prescription's attachments are listed in the order this copy stored them, and a
        // merge stores the other copy's after its own: compared as a set.
        object["prescriptions"] = (object["prescriptions"] as? [[String: Any]] ?? []).map { item in
            var item = item
            if let attachments = item["attachments"] as? [[String: Any]] {
                item["attachments"] = attachments.sorted { ($0["id"] as? String ?? "") < ($1["id"] as? String ?? "") }
            }
            return item
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
