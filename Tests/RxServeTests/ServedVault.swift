import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import RxCrypto
import RxModel
import RxTestSupport
import RxValidate
import Testing

@testable import RxServe
@testable import RxVault

/// A vault made in-process with RxVault (no CLI), served by the API in-process
/// (HummingbirdTesting's router framework: no socket, no process, no sleep).
///
/// `owner` is the owner's own connection, standing for the CLI in another process: its writes
/// reach the server only through the file, as the CLI's do. The server has a connection of its
/// own. Both share `clock`, whose day a test moves (the server's clock decides expiry).
final class ServedVault: @unchecked Sendable {
    let directory: URL
    let path: String
    let clock: TestClock
    let owner: Vault
    private var identities: [String: AgeIdentity] = [:]

    init(today: String = "2026-06-15") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rxserve-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("vault.rxv").path
        clock = TestClock(today: today)
        var bytes = Array("correct horse battery staple".utf8)
        let passphrase = SecretBytes(consuming: &bytes)
        try Vault.create(at: path, passphrase: passphrase, kdf: PasswordKDF(preset: .interactive))
        owner = try Vault.open(at: path, with: .passphrase(passphrase), clock: clock.vaultClock)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    // MARK: - The owner's side (what the CLI would do)

    static let glasses = Prescription(
        kind: .glasses, patient: Patient(name: "Quintessa Marlowe", birthDate: CalendarDate(iso: "1980-04-02")),
        prescriber: Prescriber(name: "Dr Ignatius Fairweather", licence: "OPT-77123"),
        issued: CalendarDate(iso: "2026-03-01")!, expires: CalendarDate(iso: "2028-03-01"),
        note: "Varifocal lenses preferred",
        right: try! LensNotation.parse("-2.25 -0.75 x180 add +2.00"),
        left: try! LensNotation.parse("-1.75 -0.50 x170 add +2.00 prism 1.5 BI"),
        pupillaryDistance: PupillaryDistance(far: Hundredths(raw: 6350), near: Hundredths(raw: 6050)))

    static let contacts = Prescription(
        kind: .contacts, patient: Patient(name: "Quintessa Marlowe", birthDate: CalendarDate(iso: "1980-04-02")),
        prescriber: Prescriber(name: "Dr Ignatius Fairweather"), issued: CalendarDate(iso: "2026-03-01")!,
        expires: CalendarDate(iso: "2026-07-01"),
        right: lens("-3.25 bc 8.6 dia 14.2", brand: "Zylofocus Aquaclear"),
        left: lens("-2.75 -1.25 x170 bc 8.7 dia 14.5", brand: "Zylofocus Aquaclear"))

    static func lens(_ notation: String, brand: String) -> LensSpecification {
        var lens = try! LensNotation.parse(notation)
        lens.brand = brand
        return lens
    }

    @discardableResult
    func add(_ prescription: Prescription) throws -> PrescriptionRecord {
        try owner.add(prescription).0
    }

    /// A registered client app and its identity.
    @discardableResult
    func addClient(_ name: String) throws -> ClientSummary {
        let identity = try AgeIdentity.generate()
        identities[name] = identity
        return try owner.addClient(name: name, recipient: identity.recipient)
    }

    func client(_ name: String) throws -> ClientSummary { try owner.resolveClient(name) }

    func identity(_ name: String) throws -> AgeIdentity { try #require(identities[name]) }

    func grant(_ name: String, _ ids: [PrescriptionID], until: String? = nil, attachments: Bool = true) throws {
        try owner.grant(
            try client(name), ids, expires: until.flatMap(CalendarDate.init(iso:)), includeAttachments: attachments)
    }

    /// The attachment parser runs in a child: the rxvault binary built beside the tests.
    static var parser: IsolatedParser {
        get throws {
            let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
                .deletingLastPathComponent()
                .appendingPathComponent("rxvault").path
            try #require(
                FileManager.default.isExecutableFile(atPath: binary), "the rxvault binary is built with the tests")
            return IsolatedParser(executable: binary, arguments: ["_parse-untrusted"], limits: .init())
        }
    }

    /// Attaches `file` (by default a PNG photo) to the prescription.
    @discardableResult
    func attach(_ file: String = ServedVault.photo, to id: PrescriptionID, name: String = "scan.png") throws
        -> AttachmentInfo
    {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        var offset = 0
        return try owner.attach(to: id, name: name, allowDuplicate: true, parser: try Self.parser) { buffer in
            let n = min(buffer.count, bytes.count - offset)
            for k in 0..<n { buffer[k] = bytes[offset + k] }
            offset += n
            return n
        }
    }

    static let photo = Repository.fixture("attachments/valid/png-prescription-photo-1200x1600.png")

    // MARK: - The server's side

    /// The API on a connection of its own, as `rxvault serve` runs it; `body` talks to it.
    func serve<Value: Sendable>(
        _ settings: ServeSettings = ServedVault.settings,
        _ body: @Sendable (APIClient) async throws -> Value
    ) async throws -> Value {
        let api = try ServeAPI(
            vault: try owner.anotherConnection(busyTimeoutMilliseconds: 5000), settings: settings, logger: Self.quiet)
        let app = Application(router: api.router(), logger: Self.quiet)
        return try await app.test(.router) { client in try await body(APIClient(client: client, api: api, vault: self))
        }
    }

    /// The authenticator's clock stands still: "five failures in a minute" and a challenge's
    /// minute must not depend on how loaded the machine running the tests is.
    static let settings: ServeSettings = {
        var settings = ServeSettings(address: .unixSocket(path: "/nonexistent/api.sock"))
        let instant = Date(timeIntervalSince1970: 1_800_000_000)
        settings.now = { instant }
        return settings
    }()
    static let quiet = Logger(label: "rxserve-test", factory: { _ in SwiftLogNoOpLogHandler() })
}

/// The day the owner's CLI and the server see, moved by the test.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var day: CalendarDate
    private var secondsAhead: TimeInterval = 0

    init(today: String) { day = CalendarDate(iso: today)! }

    var today: CalendarDate { lock.withLock { day } }

    func advance(days: Int) { lock.withLock { day = day.adding(days: days)! } }

    /// Moves the recorded time on (timestamps are to the second), so a test orders two writes
    /// by time without sleeping.
    func advance(seconds: TimeInterval) { lock.withLock { secondsAhead += seconds } }

    var vaultClock: VaultClock {
        VaultClock(
            today: { [self] in today },
            timestamp: { [self] in Date(timeIntervalSinceNow: lock.withLock { secondsAhead }).formatted(.iso8601) })
    }
}
