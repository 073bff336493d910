import Foundation
import RxStore
import RxTestSupport
import Testing

/// "no stored value makes rxvault trap": a real vault made by the binary has one column
/// of one row changed at a time, on a fresh copy, to a value rxvault never writes (an integer out
/// of range, another SQLite type, NULL, a truncated or empty blob, text that is not an id), and
/// every reading command, the owner's and a client's, is run on it. Whatever the value, rxvault
/// must answer with an exit code (76 for what it finds wrong), never die by a signal: a Swift
/// trap on a stored value is a denial of service anyone who can write the file can cause.
///
/// Every (table, column, value) is a mutation; a run takes a deterministic sample of them (at
/// least one per table, and always the two known traps), as each costs ten
/// runs of the binary. `RXVAULT_MUTATION_SEED` picks another sample, `RXVAULT_MUTATION_SAMPLE`
/// its size (32; `all`: every one of the 523). The copies are read side by side.
@Suite struct StoredValueMutationTests {
    /// What one mutation sets: an SQL expression, in terms of the column's current value where
    /// it needs one (`COL`).
    struct Mutation: CustomStringConvertible, Sendable {
        let table: String
        let column: String
        let value: String
        var description: String { "\(table).\(column) = \(value)" }
    }

    /// Integers rxvault never writes anywhere near, each type it does not expect, and NULL.
    static let integerValues = [
        "-1", "0", "9223372036854775807", "(-9223372036854775807 - 1)", "2147483648",
        "'x'", "1.5", "x'01'", "NULL"
    ]
    /// Ids are 32 lower-case hex digits: empty, cut, the same length in other characters, the
    /// same bytes as a blob, and the other types.
    static let textValues = [
        "''", "substr(COL, 1, length(COL) / 2)",
        "substr(replace(hex(zeroblob(length(COL))), '0', '!'), 1, length(COL))",
        "CAST(COL AS BLOB)", "1", "1.5", "NULL"
    ]
    static let blobValues = ["x''", "substr(COL, 1, length(COL) / 2)", "x'00'", "'x'", "1", "1.5", "NULL"]

    /// The two traps found by the review of stored values (a conversion of a negative number, a sum that overflowed),
    /// always in the sample.
    static let knownTraps = ["vault_state.write_counter = -1", "audit_entry.seq = 9223372036854775807"]

    /// A vault with two prescriptions (one with three versions and a small PNG), their patient, a
    /// client with a grant and two reads of its own logged (one countersigned, one pending), and
    /// two more key slots; checkpointed, so the file alone is the vault.
    final class Base: @unchecked Sendable {
        let cli: CLIHarness
        let glasses: String
        let client: String

        init() throws {
            cli = try CLIHarness()
            try cli.initVault()
            glasses = try cli.add(CLIHarness.glassesArguments)
            _ = try cli.add(CLIHarness.contactsArguments)
            #expect(try cli.run(["edit", glasses, "--note", "a second version"]).status == 0)
            let attached = try cli.run([
                "attach", glasses, AttachmentTests.fixture("valid/png-rgb8.png"), "--name", "scan.png"
            ])
            #expect(attached.status == 0, "\(attached)")
            let recipient = try cli.ageKeygen("shop.key")
            client = cli.path("shop.key")
            #expect(try cli.run(["client", "add", "shop", "--recipient", recipient]).status == 0)
            #expect(try cli.run(["grant", "shop", glasses]).status == 0)
            let partner = try cli.write("partner's passphrase 2026\n", to: "partner")
            #expect(
                try cli.run([
                    "key", "add", "--label", "partner", "--kdf", "interactive", "--new-passphrase-file", partner
                ]).status == 0)
            #expect(try cli.run(["key", "add", "--recovery"]).status == 0)
            // A client read logged and countersigned by the owner's next write, then one left pending.
            let read = try cli.run(
                ["--identity", client, "show", glasses], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
            #expect(read.status == 0, "\(read)")
            #expect(try cli.run(["edit", glasses, "--note", "a third version"]).status == 0)
            #expect(
                try cli.run(["--identity", client, "list"], environment: ["RXVAULT_PASSPHRASE_FILE": nil]).status == 0)
            let check = try cli.run(["check", "--read-data"])
            #expect(check.status == 0, "\(check)")
            try Database(path: cli.vaultPath).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }

