import Foundation
import Testing

/// Issue 11, `rxvault serve`: a seeded random walk of owner commands (grants with and without an
/// end or attachments, re-grants that keep their terms, revokes, edits, attachments, clients
/// added and removed, days passing) while the server runs. After every step each client sees
/// through the API exactly what a model of its live grants says: the search's total and ids,
/// 200 for each granted prescription (its newest content) and 404 for every other one, Binary
/// and DocumentReference only where attachments are granted, 401 once removed. The server is
/// restarted only when the day moves, so whatever it caches must follow every write at once,
/// also when its own audit write (the reads it served, each second) lands after the owner's.
@Suite(.serialized) struct ServePropertyTests {
    typealias Generator = LensConsistencyTests.Generator

    /// A grant's terms in the model: the last day (nil: no end), and whether attachments are readable.
    struct Terms: Equatable {
        var lastDay: Int?
        var attachments: Bool
    }

    struct Prescription {
        let short: String
        let resourceID: String
        var note: String?
        var attachmentIDs: [String]
    }

    final class Model {
        var prescriptions: [Prescription] = []
        /// Client name -> identity file, for registered clients; removed ones keep their last token.
        var clients: [String: String] = [:]
        var removed: [String: String] = [:]
        var grants: [String: [Int: Terms]] = [:]
        var day = 0
        var tokens: [String: String] = [:]

        func live(_ client: String) -> [Int: Terms] {
            (grants[client] ?? [:]).filter { $0.value.lastDay.map { $0 >= day } ?? true }
        }
    }

    static let firstDay = CalendarDay(year: 2026, month: 6, day: 15)

    struct CalendarDay {
        let year: Int, month: Int, day: Int
        func adding(_ days: Int) -> String {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let start = calendar.date(from: DateComponents(year: year, month: month, day: day))!
            let date = calendar.date(byAdding: .day, value: days, to: start)!
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
        }
    }

