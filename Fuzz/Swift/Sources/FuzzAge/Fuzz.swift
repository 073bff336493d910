import RxCrypto

/// The age reader, whole-file and streaming, binary and armored: any input must decrypt or be
/// refused, and the whole-file and streaming readers (binary and armored) must agree.
nonisolated(unsafe) let identity = AgeIdentity(line: "AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0")!

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var secret = Array("password".utf8)
    let keys: [AgeFile.Key] = [.identities([identity]), .passphrase(SecretBytes(consuming: &secret), maxLogN: 10)]
    for key in keys {
        let whole = try? AgeFile.decrypt(bytes, with: key, armored: false)
        var offset = 0
        var streamed: [UInt8]? = []
        do {
            try AgeFile.decrypt(read: { buffer in
                let n = min(buffer.count, bytes.count - offset, 1000)
                for i in 0..<n { buffer[i] = bytes[offset + i] }
                offset += n
                return n
            }, key: key) { streamed! += $0 }
        } catch { streamed = nil }
        if whole != streamed { fatalError("whole-file and streaming age readers disagree") }
        // Armored: the whole-file dearmor and the streaming armor reader must agree too.
        let wholeArmored = try? AgeFile.decrypt(bytes, with: key, armored: true)
        var armorOffset = 0
        let armor = AgeArmorStream { buffer in
            let n = min(buffer.count, bytes.count - armorOffset, 777)
            for i in 0..<n { buffer[i] = bytes[armorOffset + i] }
            armorOffset += n
            return n
        }
        var streamedArmored: [UInt8]? = []
        do { try AgeFile.decrypt(read: { try armor.read(&$0) }, key: key) { streamedArmored! += $0 } } catch { streamedArmored = nil }
        if wholeArmored != streamedArmored { fatalError("whole-file and streaming armor readers disagree") }
    }
    return 0
}
