import Foundation
import Testing

/// Where a life starts, and the steps it takes. Steps name what they act on by position among
/// what exists when they run (modulo the count), so a plan with steps taken away still runs.
struct Plan: CustomStringConvertible {
    enum Origin: CustomStringConvertible {
        case fresh
        /// A `Fixtures/vaults/formatN.sql` vault, upgraded before the first step.
        case format(Int)
        var description: String {
            if case .format(let n) = self { return "format \(n) fixture, upgraded" } else { return "new vault" }
        }
    }

    enum Step: CustomStringConvertible {
        case add(contacts: Bool, variant: Int)
        case editNote(pick: Int, text: Int)
        case editExpiry(pick: Int, day: Int)
        case editStatus(pick: Int, status: Int)
        case remove(pick: Int)
        case importJSON(status: Int, variant: Int)
        case importFHIR(statuses: [String], tag: Int)
        case attach(pick: Int)
        case detach(pick: Int)
        case clientAdd(name: Int)
        case clientRemove(pick: Int)
        case grant(client: Int, pick: Int)
        case revoke(client: Int, pick: Int)
        case patientRename(pick: Int, name: Int)
        case patientMerge(pick: Int, other: Int)
        case keyAdd
        case keyRemove
        case passwd(n: Int)
        case configSet(size: Int)
        case replaceFile
        case measurementAdd(pick: Int, variant: Int)
        case measurementEdit(pick: Int, variant: Int)
        case measurementRemove(pick: Int)

        var description: String {
            switch self {
            case .add(let contacts, let v): return "add \(contacts ? "contacts" : "glasses") #\(v)"
            case .editNote(let p, let t): return "edit #\(p) --note 'note \(t)'"
            case .editExpiry(let p, let d):
                return "edit #\(p) --expires \(Model.expiryChoices[d % Model.expiryChoices.count])"
            case .editStatus(let p, let s): return "edit #\(p) --status \(Model.statusCodes[s % 4])"
            case .remove(let p): return "remove #\(p) --yes"
            case .importJSON(let s, let v): return "import rxvault JSON (status \(Model.statusCodes[s % 4]), #\(v))"
            case .importFHIR(let statuses, let tag):
                return "import clinic bundle (tag \(tag)) --status \(statuses.joined(separator: ","))"
            case .attach(let p): return "attach #\(p) png"
            case .detach(let p): return "detach #\(p)"
            case .clientAdd(let n): return "client add app\(n) --generate"
            case .clientRemove(let p): return "client remove #\(p) --yes"
            case .grant(let c, let p):
                return "grant client #\(c) #\(p)" + (Model.withMeasurements(p) ? " --measurements" : "")
            case .revoke(let c, let p): return "revoke client #\(c) #\(p)"
            case .patientRename(let p, let n): return "patient rename (patient of #\(p)) 'Renamed \(n)'"
            case .patientMerge(let p, let o): return "patient merge (patients of #\(p), #\(o)) --yes"
            case .keyAdd: return "key add --label partner"
            case .keyRemove: return "key remove (partner) --yes"
            case .passwd(let n): return "passwd (passphrase \(n))"
            case .configSet(let s): return "config set max-attachment-size \(Model.sizes[s % Model.sizes.count])"
            case .replaceFile: return "replace the vault file by rename (a sync tool)"
            case .measurementAdd(let p, let v):
                return
                    "measurement add (patient of #\(p)) --axial-length-od \(Model.axialLength(v)) --va-od \(Model.acuity(v))"
            case .measurementEdit(let p, let v):
                return "measurement edit #\(p) --axial-length-od \(Model.axialLength(v))"
            case .measurementRemove(let p): return "measurement remove #\(p) --yes"
            }
        }
    }

    var origin: Origin
    var steps: [Step]
    var description: String { "\(origin): " + steps.map(\.description).joined(separator: "; ") }

