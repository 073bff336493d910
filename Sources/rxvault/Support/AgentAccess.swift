import ArgumentParser
import Foundation
import RxAgent
import RxCrypto
import RxVault

/// The CLI's use of the agent (`rxvault unlock`): finding the one that holds a vault, taking the
/// root key from it, telling it to lock. Any failure here falls back to the passphrase; it is
/// said on stderr only when the user would otherwise wonder why they are asked.
enum AgentAccess {
    static var directory: AgentDirectory { .standard(environment: Environment.values) }

    /// `RXVAULT_NO_AGENT=1`: never use an agent (as `--no-agent` on every command).
    static var disabledByEnvironment: Bool { Environment.values["RXVAULT_NO_AGENT"] == "1" }

    /// The client for the agent of this vault, or nil when the folder for agents does not exist
    /// (nothing was ever unlocked) or is unsafe (said once, as a warning, unless `quiet`).
    static func client(vaultIDHex: String, quiet: Bool = false) -> AgentClient? {
        do {
            guard try directory.isSafe() else { return nil }
            return AgentClient(socketPath: try directory.socketPath(vaultIDHex: vaultIDHex))
        } catch {
            if !quiet { Terminal.warning("not using an agent: \(error)") }
            return nil
        }
    }

    /// The root key of the vault at `path` from the agent that holds it, or nil (no agent, or
    /// it refused: then the caller asks for the passphrase as usual, `VaultOptions.ownerKey`).
    /// Why it was not used is a warning, unless `quiet` (shell completion says nothing).
    static func rootKey(path: String, header: VaultHeader, quiet: Bool = false) -> SecretBytes? {
        guard header.upgradesWithoutPassphrase,
            let client = client(vaultIDHex: header.vaultIDHex, quiet: quiet)
        else { return nil }
        do {
            let file = try VaultFileIdentity(path: path, header: header)
            return try client.rootKey(for: file)
        } catch .refused(_, let message, let locked) {
            if !quiet {
                Terminal.warning(locked ? "\(message); the passphrase is needed" : "not using the agent: \(message)")
            }
            return nil
        } catch {
            if !quiet { Terminal.warning("not using the agent: \(error)") }
            return nil
        }
    }

    /// What the agent of this vault holds (nil: none). Never removes, never asks.
    static func status(vaultIDHex: String) throws -> AgentStatus? {
        guard let client = client(vaultIDHex: vaultIDHex) else { return nil }
        switch client.probe() {
        case .none: return nil
        case .live(let status): return status
        case .unreachable(let why): throw CLIError(.failure, why)
        }
    }

    /// Tells the agent of this vault to lock; returns what it held (nil: none was running).
    static func lock(vaultIDHex: String) throws -> AgentStatus? {
        guard let client = client(vaultIDHex: vaultIDHex) else { return nil }
        do { return try client.lock() } catch .refused(let code, _, _) where code == "locked" {
            return nil
        } catch {
            throw CLIError(.failure, "cannot lock the agent: \(error)")
        }
    }

    /// "14:05" today, else "2026-06-16 14:05" (local time), for "unlocked until ...".
    static func clockTime(_ seconds: Double) -> String {
        let date = Date(timeIntervalSince1970: seconds)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = Calendar.current.isDateInToday(date) ? "HH:mm" : "yyyy-MM-dd HH:mm"
        return formatter.string(from: date)
    }

    /// "2026-06-15T14:05:00Z", for JSON.
    static func isoTime(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: seconds.rounded(.down)))
    }

    /// "unlocked until 14:05 (agent pid 4242)", for `status` and a second `unlock`.
    static func describe(_ status: AgentStatus) -> String {
        "unlocked until \(clockTime(status.until)) (agent pid \(status.pid))"
    }
}

/// A length of time on the command line: `90s`, `15m`, `8h`, `1h30m`, or plain seconds.
struct AgentDuration: ExpressibleByArgument, Sendable {
    let seconds: Double
    static let range: ClosedRange<Double> = 1...86_400

    init(seconds: Double) { self.seconds = seconds }

    init?(argument: String) {
        guard let parsed = try? Self.parse(argument) else { return nil }
        self = parsed
    }

    /// The duration, or an error that says what is wrong with it (the range, or the form): the
    /// options use this as their transform, so `--timeout 25h` says "up to 24h".
    static func parse(_ argument: String) throws -> AgentDuration {
        let form = ValidationError("a length of time is written 90s, 15m, 8h or 1h30m (or plain seconds)")
        var total = 0.0
        var number = ""
        for character in argument {
            if character.isASCII && character.isNumber {
                number.append(character)
                continue
            }
            guard let value = Double(number) else { throw form }
            switch character {
            case "s": total += value
            case "m": total += value * 60
            case "h": total += value * 3600
            default: throw form
            }
            number = ""
        }
        if !number.isEmpty {
            guard let value = Double(number), total == 0 else { throw form }
            total = value
        }
        guard Self.range.contains(total) else {
            throw ValidationError("\(argument) is outside 1s to 24h, the range an unlock may last")
        }
        return AgentDuration(seconds: total)
    }

    /// `--help` shows the default as it is typed.
    var defaultValueDescription: String { text }

    /// "15m", "2s", "1h30m".
    var text: String {
        let whole = Int(seconds)
        let (h, m, s) = (whole / 3600, whole % 3600 / 60, whole % 60)
        let parts = [(h, "h"), (m, "m"), (s, "s")].filter { $0.0 > 0 }.map { "\($0.0)\($0.1)" }
        return parts.isEmpty ? "0s" : parts.joined()
    }
}
