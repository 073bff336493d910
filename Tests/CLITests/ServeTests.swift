import Foundation
import RxStore
import RxTestSupport
import RxVault
import RxVaultClient
import Testing

/// `rxvault serve`, end to end over real sockets: curl, the Python reference client,
/// and every response parsed by Python fhir.resources (R4B). What is about the process: start-up
/// and its refusals, signals, the socket, TLS, the agent it runs, and the CLI's writes from
/// another process. Routes, errors and authorization are tested in-process (RxServeTests).
@Suite(.serialized) struct ServeTests {
    /// A vault with two prescriptions (Quintessa's glasses with a photo; a contacts one), and two
    /// clients: the shop granted the glasses with attachments, the family the contacts without.
    func household(today: String = "2026-06-15") throws -> (
        CLIHarness, glasses: String, contacts: String, shop: String, family: String
    ) {
        let cli = try CLIHarness(today: today)
        try cli.initVault()
        let glasses = try cli.add(CLIHarness.glassesArguments)
        let contacts = try cli.add(CLIHarness.contactsArguments)
        #expect(try cli.run(["attach", glasses, AttachmentTests.photo, "--name", "scan.png"]).status == 0)
        for name in ["shop", "family"] {
            let recipient = try cli.ageKeygen("\(name).key")
            #expect(try cli.run(["client", "add", name, "--recipient", recipient]).status == 0)
        }
        #expect(try cli.run(["grant", "shop", glasses]).status == 0)
        #expect(try cli.run(["grant", "family", contacts, "--expires", "2026-06-20", "--no-attachments"]).status == 0)
        return (cli, glasses, contacts, cli.path("shop.key"), cli.path("family.key"))
    }

    func fullID(_ cli: CLIHarness, _ short: String) throws -> String {
        let shown = try cli.json(try cli.run(["show", short, "--format", "json"]).stdout)
        return try #require(shown["id"] as? String)
    }

    @Test func everyResponseIsFHIRAndTheCLIsChangesCountAtTheNextRequest() throws {
        let (cli, glasses, _, shop, family) = try household()
        let server = try ServerProcess(cli)
        let shopToken = try server.token(identity: shop)

        let metadata = try server.curl("GET", "/metadata")
        #expect(metadata.status == 200 && metadata.headers.lowercased().contains("content-type: application/fhir+json"))
        #expect(try ServerProcess.validateFHIR(metadata.body, in: cli.directory).types == "CapabilityStatement")

        // Search, read, history, patient, documents, binary: all FHIR.
        let search = try server.curl("GET", "/VisionPrescription", token: shopToken)
        #expect(search.status == 200)
        #expect(try ServerProcess.validateFHIR(search.body, in: cli.directory).types == "Bundle,VisionPrescription")
        let entry = try #require((search.json["entry"] as? [[String: Any]])?.first?["resource"] as? [String: Any])
        let resourceID = try #require(entry["id"] as? String)
        let patientRef = try #require((entry["patient"] as? [String: Any])?["reference"] as? String)
        let read = try server.curl("GET", "/VisionPrescription/\(resourceID)", token: shopToken)
        #expect(read.status == 200)
        #expect(try ServerProcess.validateFHIR(read.body, in: cli.directory).types == "VisionPrescription")
        let history = try server.curl("GET", "/VisionPrescription/\(resourceID)/_history", token: shopToken)
        #expect(history.status == 200)
        #expect(try ServerProcess.validateFHIR(history.body, in: cli.directory).ok, "\(history.body)")
        let patient = try server.curl("GET", "/\(patientRef)", token: shopToken)
        #expect(patient.status == 200 && patient.body.contains("Quintessa Marlowe"))
        #expect(try ServerProcess.validateFHIR(patient.body, in: cli.directory).types == "Patient")
        let documents = try server.curl(
            "GET", "/DocumentReference?related=VisionPrescription/\(resourceID)", token: shopToken)
        #expect(try ServerProcess.validateFHIR(documents.body, in: cli.directory).types == "Bundle,DocumentReference")
        let document = try #require((documents.json["entry"] as? [[String: Any]])?.first?["resource"] as? [String: Any])
        let url = try #require(
            ((document["content"] as? [[String: Any]])?.first?["attachment"] as? [String: Any])?["url"] as? String)
        let binary = try server.curl(
            "GET", String(url.dropFirst("http://localhost".count)), token: shopToken, output: cli.path("downloaded.png")
        )
        #expect(binary.status == 200 && binary.headers.lowercased().contains("content-type: image/png"))
        #expect(FileManager.default.contentsEqual(atPath: cli.path("downloaded.png"), andPath: AttachmentTests.photo))
        let missing = try server.curl(
            "GET", "/VisionPrescription/00000000-0000-5000-8000-000000000000", token: shopToken)
        #expect(missing.status == 404)
        #expect(try ServerProcess.validateFHIR(missing.body, in: cli.directory).types == "OperationOutcome")
        let familyToken = try server.token(identity: family)
        #expect(try server.curl("GET", "/VisionPrescription", token: familyToken).json["total"] as? Int == 1)