    static func random(using rng: inout LensConsistencyTests.Generator, steps count: Int) -> Plan {
        let origin: Origin = rng.chance(70) ? .fresh : .format(rng.int(1...3))
        var steps: [Step] = []
        // Something to act on first, then anything.
        steps.append(.add(contacts: rng.chance(50), variant: rng.int(0...999)))
        steps.append(.clientAdd(name: rng.int(0...999)))
        while steps.count < count {
            let n = rng.int(0...999)
            let m = rng.int(0...999)
            switch rng.int(0...99) {
            case 0..<10: steps.append(.add(contacts: rng.chance(50), variant: n))
            case 10..<16: steps.append(.editNote(pick: n, text: m))
            case 16..<21: steps.append(.editExpiry(pick: n, day: m))
            case 21..<30: steps.append(.editStatus(pick: n, status: m))
            case 30..<34: steps.append(.remove(pick: n))
            case 34..<39: steps.append(.importJSON(status: m, variant: n))
            case 39..<44:
                let chosen = Model.statusCodes.filter { _ in rng.chance(60) }
                steps.append(.importFHIR(statuses: chosen.isEmpty ? ["active"] : chosen, tag: n))
            case 44..<49: steps.append(.attach(pick: n))
            case 49..<52: steps.append(.detach(pick: n))
            case 52..<56: steps.append(.clientAdd(name: n))
            case 56..<58: steps.append(.clientRemove(pick: n))
            case 58..<68: steps.append(.grant(client: n, pick: m))
            case 68..<73: steps.append(.revoke(client: n, pick: m))
            case 73..<76: steps.append(.patientRename(pick: n, name: m))
            case 76..<79: steps.append(.patientMerge(pick: n, other: m))
            case 79..<82: steps.append(.keyAdd)
            case 82..<84: steps.append(.keyRemove)
            case 84..<87: steps.append(.passwd(n: n))
            case 87..<89: steps.append(.configSet(size: n))
            case 89..<92: steps.append(.measurementAdd(pick: n, variant: m))
            case 92..<94: steps.append(.measurementEdit(pick: n, variant: m))
            case 94: steps.append(.measurementRemove(pick: n))
            default: steps.append(.replaceFile)
            }
        }
        return Plan(origin: origin, steps: steps)
    }
}

// MARK: - The model

/// What the vault should hold, kept by the test from what it asked for (and, for what the test
/// cannot know before (ids of foreign FHIR imports, fixture contents), from what it was told
/// once, checked for its counts).
final class Model {
    static let today = "2026-06-15"
    static let statusCodes = ["active", "cancelled", "draft", "entered-in-error"]
    /// Expired, expiring within 60 days, valid.
    static let expiryChoices = ["2026-04-01", "2026-07-01", "2027-06-01"]
    static let sizes = ["16MiB", "32MiB", "64MiB"]

    struct Prescription {
        var status: String
        var issued: String
        var expires: String?
        var attachment: String?
        var validToday: Bool {
            status == "active" && issued <= Model.today && (expires.map { $0 >= Model.today } ?? true)
        }
        var expired: Bool { expires.map { $0 < Model.today } ?? false }
    }

    /// By the first 8 hex digits of the id (what commands print).
    var prescriptions: [String: Prescription] = [:]
    /// Client name -> identity file.
    var clients: [String: String] = [:]
    /// Client name -> the prescriptions it is granted (no end: a grant lives until revoked).
    var grants: [String: Set<String>] = [:]
    /// Client name -> the prescriptions whose grant carries the patient's measurements (a grant
    /// repeated without `--measurements` keeps them; a revoke ends them).
    var measurementGrants: [String: Set<String>] = [:]
    /// One grant in three is made with `--measurements`.
    static func withMeasurements(_ pick: Int) -> Bool { pick % 3 == 0 }
    var tokens: [String: String] = [:]
    var removedTokens: [String: String] = [:]
    var passphrase: String
    var partnerSlot = false
    /// Measurements by the first 8 hex digits of the id -> the right eye's axial length as
    /// `measurement list --format json` prints it. They live in patient records, which merges,
    /// renames and the removal of every prescription leave in place.
    var measurements: [String: String] = [:]

    /// 22.00-24.99 mm: inside the accepted range, two decimals as written.
    static func axialLength(_ variant: Int) -> String { String(format: "%.2f", 22 + Double(variant % 300) / 100) }
    static func acuity(_ variant: Int) -> String { ["6/6", "20/40", "0.8", "logMAR 0.10"][variant % 4] }
    func measurement(_ n: Int) -> String? {
        let ids = measurements.keys.sorted()
        return ids.isEmpty ? nil : ids[n % ids.count]
    }

    init(passphrase: String) { self.passphrase = passphrase }

    var ids: [String] { prescriptions.keys.sorted() }
    func pick(_ n: Int) -> String? { ids.isEmpty ? nil : ids[n % ids.count] }
    var clientNames: [String] { clients.keys.sorted() }
    func client(_ n: Int) -> String? { clientNames.isEmpty ? nil : clientNames[n % clientNames.count] }
    func granted(_ client: String) -> Set<String> { (grants[client] ?? []).intersection(prescriptions.keys) }
    func grantedMeasurements(_ client: String) -> Set<String> {
        (measurementGrants[client] ?? []).intersection(granted(client))
    }
}