    @Test func eachClientSeesExactlyItsLiveGrantsAfterEveryStep() throws {
        let seed = ProcessInfo.processInfo.environment["RXVAULT_PROPERTY_SEED"].flatMap(UInt64.init) ?? 0x5EED_0011
        let steps = ProcessInfo.processInfo.environment["RXVAULT_PROPERTY_STEPS"].flatMap(Int.init) ?? 34
        var rng = Generator(state: seed)
        let cli = try CLIHarness(today: Self.firstDay.adding(0))
        try cli.initVault()
        let model = Model()

        // Five prescriptions for three patients; two with a photo.
        let patients = ["Quintessa Marlowe", "Bartholomew Oyelaran", "Ingrid Vasquez-Thorne"]
        for n in 0..<5 {
            var arguments = n % 2 == 0 ? CLIHarness.glassesArguments : CLIHarness.contactsArguments
            arguments[arguments.firstIndex(of: "--patient")! + 1] = patients[n % patients.count]
            let short = try cli.add(arguments)
            let attachments = n < 2 ? try attach(cli, short) : []
            model.prescriptions.append(
                Prescription(
                    short: short, resourceID: try resourceID(cli, short), note: nil, attachmentIDs: attachments))
        }
        for name in ["shop", "family", "clinic"] { try addClient(cli, model, name) }

        var server = try ServerProcess(cli, environment: ["RXVAULT_TODAY": Self.firstDay.adding(model.day)])
        try authenticate(server, model)
        try expectModel(server, model, step: "start (seed \(seed))")

        var log: [String] = []
        var added = 0
        for step in 1...steps {
            let clientNames = model.clients.keys.sorted()
            let client = clientNames.randomElement(using: &rng)!
            let roll = Int.random(in: 0..<100, using: &rng)
            var did: String
            switch roll {
            case 0..<42:
                // A grant of one or two prescriptions (half the time one it already has, so
                // re-grants that keep or change their terms come up), terms restated or not.
                let held = model.live(client).keys.sorted()
                let pick = { (rng: inout Generator) -> Int in
                    held.isEmpty || Bool.random(using: &rng)
                        ? Int.random(in: 0..<model.prescriptions.count, using: &rng) : held.randomElement(using: &rng)!
                }
                let targets = Array(Set((0..<Int.random(in: 1...2, using: &rng)).map { _ in pick(&rng) })).sorted()
                var arguments = ["grant", client] + targets.map { model.prescriptions[$0].short }
                var end: Int?? = nil
                switch Int.random(in: 0..<3, using: &rng) {
                case 0:
                    let last = model.day + Int.random(in: 0...4, using: &rng)
                    end = .some(last)
                    arguments += ["--expires", Self.firstDay.adding(last)]
                case 1:
                    end = .some(nil)
                    arguments.append("--no-expiry")
                default: break
                }
                var attachments: Bool? = nil
                switch Int.random(in: 0..<3, using: &rng) {
                case 0:
                    attachments = true
                    arguments.append("--attachments")
                case 1:
                    attachments = false
                    arguments.append("--no-attachments")
                default: break
                }
                let r = try cli.run(arguments)
                #expect(r.status == 0, "step \(step) \(arguments): \(r)")
                for target in targets {
                    let existing = model.live(client)[target]
                    model.grants[client, default: [:]][target] = Terms(
                        lastDay: end ?? existing?.lastDay,
                        attachments: attachments ?? existing?.attachments ?? true)
                }
                did = arguments.joined(separator: " ")
            case 42..<60:
                // Revoke one live grant (or all of them now and then).
                let live = model.live(client).keys.sorted()
                if live.isEmpty || Int.random(in: 0..<8, using: &rng) == 0 {
                    let r = try cli.run(["revoke", client, "--all"])
                    #expect(r.status == 0 || live.isEmpty, "step \(step) revoke --all: \(r)")
                    model.grants[client] = [:]
                    did = "revoke \(client) --all"
                } else {
                    let target = live.randomElement(using: &rng)!
                    let r = try cli.run(["revoke", client, model.prescriptions[target].short])
                    #expect(r.status == 0, "step \(step) revoke: \(r)")
                    model.grants[client]?[target] = nil
                    did = "revoke \(client) \(model.prescriptions[target].short)"
                }
            case 60..<70:
                // An edit: the next read must show the new content.
                let target = Int.random(in: 0..<model.prescriptions.count, using: &rng)
                let note = "step \(step) note \(UInt16.random(in: 0...UInt16.max, using: &rng))"
                let r = try cli.run(["edit", model.prescriptions[target].short, "--note", note])
                #expect(r.status == 0, "step \(step) edit: \(r)")
                model.prescriptions[target].note = note
                did = "edit \(model.prescriptions[target].short) --note '\(note)'"
            case 70..<75:
                // Another attachment: clients granted attachments of that prescription see it too.
                let target = Int.random(in: 0..<model.prescriptions.count, using: &rng)
                model.prescriptions[target].attachmentIDs = try attach(cli, model.prescriptions[target].short)
                did = "attach to \(model.prescriptions[target].short)"
            case 75..<80 where clientNames.count > 2:
                let r = try cli.run(["client", "remove", client, "--yes"])
                #expect(r.status == 0, "step \(step) client remove: \(r)")
                model.removed[client] = model.tokens[client]
                model.clients[client] = nil
                model.grants[client] = nil
                did = "client remove \(client)"
            case 75..<86:
                added += 1
                let name = "app\(added)"
                try addClient(cli, model, name)
                model.tokens[name] = try server.token(identity: model.clients[name]!)
                did = "client add \(name)"
            default:
                // Days pass: the server is restarted with the new day (its clock is RXVAULT_TODAY);
                // grants whose last day is behind it end.
                model.day += Int.random(in: 1...2, using: &rng)
                let today = Self.firstDay.adding(model.day)
                cli.environment["RXVAULT_TODAY"] = today
                #expect(server.stop() == 0)
                server = try ServerProcess(cli, environment: ["RXVAULT_TODAY": today])
                try authenticate(server, model)
                // The server's first audit write of the day also sweeps the grants that ended
                // (re-keying their prescriptions): let it land between two checks.
                try expectModel(server, model, step: "day \(today) before the server's first write")
                usleep(1_150_000)
                did = "day \(today), server restarted, its first audit write"
            }
            // Now and then the server writes the reads it served (each second) before anyone asks
            // again: its own audit write then comes after the owner's change, and must not make
            // what it kept from before the change look current.
            if Int.random(in: 0..<3, using: &rng) == 0 {
                usleep(1_150_000)
                did += ", the server's audit write"
            }
            log.append("\(step): \(did)")
            try expectModel(
                server, model, step: "after step \(step) (seed \(seed)):\n" + log.suffix(6).joined(separator: "\n"))
        }
        #expect(server.stop() == 0)
        #expect(try cli.run(["check"]).status == 0)
    }