        // A revoke made with the CLI while the server runs counts at the next request.
        #expect(try cli.run(["revoke", "shop", glasses]).status == 0)
        #expect(try server.curl("GET", "/VisionPrescription/\(resourceID)", token: shopToken).status == 404)
        #expect(try server.curl("GET", "/VisionPrescription", token: shopToken).json["total"] as? Int == 0)

        // Stopping writes every served read to the owner's log; `grants` shows the last read.
        #expect(server.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: server.socket), "the socket is removed")
        let log = try cli.json(try cli.run(["log", "--format", "json"]).stdout)["entries"] as? [[String: Any]] ?? []
        let apiReads = log.filter { ($0["detail"] as? String)?.hasPrefix("api ") == true }
        #expect(
            apiReads.contains {
                $0["detail"] as? String == "api read Binary scan.png" && ($0["client"] as? String) == "shop"
            }, "\(apiReads)")
        #expect(apiReads.contains { ($0["client"] as? String) == "family" })
        #expect(try cli.run(["check"]).status == 0)
    }

    /// SIGTERM while a client is still downloading: the download completes, then the server exits 0.
    @Test func aSignalLetsTheRequestInFlightFinish() throws {
        let (cli, _, _, shop, _) = try household()
        let server = try ServerProcess(cli)
        let token = try server.token(identity: shop)
        let documents = try server.curl("GET", "/DocumentReference", token: token)
        let document = try #require((documents.json["entry"] as? [[String: Any]])?.first?["resource"] as? [String: Any])
        let url = try #require(
            ((document["content"] as? [[String: Any]])?.first?["attachment"] as? [String: Any])?["url"] as? String)
        // A reader that takes 4 KiB every 50 ms: 240 KiB keeps it in flight for about three
        // seconds, so the signal comes well before the end even on a loaded machine. (curl's
        // --limit-rate cannot do this: 7.88 fetches a body this small at full speed.)
        let reader = """
            import socket, sys, time
            path, target, token, out = sys.argv[1:5]
            s = socket.socket(socket.AF_UNIX); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096); s.connect(path)
            s.sendall(f"GET {target} HTTP/1.1\\r\\nHost: localhost\\r\\nAuthorization: Bearer {token}\\r\\nConnection: close\\r\\n\\r\\n".encode())
            data = b""
            while chunk := s.recv(4096):
                if not data: open(out + ".started", "w").close()
                data += chunk; time.sleep(0.05)
            head, _, body = data.partition(b"\\r\\n\\r\\n")
            open(out, "wb").write(body)
            print(head.split()[1].decode(), end="")
            """
        let target = try #require(URLComponents(string: url)).path
        let download = Process()
        download.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        download.arguments = ["-c", reader, server.socket, target, token, cli.path("slow.png")]
        let out = Pipe()
        download.standardOutput = out
        try download.run()
        // The signal comes once the first bytes have arrived, while the rest are still to come.
        #expect(eventually(within: 30) { FileManager.default.fileExists(atPath: cli.path("slow.png.started")) })
        #expect(download.isRunning, "the download is still in flight when the signal comes")
        server.process.terminate()
        download.waitUntilExit()
        #expect(String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "200")
        #expect(
            FileManager.default.contentsEqual(atPath: cli.path("slow.png"), andPath: AttachmentTests.photo),
            "\((try? FileManager.default.attributesOfItem(atPath: cli.path("slow.png"))[.size]) ?? "no file") bytes arrived"
        )
        #expect(server.stop() == 0)
        let log = try cli.run(["log", "--format", "json"]).stdout
        #expect(log.contains("api read Binary scan.png"), "the read was logged at shutdown")
    }

    /// Over TCP, limits follow the peer's address: a stranger at 127.0.0.2 that names the shop's
    /// recipient and answers wrong is refused after ten failures, on both endpoints, while the
    /// shop, from 127.0.0.1, logs in and reads.
    @Test func aStrangersAddressIsRefusedWhileTheClientLogsIn() throws {
        let (cli, _, _, shop, _) = try household()
        let port = freeLoopbackPort()
        let server = try ServerProcess(cli, arguments: ["--listen", "127.0.0.1:\(port)"])
        defer { server.stop() }
        // One style of start-up lines: rxvault's, not Hummingbird's own beside it.
        #expect(server.stderr.contains("rxvault: serving vault"))
        #expect(!server.stderr.contains("Hummingbird"), "\(server.stderr)")
        let url = "http://127.0.0.1:\(port)"
        let stranger = ["--interface", "127.0.0.2"]
        let recipient = try ServerProcess.recipient(of: shop)
        var statuses: [Int] = []
        for _ in 0..<12 {
            let challenge = try server.curl(
                "POST", "/auth/challenge", body: #"{"recipient": "\#(recipient)"}"#, url: url, extra: stranger)
            guard challenge.status == 200, let id = challenge.json["challenge"] as? String else {
                statuses.append(challenge.status)
                break
            }
            let answer = try server.curl(
                "POST", "/auth/token", body: #"{"challenge": "\#(id)", "response": "wrong"}"#, url: url, extra: stranger
            )
            statuses.append(answer.status)
        }
        #expect(statuses == Array(repeating: 401, count: 10) + [429], "\(statuses)")
        let token = try server.token(identity: shop, url: url)
        let read = try server.curl("GET", "/VisionPrescription", token: token, url: url)
        #expect(read.status == 200 && (read.json["entry"] as? [Any])?.count == 1, "\(read.body)")
        let refused = try server.curl(
            "POST", "/auth/token", body: #"{"challenge": "x", "response": "y"}"#, url: url, extra: stranger)
        #expect(refused.status == 429)

        // 70 idle connections from the stranger's address (more than the 64 in all): 16 are
        // kept, the rest closed as they open, and a request from another address is answered
        // at once rather than after the idle timeout (30 s) frees a slot.
        let flood = try cli.write(
            #"""
            import socket, sys, time
            port = int(sys.argv[1])
            held = []
            for _ in range(70):
                s = socket.socket(); s.bind(("127.0.0.2", 0)); s.settimeout(5)
                try:
                    s.connect(("127.0.0.1", port)); s.setblocking(False); held.append(s)
                except OSError:
                    pass
            closed, deadline = set(), time.monotonic() + 5
            while len(closed) < 54 and time.monotonic() < deadline:
                for s in held:
                    try:
                        if s not in closed and s.recv(1) == b"": closed.add(s)
                    except BlockingIOError:
                        pass
                    except ConnectionError:
                        closed.add(s)
                time.sleep(0.05)
            closed = len(closed)
            start = time.monotonic()
            c = socket.create_connection(("127.0.0.1", port), timeout=25)
            c.sendall(b"GET /metadata HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            status = c.recv(12).split()[1].decode()
            print(closed, status, round(time.monotonic() - start, 1))
            """#, to: "flood.py")
        let (code, out, err) = try ServerProcess.run("/usr/bin/python3", [flood, String(port)], in: cli.directory)
        let fields = out.split(separator: " ").map(String.init)
        #expect(code == 0 && fields.count == 3, "\(out) \(err)")
        if fields.count == 3 {
            #expect(fields[0] == "54" && fields[1] == "200", "closed, status, seconds: \(out)")
            #expect((Double(fields[2].trimmingCharacters(in: .whitespacesAndNewlines)) ?? 99) < 10, "\(out)")
        }
    }

    /// While it serves, the server is the vault's agent: owner commands need no passphrase; after it stops, they do.
    @Test func theServerUnlocksTheVaultForOwnerCommandsWhileItRuns() throws {
        let (cli, glasses, _, _, _) = try household()
        // A short folder: a socket's path must fit in 108 bytes.
        var template = Array("/tmp/rxsrv-XXXXXX".utf8CString)
        let runtime = String(
            cString: try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }))
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let server = try ServerProcess(cli, environment: ["XDG_RUNTIME_DIR": runtime])
        #expect(server.stderr.contains("unlocked while the server runs"), "\(server.stderr)")
        let noPassphrase: [String: String?] = ["RXVAULT_PASSPHRASE_FILE": nil, "XDG_RUNTIME_DIR": runtime]
        let show = try cli.run(["show", glasses, "--no-input"], environment: noPassphrase)
        #expect(show.status == 0 && show.stdout.contains("Quintessa Marlowe"), "\(show)")
        #expect(try cli.run(["status"], environment: noPassphrase).stdout.contains("unlocked until"))
        #expect(server.stop() == 0)
        #expect(
            try cli.run(["show", glasses, "--no-input"], environment: noPassphrase).status == 64,
            "locked again once the server stopped")
        #expect(try FileManager.default.contentsOfDirectory(atPath: runtime + "/rxvault").isEmpty, "no socket is left")
    }

    /// `--on-request` tells the owner of each access request by running their command, with the
    /// request's id and the client's name, and nothing the client wrote or any prescription.
    @Test func theOwnersCommandHearsOfEachAccessRequest() throws {
        let (cli, _, _, shop, _) = try household()
        let heard = cli.path("heard.txt")
        let environment = cli.path("environment.txt")
        let server = try ServerProcess(
            cli,
            arguments: [
                "--socket", cli.path("api.sock"), "--on-request",
                "printf '%s %s\\n' \"$RXVAULT_REQUEST_ID\" \"$RXVAULT_REQUEST_CLIENT\" >> '\(heard)'; env > '\(environment)'"
            ])
        defer { server.stop() }
        let (asked, askedOut, askedErr) = try server.client(
            identity: shop, ["request", "--reason", "ordering lenses; rm -rf ~", "--kind", "contacts"])
        #expect(asked == 0, "\(askedErr)")
        let request = try #require(try JSONSerialization.jsonObject(with: Data(askedOut.utf8)) as? [String: Any])
        let requestID = try #require(request["id"] as? String)
        var text = ""
        for _ in 0..<100 where !text.contains("\n") {
            Thread.sleep(forTimeInterval: 0.05)
            text = (try? String(contentsOfFile: heard, encoding: .utf8)) ?? ""
        }
        #expect(text == "\(requestID) shop\n", "\(text)")
        let seen = (try? String(contentsOfFile: environment, encoding: .utf8)) ?? ""
        #expect(!seen.contains("ordering lenses") && !seen.contains("RXVAULT_PASSPHRASE_FILE"), "\(seen)")
        #expect(!seen.contains("Quintessa"), "no prescription data")
    }

    /// The server against its OpenAPI document, by a property-based tool (schemathesis, from
    /// PyPI, in the project's Python): every answer's status, type and body as documented, no
    /// server error, malformed requests refused. A fixed seed: the same cases on every run.
    @Test func theServerKeepsToItsOpenAPIDocument() throws {
        let (cli, _, _, shop, _) = try household()
        let port = freeLoopbackPort()
        let server = try ServerProcess(cli, arguments: ["--listen", "127.0.0.1:\(port)"])
        defer { server.stop() }
        let url = "http://127.0.0.1:\(port)"
        let token = try server.token(identity: shop, url: url)
        let tool = URL(fileURLWithPath: ServerProcess.python).deletingLastPathComponent()
            .appendingPathComponent("schemathesis").path
        #expect(FileManager.default.isExecutableFile(atPath: tool), "scripts/setup installs schemathesis")
        let (status, out, err) = try ServerProcess.run(
            tool,
            [
                "run", "\(url)/openapi.json", "--header", "Authorization: Bearer \(token)", "--checks",
                "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,negative_data_rejection",
                "--max-examples", "20", "--seed", "23", "--no-color"
            ], in: cli.directory)
        #expect(status == 0, "schemathesis: \(out.suffix(4000)) \(err.suffix(2000))")
        #expect(out.contains("passed"), "\(out.suffix(2000))")
    }

    /// The Swift client library (RxVaultClient, a product of the package) against a live server:
    /// it logs in with the identity, searches with every filter, reads, downloads and asks.
    @Test func theSwiftClientReadsDownloadsAndAsksForAccess() async throws {
        let (cli, glasses, _, shop, _) = try household()
        let port = freeLoopbackPort()
        let server = try ServerProcess(cli, arguments: ["--listen", "127.0.0.1:\(port)"])
        defer { server.stop() }
        let client = try RxVaultClient(
            baseURL: try #require(URL(string: "http://127.0.0.1:\(port)")),
            identity: try String(contentsOfFile: shop, encoding: .utf8))
        try await client.authenticate()
        let all = try await client.search()
        #expect(all.count == 1 && all[0].lensSpecification.count == 2, "\(all)")
        let full = try fullID(cli, glasses)
        #expect(all[0].id == FHIR.prescriptionResourceID(try #require(PrescriptionID(hex: full))))
        let right = try #require(all[0].lensSpecification.first { $0.eye == "right" })
        #expect(right.sphere == -2.25 && right.cylinder == -0.75 && right.axis == 180 && right.add == 2.0)
        let patient = try #require(all[0].patient?.reference)
        #expect(try await client.search(.init(patient: patient, dateWritten: ["ge2026-01-01"])).count == 1)
        #expect(try await client.search(.init(dateWritten: ["ge2026-01-01", "lt2026-03-01"])).isEmpty)
        #expect(try await client.search(.init(lastUpdatedSince: "2000-01-01")).count == 1)
        #expect(try await client.prescription(all[0].id) == all[0])
        #expect(try await client.history(all[0].id).count == 1)
        let documents = try await client.attachments(of: all[0].id)
        let binary = try #require(documents.first?.binaryID)
        let (data, type) = try await client.download(binary)
        let photo = try Data(contentsOf: URL(fileURLWithPath: AttachmentTests.photo))
        #expect(type == "image/png" && data == photo)
        // Not granted: the server's 404, as the client error says it.
        await #expect(throws: RxVaultClientError.self) { try await client.prescription(UUID().uuidString.lowercased()) }
        let asked = try await client.requestAccess(reason: "ordering contact lenses", kinds: ["contacts"])
        #expect(asked.status == "pending")
        #expect(try await client.accessRequest(asked.id).status == "pending")
        // A key that is no client's cannot log in; text that holds no key is refused at once.
        _ = try cli.ageKeygen("stranger.key")
        let stranger = try RxVaultClient(
            baseURL: try #require(URL(string: "http://127.0.0.1:\(port)")),
            identity: try String(contentsOfFile: cli.path("stranger.key"), encoding: .utf8))
        await #expect(throws: RxVaultClientError.self) { try await stranger.authenticate() }
        #expect(throws: RxVaultClientError.self) {
            try RxVaultClient(baseURL: URL(fileURLWithPath: "/"), identity: "# no key here")
        }
    }

    @Test func theReferenceClientReadsDownloadsAndAsksForAccess() throws {
        let (cli, glasses, contacts, shop, _) = try household()
        let server = try ServerProcess(cli)
        let (status, out, err) = try server.client(identity: shop, ["list"])
        #expect(status == 0, "\(err)")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [[String: Any]])
        #expect(list.count == 1)
        let id = try #require(list.first?["id"] as? String)
        let (_, docsOut, _) = try server.client(identity: shop, ["attachments", id])
        let docs = try #require(try JSONSerialization.jsonObject(with: Data(docsOut.utf8)) as? [[String: Any]])
        let binaryID = try #require(docs.first?["id"] as? String)
        let (downloaded, _, downloadErr) = try server.client(
            identity: shop, ["download", binaryID, "--out", cli.path("scan.png")])
        #expect(downloaded == 0, "\(downloadErr)")
        #expect(FileManager.default.contentsEqual(atPath: cli.path("scan.png"), andPath: AttachmentTests.photo))

        // Asking for access: pending, listed for the owner, approved with one prescription.
        let (asked, askedOut, askedErr) = try server.client(
            identity: shop, ["request", "--reason", "ordering contact lenses", "--kind", "contacts"])
        #expect(asked == 0, "\(askedErr)")
        let request = try #require(try JSONSerialization.jsonObject(with: Data(askedOut.utf8)) as? [String: Any])
        let requestID = try #require(request["id"] as? String)
        #expect(request["status"] as? String == "pending")
        let pending = try cli.run(["requests"])
        #expect(
            pending.stdout.contains(String(requestID.prefix(8))) && pending.stdout.contains("ordering contact lenses"),
            "\(pending)")
        let approved = try cli.run(["requests", "approve", String(requestID.prefix(8)), contacts, "--expires", "30d"])
        #expect(approved.status == 0 && approved.stdout.contains("new grant until 2026-07-15"), "\(approved)")
        let (_, statusOut, _) = try server.client(identity: shop, ["request-status", requestID])
        let answered = try #require(try JSONSerialization.jsonObject(with: Data(statusOut.utf8)) as? [String: Any])
        #expect(answered["status"] as? String == "answered" && (answered["granted"] as? [String])?.count == 1)
        let (_, after, _) = try server.client(identity: shop, ["list"])
        #expect((try JSONSerialization.jsonObject(with: Data(after.utf8)) as? [[String: Any]])?.count == 2)
        // Every filter counts together: the patient with dates, and every date bound given.
        func count(_ filters: [String]) throws -> Int? {
            let (code, out, err) = try server.client(identity: shop, ["list"] + filters)
            #expect(code == 0, "\(filters): \(err)")
            return (try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [[String: Any]])?.count
        }
        let patient = try #require(
            ((try JSONSerialization.jsonObject(with: Data(after.utf8)) as? [[String: Any]])?.first?["patient"]
                as? [String: Any])?["reference"] as? String)
        #expect(try count(["--patient", patient, "--datewritten", "ge2026-01-01"]) == 2)
        #expect(
            try count(["--patient", "Patient/\(UUID().uuidString.lowercased())", "--datewritten", "ge2026-01-01"]) == 0)
        #expect(try count(["--datewritten", "ge2026-01-01", "--datewritten", "lt2026-03-01"]) == 0)
        #expect(try count(["--datewritten", "ge2026-01-01", "--datewritten", "lt2026-03-02"]) == 2)
        #expect(try count(["--updated-since", "2000-01-01"]) == 2)
        // Through the binary, with curl: the owner's short id, _include, and _count past the largest page.
        let token = try server.token(identity: shop)
        let byShortID = try server.curl("GET", "/VisionPrescription?identifier=\(glasses)", token: token)
        #expect(byShortID.status == 200 && byShortID.json["total"] as? Int == 1, "\(byShortID.body)")
        let included = try server.curl(
            "GET", "/VisionPrescription?_include=VisionPrescription:patient&_count=100000", token: token)
        #expect(included.status == 200 && included.body.contains("\"mode\":\"include\""), "\(included.body)")
        let totalOnly = try server.curl("GET", "/VisionPrescription?_count=0", token: token)
        #expect(
            totalOnly.json["total"] as? Int == 2 && ((totalOnly.json["entry"] as? [Any])?.isEmpty ?? true),
            "\(totalOnly.body)")
        #expect(try cli.run(["requests"]).stdout.contains("no access requests waiting"))
        // The log's table says what was asked and answered in words; its JSON keeps the record.
        let logTable = try cli.run(["log"]).stdout
        let shortID = String(requestID.prefix(8))
        #expect(
            logTable.contains("request \(shortID): contacts, \"ordering contact lenses\"")
                && logTable.contains("request \(shortID) approved"), "\(logTable)")
        #expect(try cli.run(["log", "--format", "json"]).stdout.contains("\\\"outcome\\\":\\\"approved\\\""))

        // A denied request says only "answered"; an unknown one is 404; approving twice is refused.
        let (_, secondOut, _) = try server.client(identity: shop, ["request", "--reason", "all of them please"])
        let second = try #require(try JSONSerialization.jsonObject(with: Data(secondOut.utf8)) as? [String: Any])
        let secondID = try #require(second["id"] as? String)
        #expect(try cli.run(["requests", "deny", secondID]).status == 0)
        let (_, deniedOut, _) = try server.client(identity: shop, ["request-status", secondID])
        #expect(deniedOut.contains("\"answered\"") && !deniedOut.contains("denied"))
        #expect(try cli.run(["requests", "approve", secondID, glasses]).status == 65)
        #expect(try cli.run(["requests", "deny", "ffffffff"]).status == 67)
        #expect(try server.client(identity: shop, ["request-status", "ffffffffffffffff"]).0 == 1)
    }

    @Test func startupRefusesWhatWouldBeUnsafeOrAmbiguous() throws {
        let (cli, _, _, shop, _) = try household()
        let exposed = try cli.run(["serve", "--listen", "0.0.0.0:18443"])
        #expect(exposed.status == 64 && exposed.stderr.contains("TLS"), "\(exposed)")
        #expect(try cli.run(["serve", "--listen", "127.0.0.1:0"]).status == 64)
        #expect(try cli.run(["serve", "--listen", "127.0.0.1:8080", "--tls-cert", "c.pem"]).status == 64)
        #expect(try cli.run(["serve", "--socket", "a", "--listen", "127.0.0.1:8080"]).status == 64)
        let file = try cli.write("not a socket", to: "file.sock")
        #expect(try cli.run(["serve", "--socket", file]).status == 73)
        // A second server on the same socket is refused; the first keeps serving.
        let server = try ServerProcess(cli)
        let second = try cli.run(["serve", "--socket", server.socket])
        #expect(second.status == 73 && second.stderr.contains("another server"), "\(second)")
        #expect(try server.curl("GET", "/metadata").status == 200)
        // The socket is the owner's alone.
        var info = stat()
        #expect(lstat(server.socket, &info) == 0 && info.st_mode & 0o777 == 0o600)
        server.stop()
        // A stale socket (a server that was killed) is replaced.
        let killed = try ServerProcess(cli)
        kill(killed.process.processIdentifier, SIGKILL)
        killed.process.waitUntilExit()
        #expect(FileManager.default.fileExists(atPath: killed.socket))
        let again = try ServerProcess(cli)
        #expect(try again.curl("GET", "/metadata").status == 200)
        again.stop()

        // TCP on loopback, and TLS with a certificate (openssl makes a self-signed one).
        let port = freeLoopbackPort()
        let tcp = try ServerProcess(cli, arguments: ["--listen", "127.0.0.1:\(port)"])
        #expect(try tcp.curl("GET", "/metadata", url: "http://127.0.0.1:\(port)").status == 200)
        // The address taken: refused (73), the first server unharmed.
        let taken = try cli.run(["serve", "--listen", "127.0.0.1:\(port)"])
        #expect(
            taken.status == 73 && taken.stderr.contains("127.0.0.1:\(port) is already in use by another program"),
            "\(taken)")
        #expect(try tcp.curl("GET", "/metadata", url: "http://127.0.0.1:\(port)").status == 200)
        tcp.stop()
        let (made, _, madeErr) = try ServerProcess.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                "-keyout", cli.path("key.pem"), "-out", cli.path("cert.pem")
            ], in: cli.directory)
        #expect(made == 0, "\(madeErr)")
        let tls = try ServerProcess(
            cli,
            arguments: [
                "--listen", "127.0.0.1:\(port + 1)", "--tls-cert", cli.path("cert.pem"), "--tls-key",
                cli.path("key.pem")
            ])
        let secure = try tls.curl(
            "GET", "/metadata", url: "https://127.0.0.1:\(port + 1)", extra: ["--cacert", cli.path("cert.pem")])
        #expect(secure.status == 200)
        let token = try { () throws -> String in
            let recipient = try ServerProcess.recipient(of: shop)
            let challenge = try tls.curl(
                "POST", "/auth/challenge", body: #"{"recipient": "\#(recipient)"}"#,
                url: "https://127.0.0.1:\(port + 1)",
                extra: ["--cacert", cli.path("cert.pem")]
            ).json
            return try #require(challenge["challenge"] as? String)
        }()
        #expect(!token.isEmpty)
        #expect(tls.stop() == 0)
        #expect(
            try cli.run([
                "serve", "--listen", "127.0.0.1:\(port + 2)", "--tls-cert", cli.path("cert.pem"), "--tls-key",
                cli.path("cert.pem")
            ]).status == 65)
    }
}