        /// The commands that read, in an order where the ones that write (export and the client's
        /// read each log an entry) come last; `check` reads the attachment's chunks too.
        var commands: [(arguments: [String], asClient: Bool)] {
            [
                (["status"], false), (["list"], false), (["show", glasses], false), (["check", "--read-data"], false),
                (["grants"], false),
                (["log"], false), (["key", "list"], false), (["attachments", glasses], false),
                (["export", "--format", "json", "--out", "-"], false),
                (["--identity", client, "show", glasses, "--format", "json"], true)
            ]
        }

        /// Every mutation of every column of every table the vault has.
        func mutations() throws -> [Mutation] {
            let db = try Database(path: cli.vaultPath)
            var tables: [String] = []
            try db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").forEach {
                tables.append($0.text(0) ?? "")
            }
            var all: [Mutation] = []
            for table in tables {
                try db.prepare("SELECT name, type FROM pragma_table_info(?) ORDER BY cid").forEach([.text(table)]) {
                    row in
                    let column = row.text(0) ?? ""
                    let type = row.text(1) ?? ""
                    let values =
                        type == "INTEGER"
                        ? StoredValueMutationTests.integerValues
                        : type == "TEXT" ? StoredValueMutationTests.textValues : StoredValueMutationTests.blobValues
                    all += values.map {
                        Mutation(table: table, column: column, value: $0.replacingOccurrences(of: "COL", with: column))
                    }
                }
            }
            return all
        }
    }

    /// The sample: every table's mutations shuffled by the seed, then taken in turn from each
    /// table (so a sample as large as the number of tables has one of each), the known traps first.
    static func sample(_ all: [Mutation], seed: UInt64, size: Int?) -> [Mutation] {
        var rng = LensConsistencyTests.Generator(state: seed)
        var byTable = Dictionary(grouping: all, by: \.table).sorted { $0.key < $1.key }.map {
            $0.value.shuffled(using: &rng)
        }
        var picked = all.filter { knownTraps.contains($0.description) }
        byTable = byTable.map { $0.filter { !knownTraps.contains($0.description) } }
        var round = 0
        while picked.count < min(size ?? .max, all.count), byTable.contains(where: { round < $0.count }) {
            for mutations in byTable where round < mutations.count && picked.count < (size ?? .max) {
                picked.append(mutations[round])
            }
            round += 1
        }
        return picked
    }

    /// Applies `mutation` to the vault at `path`, as someone with write access to the file would:
    /// CHECK and foreign-key constraints off; for a value of another type or NULL, the table's
    /// declared types, STRICT and NOT NULL taken out of the schema first (the rows' layout on disk
    /// is unchanged). Returns false when SQLite cannot store it at all (text in a rowid).
    static func apply(_ mutation: Mutation, to path: String) throws -> Bool {
        let key: String
        do {
            let db = try Database(path: path)
            let withoutRowID =
                try db.integer(
                    "SELECT count(*) FROM sqlite_master WHERE name = ? AND sql LIKE '%WITHOUT ROWID%'",
                    [.text(mutation.table)]) == 1
            if withoutRowID {
                var columns: [String] = []
                try db.prepare("SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk").forEach([
                    .text(mutation.table)
                ]) { columns.append($0.text(0) ?? "") }
                key =
                    "(\(columns.joined(separator: ", "))) = (SELECT \(columns.joined(separator: ", ")) FROM \(mutation.table) ORDER BY \(columns.joined(separator: ", ")) LIMIT 1)"
            } else {
                key = "rowid = (SELECT min(rowid) FROM \(mutation.table))"
            }
        }
        let update = "UPDATE \(mutation.table) SET \(mutation.column) = \(mutation.value) WHERE \(key)"
        func run() throws {
            let db = try Database(path: path)
            try db.execute("PRAGMA ignore_check_constraints = ON; PRAGMA foreign_keys = OFF")
            try db.execute(update)
            #expect(db.changes == 1, "\(mutation): \(db.changes) rows changed")
        }
        do {
            try run()
            return true
        } catch {}
        do {
            let db = try Database(path: path)
            // Declared types go (no affinity: a value is stored as given), except a rowid alias's.
            try db.execute("PRAGMA writable_schema = ON")
            try db.prepare(
                """
                UPDATE sqlite_master SET sql = replace(replace(replace(replace(replace(replace(replace(replace(sql,
                    'INTEGER PRIMARY KEY', '@ROWID@'), ' INTEGER', ''), ' TEXT', ''), ' BLOB', ''), 'NOT NULL', ''),
                    ') STRICT, WITHOUT ROWID', ') WITHOUT ROWID'), ') STRICT', ')'), '@ROWID@', 'INTEGER PRIMARY KEY')
                WHERE type = 'table' AND name = ?
                """
            ).run([.text(mutation.table)])
        }
        do {
            try run()
            return true
        } catch { return false }
    }

    /// The two values that trapped, one at a time: the owner's commands exit 76 naming the table,
    /// the row and the column, `check` reports it as a finding (the other stages still run), and
    /// a client still reads, told why its read could not be logged.
    @Test func theTwoFormerTrapsAreIntegrityErrorsNamingTheirRow() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let rx = try cli.add(CLIHarness.glassesArguments)
        let recipient = try cli.ageKeygen("shop.key")
        #expect(try cli.run(["client", "add", "shop", "--recipient", recipient]).status == 0)
        #expect(try cli.run(["grant", "shop", rx]).status == 0)
        let original = cli.path("original.rxv")
        try Database(path: cli.vaultPath).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try FileManager.default.copyItem(atPath: cli.vaultPath, toPath: original)
        let asClient = ["--identity", cli.path("shop.key"), "show", rx]

        try Database(path: cli.vaultPath).execute(
            "PRAGMA ignore_check_constraints = ON; UPDATE vault_state SET write_counter = -1")
        let counter = "vault_state (its one row): write_counter is -1, outside 0...9007199254740991"
        // `status` given the passphrase verifies the state root too, so it refuses the row.
        for command in [["status"], ["list"], ["show", rx], ["grants"], ["log"], ["key", "list"]] {
            let r = try cli.run(command)
            #expect(r.status == 76 && r.stderr.contains("integrity check failed: \(counter)"), "\(command): \(r)")
        }
        let check = try cli.run(["check"])
        #expect(
            check.status == 76 && check.stdout.contains("FAIL state root and manifest")
                && check.stdout.contains(counter), "\(check)")
        #expect(check.stdout.contains("ok   clients and grants"), "\(check)")

        for suffix in ["", "-wal", "-shm"] { unlink(cli.vaultPath + suffix) }
        try FileManager.default.copyItem(atPath: original, toPath: cli.vaultPath)
        try Database(path: cli.vaultPath).execute(
            "PRAGMA ignore_check_constraints = ON; UPDATE audit_entry SET seq = 9223372036854775807 WHERE seq = 1")
        let sequence =
            "audit_entry row (seq 9223372036854775807): seq is 9223372036854775807, outside 1...9007199254740991"
        let read = try cli.run(asClient, environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(
            read.status == 0
                && read.stderr.contains(
                    "could not be recorded in the vault's audit log: integrity check failed: \(sequence)"),
            "\(read)")
        let log = try cli.run(["log"])
        #expect(log.status == 76 && log.stderr.contains(sequence), "\(log)")
        let audit = try cli.run(["check", "--format", "json"])
        let stages = try #require(try cli.json(audit.stdout)["stages"] as? [[String: Any]])
        let chain = try #require(stages.first { $0["stage"] as? String == "audit log chain" })
        #expect(
            audit.status == 76 && (chain["errors"] as? [String])?.contains { $0.contains(sequence) } == true, "\(audit)"
        )
    }

    @Test func noStoredValueMakesACommandDieByASignal() throws {
        let base = try Base()
        let all = try base.mutations()
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["RXVAULT_MUTATION_SEED"].flatMap { UInt64($0) } ?? 0x22
        let size = environment["RXVAULT_MUTATION_SAMPLE"].map { $0 == "all" ? nil : Int($0) ?? 32 } ?? 32
        let mutations = Self.sample(all, seed: seed, size: size)
        #expect(
            all.count > 400 && Set(all.map(\.table)).count >= 16,
            "\(all.count) mutations of \(Set(all.map(\.table)).count) tables")
        // Each mutation on a copy of its own, made here; the copies are then read side by side.
        var prepared: [(mutation: Mutation, directory: String)] = []
        for (n, mutation) in mutations.enumerated() {
            let directory = base.cli.path("mutation-\(n)")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: base.cli.vaultPath, toPath: directory + "/vault.rxv")
            if try Self.apply(mutation, to: directory + "/vault.rxv") { prepared.append((mutation, directory)) }
        }
        defer {
            for n in mutations.indices { try? FileManager.default.removeItem(atPath: base.cli.path("mutation-\(n)")) }
        }
        let applied = prepared.count
        let commands = base.commands
        let cli = base.cli
        let found = try concurrentMap(prepared.map { ($0.mutation, $0.directory) }) {
            item -> (deaths: [String], internalErrors: [String]) in
            let (mutation, directory) = item
            var deaths: [String] = []
            var internalErrors: [String] = []
            // Each copy its own rollback anchor (what one mutation makes rxvault record must not
            // change how the next copy reads); no backtracer (a trap still dies, without seconds
            // of symbolication).
            let env: [String: String?] = [
                "RXVAULT_PATH": directory + "/vault.rxv", "XDG_STATE_HOME": directory + "/state",
                "SWIFT_BACKTRACE": "enable=no"
            ]
            for command in commands {
                let r = try cli.run(
                    command.arguments,
                    environment: command.asClient ? env.merging(["RXVAULT_PASSPHRASE_FILE": nil]) { $1 } : env)
                // Through `setsid --wait` a death by a signal is an exit with the signal's number
                // (SIGILL: 4; `signalled` stays false), so any code but a documented one (or 1,
                // counted below) is a death.
                if r.signalled || !(HostileInputTests.documented.contains(r.status) || r.status == 1)
                    || r.stderr.contains("Fatal error")
                {
                    let why =
                        r.stderr.split(separator: "\n").first { $0.contains("Fatal error") } ?? r.stderr.prefix(300)
                    deaths.append(
                        "\(mutation): rxvault \(command.arguments.joined(separator: " ")) \(r.signalled ? "was killed by signal" : "exited") \(r.status): \(why)"
                    )
                } else if r.status == 1 {
                    internalErrors.append(
                        "\(mutation): rxvault \(command.arguments.joined(separator: " ")): \(r.stderr.prefix(300))")
                }
            }
            return (deaths, internalErrors)
        }
        let deaths = found.flatMap(\.deaths)
        let internalErrors = found.flatMap(\.internalErrors)
        #expect(applied * 10 >= mutations.count * 8, "only \(applied) of \(mutations.count) mutations could be stored")
        #expect(deaths.isEmpty, "seed \(seed), \(mutations.count) mutations:\n\(deaths.joined(separator: "\n"))")
        // A value rxvault never writes is damage (76), not an internal error (1).
        #expect(
            internalErrors.isEmpty,
            "seed \(seed), \(mutations.count) mutations:\n\(internalErrors.joined(separator: "\n"))")
    }
}
