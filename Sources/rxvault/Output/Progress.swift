import ArgumentParser
import Foundation
import RxCrypto
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

/// Progress on stderr for long work, only when stderr is a terminal: a bar, the percentage and
/// how many of how many (`rxvault: importing [#######-------------]  35% 35000/100000`),
/// redrawn in place when the percentage changes.
final class Progress {
    /// Imports and exports show progress from this many prescriptions on.
    static let minimumItems = 5_000
    static let barWidth = 20
    let verb: String
    /// How an amount is written: prescriptions as numbers, bytes (backups) as KiB or MiB.
    let amount: (Int) -> String
    let enabled = Terminal.stderrIsTTY
    var last = -1
    init(_ verb: String, amount: @escaping (Int) -> String = { String($0) }) {
        self.verb = verb
        self.amount = amount
    }
    func update(_ done: Int, _ total: Int) {
        guard enabled, total > 0 else { return }
        let percent = min(100, done * 100 / total)
        if percent != last {
            last = percent
            StandardStream.write(
                "\r\(Self.line(verb, done: amount(min(done, total)), total: amount(total), percent: percent))",
                to: STDERR_FILENO)
        }
    }

    /// One progress line, without the carriage return.
    static func line(_ verb: String, done: String, total: String, percent: Int) -> String {
        let filled = percent * barWidth / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled)
        let number = String(percent)
        return "rxvault: \(verb) [\(bar)] \(String(repeating: " ", count: 3 - number.count))\(number)% \(done)/\(total)"
    }
    func finish() { if enabled && last >= 0 { StandardStream.write("\r\u{1B}[K", to: STDERR_FILENO) } }
}
