import Foundation
import Testing

/// An owner's read checks what it reads against the state root (DESIGN.md, "State root"): the
/// root and the rows it pins (client rows, audit head, key ring, index buckets, patient rows)
/// must be read in one snapshot. Read one statement at a time, a write committed in between -
/// `rxvault serve` writes the reads it answered about once a second, and any owner command
/// writes - paired the old root with the new audit head: `query` and `show` exited 76 ("the
/// audit log's head is not the one the owner wrote last"), and the API answered 500 (found by
/// WholeLifeTests). `RXVAULT_TEST_READ_PAUSE_MS` holds the reader between the root and the rows
/// checked against it, so a write lands there every time, not once in thousands of reads.
@Suite(.serialized) struct SnapshotReadTests {
    /// Does `body` again and again on a thread of its own until stopped (then says how often).
    final class Repeating: @unchecked Sendable {
        private let lock = NSLock()
        private var stopped = false
        private let done = DispatchSemaphore(value: 0)
        private(set) var failures: [String] = []
        private(set) var rounds = 0

        init(pause: useconds_t, _ body: @escaping @Sendable () throws -> String?) {
            Thread { [self] in
                while !isStopped {
                    let failure: String?
                    do { failure = try body() } catch { failure = "\(error)" }
                    lock.withLock {
                        rounds += 1
                        if let failure { failures.append(failure) }
                    }
                    usleep(pause)
                }
                done.signal()
            }.start()
        }

        private var isStopped: Bool { lock.withLock { stopped } }

        func stop() {
            guard
                lock.withLock({ () -> Bool in
                    defer { stopped = true }
                    return !stopped
                })
            else { return }
            done.wait()
        }
    }

    struct Harness: @unchecked Sendable { let cli: CLIHarness }

    static let pause = "1500"
    static let pausing = "rxvault: test: state root read, pausing"

    /// The server writes its audit entries (each second, as long as it answers reads) while the
    /// owner's `query` and `show` are between reading the root and the audit head.
    @Test func ownerReadsHoldWhileTheServerWritesTheReadsItServed() throws {
        let (cli, glasses, _, shop, _) = try ServeTests().household()
        let server = try ServerProcess(cli)
        let token = try server.token(identity: shop)
        let socket = server.socket
        let reads = Repeating(pause: 50_000) {
            let answer = try RawHTTP.get(socket, "/VisionPrescription?_count=200", token: token)
            return answer.status == 200 ? nil : "API search: \(answer.status) \(answer.body.prefix(200))"
        }
        defer { reads.stop() }
        let before = try serverWrites(cli)

        let query = try cli.run(
            ["query", "--valid-on", "2026-06-15", "--format", "json"],
            environment: ["RXVAULT_TEST_READ_PAUSE_MS": Self.pause])
        #expect(query.status == 0, "\(query)")
        #expect(query.stderr.contains(Self.pausing), "the read paused after the root: \(query.stderr)")
        #expect(query.stdout.contains("Quintessa Marlowe"), "\(query.stdout)")
        // `show` reads the prescription's patient after its row (format 4), checked against the root.
        let show = try cli.run(
            ["show", glasses, "--format", "json"], environment: ["RXVAULT_TEST_READ_PAUSE_MS": Self.pause])
        #expect(show.status == 0, "\(show)")
        #expect(show.stdout.contains("Quintessa Marlowe"), "\(show.stdout)")

        reads.stop()
        #expect(reads.failures.isEmpty, "\(reads.failures)")
        // The server did write meanwhile (a write each second, the commands paused 1.5 s each).
        #expect(try serverWrites(cli) > before + 2)
        #expect(server.stop() == 0)
        let check = try cli.run(["check"])
        #expect(check.status == 0, "\(check)")
    }

    /// The other way round: owner commands write while the server, reading a prescription for a
    /// client, is between reading the root and the audit head (its patient, read after its row).
    @Test func apiReadsHoldWhileTheOwnerWrites() throws {
        let (cli, _, _, shop, _) = try ServeTests().household()
        let server = try ServerProcess(cli, environment: ["RXVAULT_TEST_READ_PAUSE_MS": "1000"])
        let token = try server.token(identity: shop)
        let harness = Harness(cli: cli)
        let writes = Repeating(pause: 0) {
            // Prescriptions no client is granted: what the shop reads stays the same.
            let add = try harness.cli.run([
                "add", "glasses", "--patient", "Another Patient", "--prescriber", "Dr Other",
                "--issued", "2026-03-01", "--expires", "2028-03-01", "--od", "-1.00", "--os", "-1.25"
            ])
            return add.status == 0 ? nil : "add: \(add)"
        }
        defer { writes.stop() }
        for _ in 0..<3 {
            let answer = try RawHTTP.get(server.socket, "/VisionPrescription?_count=200", token: token)
            #expect(answer.status == 200, "\(answer.status) \(answer.body.prefix(300))")
            #expect(answer.json["total"] as? Int == 1, "\(answer.body.prefix(300))")
        }
        writes.stop()
        let added = writes.rounds
        #expect(writes.failures.isEmpty, "\(writes.failures)")
        #expect(added >= 3, "owner writes made while the API answered: \(added)")
        #expect(server.stderr.contains(Self.pausing), "the server paused after the root: \(server.stderr.suffix(2000))")
        #expect(server.stop() == 0)
    }

    /// The server's audit writes so far: one entry per write (its reads of one search coalesce).
    func serverWrites(_ cli: CLIHarness) throws -> Int {
        let log = try cli.json(try cli.run(["log", "--format", "json"]).stdout)["entries"] as? [[String: Any]] ?? []
        return log.filter { ($0["detail"] as? String)?.hasPrefix("api ") == true }.count
    }
}
