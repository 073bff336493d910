import Foundation
import RxTestSupport
import Testing

/// Issue 48's model-based test: one vault on three devices, each with its own HOME (its own
/// replica and rollback anchor): A and B keep a vault file, C is a practice's PostgreSQL vault.
/// From a seed, each takes random owner writes offline (add, note, status, remove, attach,
/// detach, client add and remove, grant with and without measurements, revoke, patient rename
/// and merge, key add and remove, config set, measurement add and remove) and the three are
/// brought together in random orders: `merge` of another device's file or database, `sync`
/// through a folder remote, and `sync` with the database as the remote. After every merge or
/// sync, on each device it changed: `check` passes; nothing any device wrote that it has merged
/// is missing (prescriptions, notes in their history, attachments, measurements); every client
/// reads with its identity exactly what `DeviceLivesModel` says (a revoke or a client removal is
/// never undone); and any two devices that hold the same events export the same. At the end the
/// three are merged until they hold the same, and A's `rxvault serve` answers each client as
/// its identity reads.
///
/// `swift test` runs `RXVAULT_DEVICE_LIVES_LIVES` (1) life of `RXVAULT_DEVICE_LIVES_STEPS` (36)
/// actions from the fixed seed; `RXVAULT_DEVICE_LIVES_SECONDS=N` runs lives until N seconds
/// are spent (the longer run CONTRIBUTING.md gives); `RXVAULT_DEVICE_LIVES_SEED=N|random`
/// replays or explores. A failing life is shrunk (actions taken away while it still fails).
@Suite(.serialized) struct DeviceLivesTests {
    static let environment = ProcessInfo.processInfo.environment
    static let budget = environment["RXVAULT_DEVICE_LIVES_SECONDS"].flatMap(Double.init)
    static let lives = environment["RXVAULT_DEVICE_LIVES_LIVES"].flatMap(Int.init) ?? 1
    static let steps = environment["RXVAULT_DEVICE_LIVES_STEPS"].flatMap(Int.init) ?? 36
    static let shrinkBudget = environment["RXVAULT_DEVICE_LIVES_SHRINK_SECONDS"].flatMap(Double.init) ?? 300

    @Test func threeDevicesWritingOfflineConvergeWithNothingLost() throws {
        let given = Self.environment["RXVAULT_DEVICE_LIVES_SEED"]
        let seed =
            given == "random" ? UInt64.random(in: 1...UInt64(UInt32.max)) : given.flatMap(UInt64.init) ?? 0x0048_5EED
        print("device lives: seed \(seed) (RXVAULT_DEVICE_LIVES_SEED=\(seed) replays it)")
        var rng = SeededGenerator(state: seed)
        let start = Date()
        var done = 0
        repeat {
            let plan = DevicePlan.random(using: &rng, count: Self.steps)
            if let failure = DeviceLife.outcome(of: plan) {
                let (shrunk, last) = Self.shrink(plan, failure)
                Issue.record(
                    """
                    device lives: seed \(seed), life \(done + 1) fails (shrunk from \(plan.actions.count) to \
                    \(shrunk.actions.count) actions; RXVAULT_DEVICE_LIVES_SEED=\(seed) replays it):
                    \(shrunk.actions.enumerated().map { "  \($0.offset + 1). \($0.element)" }.joined(separator: "\n"))
                    \(last)
                    (first seen: \(failure))
                    """)
                return
            }
            done += 1
        } while Self.budget.map { Date().timeIntervalSince(start) < $0 } ?? (done < Self.lives)
        print("device lives: \(done) lives of \(Self.steps) actions held (seed \(seed))")
    }

    static func shrink(_ plan: DevicePlan, _ failure: DeviceLife.Failure) -> (DevicePlan, DeviceLife.Failure) {
        let (actions, last) = shrinking(plan.actions, failure, within: shrinkBudget, failedAt: \.action) {
            DeviceLife.outcome(of: DevicePlan(actions: $0))
        }
        return (DevicePlan(actions: actions), last)
    }
}

// MARK: - The plan

struct DevicePlan {
    static let names = ["A", "B", "C"]

