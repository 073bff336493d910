import Foundation
import RxCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// What this computer saw of each remote it synced one vault with (`rxvault sync`): for each
/// device's head, the knowledge it held. A head only ever grows (its device replaces it with a
/// later state), so a head that now holds less, or something else, than what was seen means the
/// remote was rolled back or forked (a copy of the folder put back, a head deleted to hide a
/// revocation), and the sync refuses it as `check` refuses such a vault file (76).
///
/// Kept beside the rollback anchor (`<vault id>.remotes`), one line per remote and head, the
/// remote named by a hash of where it is (its canonical path or URL): what a remote holds cannot
/// choose how this computer remembers it. Nothing here is secret. A remote first met is taken
/// as it is (as a vault file first opened is); moved to another path, it is met anew.
struct RemoteMemory {
    let anchor: RollbackAnchor
    let vaultIDHex: String
    let remote: String

    init(anchor: RollbackAnchor, vaultIDHex: String, location: String) {
        self.anchor = anchor
        self.vaultIDHex = vaultIDHex
        let canonical = RollbackAnchor.Key.canonical(location)
        remote = Hex.encode(SHA256.hash(Array(canonical.utf8)).prefix(16))
    }

    static let magic = "rxvault remote memory 1"

    private var file: String { anchor.directory + "/" + vaultIDHex + ".remotes" }

    /// The knowledge of each head seen in this remote (nothing known: empty).
    func seen() -> [ReplicaID: KnowledgeVector] {
        lines().filter { $0.remote == remote }.reduce(into: [:]) { $0[$1.replica] = $1.knowledge }
    }

    /// Remembers `heads` as this remote's, in place of what was remembered of it.
    func remember(_ heads: [ReplicaID: KnowledgeVector]) {
        let others = lines().filter { $0.remote != remote }
        let mine = heads.sorted { $0.key < $1.key }.map { Line(remote: remote, replica: $0.key, knowledge: $0.value) }
        let text = ([Self.magic] + (others + mine).map(\.text)).joined(separator: "\n") + "\n"
        if let problem = anchor.write(text, to: file) { anchor.notKept(problem) }
    }

    private struct Line {
        let remote: String
        let replica: ReplicaID
        let knowledge: KnowledgeVector

        var text: String { "head \(remote) \(replica.hex) \(Hex.encode(knowledge.encoded()))" }
    }

    private func lines() -> [Line] {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return [] }
        let rows = text.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        guard rows.first?.joined(separator: " ") == Self.magic else { return [] }
        return rows.dropFirst().compactMap { row in
            guard row.count == 4, row[0] == "head", let replica = Hex.decode(row[2]).flatMap(ReplicaID.init(bytes:)),
                let bytes = Hex.decode(row[3]), let (knowledge, used) = KnowledgeVector.decode(bytes),
                used == bytes.count
            else { return nil }
            return Line(remote: row[1], replica: replica, knowledge: knowledge)
        }
    }
}
