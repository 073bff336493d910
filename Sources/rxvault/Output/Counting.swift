import ArgumentParser
import Foundation
import RxCrypto
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

/// "1 prescription", "2 prescriptions".
func counted(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

func byteCountText(_ n: Int) -> String {
    n >= 1 << 20
        ? String(format: "%.1f MiB", Double(n) / Double(1 << 20)) : n >= 1 << 10 ? "\(n >> 10) KiB" : "\(n) bytes"
}