    // MARK: - Setup helpers

    /// Attaches the photo once more; returns the prescription's Binary ids (its DocumentReference ids).
    func attach(_ cli: CLIHarness, _ short: String) throws -> [String] {
        let r = try cli.run(["attach", short, AttachmentTests.photo, "--allow-duplicate"])
        #expect(r.status == 0, "\(r)")
        return try exported(cli, short, "DocumentReference")
    }

    func resourceID(_ cli: CLIHarness, _ short: String) throws -> String {
        try #require(try exported(cli, short, "VisionPrescription").first)
    }

    /// The ids of one type of resource in `export --format fhir` of one prescription (the API uses the same ids).
    func exported(_ cli: CLIHarness, _ short: String, _ type: String) throws -> [String] {
        let out = cli.path("fhir-\(short).json")
        try? FileManager.default.removeItem(atPath: out)
        #expect(try cli.run(["export", short, "--format", "fhir", "--out", out]).status == 0)
        let bundle = try cli.json(try String(contentsOfFile: out, encoding: .utf8))
        return (bundle["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
            .filter { $0["resourceType"] as? String == type }.compactMap { $0["id"] as? String }
    }

    func addClient(_ cli: CLIHarness, _ model: Model, _ name: String) throws {
        let recipient = try cli.ageKeygen("\(name).key")
        #expect(try cli.run(["client", "add", name, "--recipient", recipient]).status == 0)
        model.clients[name] = cli.path("\(name).key")
    }

    func authenticate(_ server: ServerProcess, _ model: Model) throws {
        model.tokens = [:]
        for (name, identity) in model.clients { model.tokens[name] = try server.token(identity: identity) }
        // A restarted server knows no earlier token: removed clients are checked with a made-up one.
        for name in model.removed.keys { model.removed[name] = "rxv_gone_\(name)" }
    }

    // MARK: - The check

    /// Every client's view, against the model, over the API (in-process HTTP on the server's socket).
    func expectModel(_ server: ServerProcess, _ model: Model, step: String) throws {
        let missing = "00000000-0000-5000-8000-00000000beef"
        for (name, token) in model.removed.sorted(by: { $0.key < $1.key }) {
            let answer = try RawHTTP.get(server.socket, "/VisionPrescription", token: token)
            #expect(answer.status == 401, "\(name) was removed: \(answer.status) \(step)")
        }
        for name in model.clients.keys.sorted() {
            let token = try #require(model.tokens[name])
            let live = model.live(name)
            let search = try RawHTTP.get(server.socket, "/VisionPrescription?_count=200", token: token)
            #expect(search.status == 200, "\(name) search: \(search.status) \(search.body) \(step)")
            let entries = (search.json["entry"] as? [[String: Any]] ?? []).compactMap {
                $0["resource"] as? [String: Any]
            }
            let expectedIDs = Set(live.keys.map { model.prescriptions[$0].resourceID })
            #expect(
                search.json["total"] as? Int == live.count,
                "\(name) search total \(search.json["total"] ?? "none"), expected \(live.count) \(step)")
            #expect(Set(entries.compactMap { $0["id"] as? String }) == expectedIDs, "\(name) search ids \(step)")

            var documents = 0
            for (index, prescription) in model.prescriptions.enumerated() {
                let read = try RawHTTP.get(
                    server.socket, "/VisionPrescription/\(prescription.resourceID)", token: token)
                if let terms = live[index] {
                    #expect(
                        read.status == 200 && read.json["id"] as? String == prescription.resourceID,
                        "\(name) reads granted \(prescription.short): \(read.status) \(step)")
                    // The newest version, as the history (read from the file on each request) says.
                    let history = try RawHTTP.get(
                        server.socket, "/VisionPrescription/\(prescription.resourceID)/_history", token: token)
                    let versions = (history.json["entry"] as? [[String: Any]] ?? []).compactMap {
                        (($0["resource"] as? [String: Any])?["meta"] as? [String: Any])?["versionId"] as? String
                    }.compactMap(Int.init)
                    let served = ((read.json["meta"] as? [String: Any])?["versionId"] as? String).flatMap(Int.init)
                    #expect(
                        served != nil && served == versions.max(),
                        "\(name) reads \(prescription.short) version \(served ?? 0), newest \(versions.max() ?? 0) \(step)"
                    )
                    if let note = prescription.note {
                        #expect(
                            read.body.contains(note),
                            "\(name) reads \(prescription.short) without its newest note '\(note)' \(step)")
                    }
                    if terms.attachments { documents += prescription.attachmentIDs.count }
                } else {
                    #expect(read.status == 404, "\(name) reads ungranted \(prescription.short): \(read.status) \(step)")
                }
                for attachment in prescription.attachmentIDs {
                    let binary = try RawHTTP.get(server.socket, "/Binary/\(attachment)", token: token, statusOnly: true)
                    let expected = live[index]?.attachments == true ? 200 : 404
                    #expect(
                        binary.status == expected,
                        "\(name) Binary of \(prescription.short): \(binary.status), expected \(expected) \(step)")
                }
            }
            let documentSearch = try RawHTTP.get(server.socket, "/DocumentReference", token: token)
            #expect(
                documentSearch.json["total"] as? Int == documents,
                "\(name) DocumentReference total \(documentSearch.json["total"] ?? "none"), expected \(documents) \(step)"
            )
            #expect(try RawHTTP.get(server.socket, "/VisionPrescription/\(missing)", token: token).status == 404)
        }
    }
}

