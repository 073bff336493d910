import Foundation
import RxStore
import RxTestSupport

// `TestVault` (a throwaway vault at the fast KDF) and `SeededGenerator` come from RxTestSupport.

extension Database {
    func set(_ column: String, of id: String, version: Int, to bytes: [UInt8]) throws {
        try prepare("UPDATE prescription_version SET \(column) = ? WHERE prescription_id = ? AND version = ?")
            .run([.blob(bytes), .text(id), .integer(Int64(version))])
    }
}
