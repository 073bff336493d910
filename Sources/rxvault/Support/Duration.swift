import ArgumentParser
import Foundation
import RxCrypto
import RxModel
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

/// Durations people type: "60d", "8w", "2m" (months of 30 days), "1y"; a bare number is days.
enum Duration {
    /// The longest duration read: 100 years.
    static let maxDays = 36500

    static func days(_ text: String) -> Int? {
        let units: [Character: Int] = ["d": 1, "w": 7, "m": 30, "y": 365]
        let (number, unit) = text.last.flatMap { units[$0] }.map { (text.dropLast(), $0) } ?? (Substring(text), 1)
        guard let n = Int(number), n >= 0, n <= maxDays / unit else { return nil }
        return n * unit
    }
}