/// HTTP/1.1 over a Unix socket in-process: a property test makes hundreds of requests, and a
/// curl process each would be most of its time. GET only; `Connection: close`.
enum RawHTTP {
    struct Answer {
        let status: Int
        let body: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// With `statusOnly`, reads the status line and hangs up (an attachment is not read whole).
    static func get(_ socketPath: String, _ path: String, token: String?, statusOnly: Bool = false) throws -> Answer {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { throw Failure(description: "connect \(socketPath): errno \(errno)") }
        var request = "GET \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        request += "\r\n"
        let data = Array(request.utf8)
        var sent = 0
        while sent < data.count {
            let n = data[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure(description: "write: errno \(errno)") }
            sent += n
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { break }
            guard n > 0 else { throw Failure(description: "read \(path): errno \(errno)") }
            response += buffer[0..<n]
            if statusOnly, let line = response.firstIndex(of: 10) {
                let words = String(decoding: response[..<line], as: UTF8.self).split(separator: " ")
                guard words.count >= 2, let status = Int(words[1]) else {
                    throw Failure(description: "bad status line")
                }
                return Answer(status: status, body: "")
            }
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, response.count - 3)).first(where: { Array(response[$0..<$0 + 4]) == separator })
        else {
            throw Failure(description: "no complete response to \(path)")
        }
        let head = String(decoding: response[0..<end], as: UTF8.self)
        var body = Array(response[(end + 4)...])
        guard let statusText = head.split(separator: " ").dropFirst().first, let status = Int(statusText) else {
            throw Failure(description: "bad status line: \(head.prefix(80))")
        }
        if head.lowercased().contains("transfer-encoding: chunked") { body = try dechunk(body) }
        return Answer(status: status, body: String(decoding: body, as: UTF8.self))
    }

    static func dechunk(_ data: [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = []
        var at = 0
        while true {
            guard let lineEnd = (at..<max(at, data.count - 1)).first(where: { data[$0] == 13 && data[$0 + 1] == 10 }),
                let size = Int(
                    String(decoding: data[at..<lineEnd], as: UTF8.self).split(separator: ";").first ?? "", radix: 16)
            else {
                throw Failure(description: "bad chunked body")
            }
            if size == 0 { return out }
            out += data[(lineEnd + 2)..<(lineEnd + 2 + size)]
            at = lineEnd + 2 + size + 2
        }
    }
}
