import Foundation
import RxModel
import RxVault

/// The environment variables rxvault reads (docs/reference.md, "Environment").
enum Environment {
    static var values: [String: String] { ProcessInfo.processInfo.environment }

    static var passphraseFile: String? { nonEmpty("RXVAULT_PASSPHRASE_FILE") }

    /// The vault path when `--vault` is not given: `$RXVAULT_PATH`, else
    /// `$XDG_DATA_HOME/rxvault/vault.rxv`, else `~/.local/share/rxvault/vault.rxv`.
    static var defaultVaultPath: String {
        if let path = nonEmpty("RXVAULT_PATH") { return path }
        if let xdg = nonEmpty("XDG_DATA_HOME"), xdg.hasPrefix("/") { return xdg + "/rxvault/vault.rxv" }
        let home = nonEmpty("HOME") ?? NSHomeDirectory()
        return home + "/.local/share/rxvault/vault.rxv"
    }

    /// The clock: the system's, unless `RXVAULT_TODAY=YYYY-MM-DD` fixes the day (for tests and
    /// for checking what a vault will say on another day).
    /// `RXVAULT_NOW=YYYY-MM-DDTHH:MM:SSZ` fixes the time as well (tests of dated backups).
    static func clock() throws -> VaultClock {
        if let text = nonEmpty("RXVAULT_NOW") {
            guard let time = BackupTime(iso: text), text.count == 20,
                let day = CalendarDate(year: time.year, month: time.month, day: time.day)
            else {
                throw CLIError(.usage, "RXVAULT_NOW '\(text)' is not a UTC time in the form YYYY-MM-DDTHH:MM:SSZ")
            }
            return VaultClock(today: { day }, timestamp: { time.iso })
        }
        guard let text = nonEmpty("RXVAULT_TODAY") else { return .system }
        guard let day = CalendarDate(iso: text) else {
            throw CLIError(.usage, "RXVAULT_TODAY '\(text)': \(CalendarDate.problem(iso: text)!)")
        }
        return .fixed(today: day)
    }

    /// How long to wait for another rxvault process: `RXVAULT_BUSY_TIMEOUT` seconds (default 30).
    static func busyTimeoutMilliseconds() throws -> Int32 {
        guard let text = nonEmpty("RXVAULT_BUSY_TIMEOUT") else { return 30_000 }
        guard let seconds = Double(text), seconds >= 0, seconds <= 86_400 else {
            throw CLIError(.usage, "RXVAULT_BUSY_TIMEOUT '\(text)' is not a number of seconds (0 to 86400)")
        }
        return Int32(seconds * 1000)
    }

    /// Where the newest write counter seen of each vault file is kept (`$XDG_STATE_HOME/rxvault`,
    /// else `~/.local/state/rxvault`): the anchor that tells an older copy put in place. A relative
    /// XDG_STATE_HOME is ignored, as the XDG spec says. With neither an absolute XDG_STATE_HOME
    /// nor an absolute HOME there is no anchor, and the command warns (never the passwd entry's
    /// home: the anchor goes where the environment says, or the user is told it goes nowhere).
    static var rollbackAnchor: RollbackAnchor? {
        let xdg = nonEmpty("XDG_STATE_HOME")
        if let xdg, xdg.hasPrefix("/") {
            return RollbackAnchor(directory: xdg + "/rxvault", whenNotKept: AnchorWarning.notKept)
        }
        let ignored = xdg == nil ? "" : " (XDG_STATE_HOME is not an absolute path)"
        guard let home = nonEmpty("HOME") else {
            AnchorWarning.notKept("HOME is not set" + (xdg == nil ? " and neither is XDG_STATE_HOME" : ignored))
            return nil
        }
        guard home.hasPrefix("/") else {
            AnchorWarning.notKept("HOME (\(home)) is not an absolute path" + ignored)
            return nil
        }
        return RollbackAnchor(directory: home + "/.local/state/rxvault", whenNotKept: AnchorWarning.notKept)
    }

    /// `RXVAULT_SERVE_IDLE_TIMEOUT`: seconds `rxvault serve` gives a connection that sends or
    /// reads nothing (default 30). For tests of slow clients, which cannot wait half a minute a round.
    static func serveIdleTimeoutSeconds() throws -> Int64? {
        guard let text = nonEmpty("RXVAULT_SERVE_IDLE_TIMEOUT") else { return nil }
        guard let seconds = Int64(text), (1...3600).contains(seconds) else {
            throw CLIError(.usage, "RXVAULT_SERVE_IDLE_TIMEOUT '\(text)' is not a number of seconds (1 to 3600)")
        }
        return seconds
    }

    private static func nonEmpty(_ name: String) -> String? {
        guard let value = values[name], !value.isEmpty else { return nil }
        return value
    }
}
