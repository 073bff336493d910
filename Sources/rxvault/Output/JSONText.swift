import ArgumentParser
import Foundation
import RxCrypto
import RxModel
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

/// Sorted, pretty JSON for the small documents these commands print.
func jsonText(_ object: [String: Any]) throws -> String {
    String(
        decoding: try JSONSerialization.data(
            withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]),
        as: UTF8.self)
}