    enum Write: CustomStringConvertible {
        case add(contacts: Bool, variant: Int)
        case note(pick: Int)
        case status(pick: Int, status: Int)
        case remove(pick: Int)
        case attach(pick: Int)
        case detach(pick: Int)
        case clientAdd(name: Int)
        case clientRemove(pick: Int)
        case grant(client: Int, pick: Int, measurements: Bool)
        case revoke(client: Int, pick: Int)
        case patientRename(pick: Int, name: Int)
        case patientMerge(pick: Int, other: Int)
        case keyAdd(label: Int)
        case keyRemove(pick: Int)
        case configSet(size: Int)
        case measurementAdd(pick: Int, variant: Int)
        case measurementRemove(pick: Int)

        var description: String {
            switch self {
            case .add(let contacts, let v): "add \(contacts ? "contacts" : "glasses") #\(v)"
            case .note(let p): "edit #\(p) --note"
            case .status(let p, let s): "edit #\(p) --status \(DeviceLife.statuses[s % 4])"
            case .remove(let p): "remove #\(p)"
            case .attach(let p): "attach #\(p)"
            case .detach(let p): "detach attachment #\(p)"
            case .clientAdd(let n): "client add #\(n)"
            case .clientRemove(let p): "client remove #\(p)"
            case .grant(let c, let p, let m): "grant client #\(c) #\(p)\(m ? " --measurements" : "")"
            case .revoke(let c, let p): "revoke client #\(c) #\(p)"
            case .patientRename(let p, let n): "patient rename (of #\(p)) #\(n)"
            case .patientMerge(let p, let o): "patient merge (of #\(p), #\(o))"
            case .keyAdd(let n): "key add #\(n)"
            case .keyRemove(let p): "key remove #\(p)"
            case .configSet(let s): "config set max-attachment-size #\(s)"
            case .measurementAdd(let p, let v): "measurement add (of #\(p)) #\(v)"
            case .measurementRemove(let p): "measurement remove #\(p)"
            }
        }
    }

    enum Action: CustomStringConvertible {
        case write(Int, Write)
        /// `into` runs `rxvault merge` of `from`'s file or database.
        case merge(into: Int, from: Int)
        /// `rxvault sync` through the folder remote.
        case syncFolder(Int)
        /// `rxvault sync postgres://...`: the database (C's vault) as the remote of A or B.
        case syncDatabase(Int)

        var description: String {
            switch self {
            case .write(let d, let w): "\(DevicePlan.names[d]): \(w)"
            case .merge(let into, let from): "\(DevicePlan.names[into]) merges \(DevicePlan.names[from])"
            case .syncFolder(let d): "\(DevicePlan.names[d]) syncs through the folder"
            case .syncDatabase(let d): "\(DevicePlan.names[d]) syncs with the database"
            }
        }
    }

    var actions: [Action]

    static func random(using rng: inout SeededGenerator, count: Int) -> DevicePlan {
        var actions: [Action] = []
        while actions.count < count {
            let device = Int.random(in: 0...2, using: &rng)
            let n = Int.random(in: 0...999, using: &rng)
            let m = Int.random(in: 0...999, using: &rng)
            let write: Write
            switch Int.random(in: 0...99, using: &rng) {
            case 0..<16:
                // Brought together about one action in six, each way about as often.
                switch n % 4 {
                case 0: actions.append(.merge(into: device, from: (device + 1 + m % 2) % 3))
                case 1: actions.append(.syncFolder(device))
                case 2: actions.append(.syncDatabase(m % 2))
                default: actions.append(.merge(into: (device + 1 + m % 2) % 3, from: device))
                }
                continue
            case 16..<28: write = .add(contacts: n % 2 == 0, variant: m)
            case 28..<38: write = .note(pick: n)
            case 38..<42: write = .status(pick: n, status: m)
            case 42..<46: write = .remove(pick: n)
            case 46..<51: write = .attach(pick: n)
            case 51..<53: write = .detach(pick: n)
            case 53..<58: write = .clientAdd(name: n)
            case 58..<61: write = .clientRemove(pick: n)
            case 61..<72: write = .grant(client: n, pick: m, measurements: m % 3 == 0)
            case 72..<79: write = .revoke(client: n, pick: m)
            case 79..<82: write = .patientRename(pick: n, name: m)
            case 82..<84: write = .patientMerge(pick: n, other: m)
            case 84..<87: write = .keyAdd(label: n)
            case 87..<89: write = .keyRemove(pick: n)
            case 89..<91: write = .configSet(size: n)
            case 91..<97: write = .measurementAdd(pick: n, variant: m)
            default: write = .measurementRemove(pick: n)
            }
            actions.append(.write(device, write))
        }
        return DevicePlan(actions: actions)
    }
}
