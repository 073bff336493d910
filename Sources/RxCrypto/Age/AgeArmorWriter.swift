/// Streaming ASCII armor for age files (what `age -a` writes, and `AgeFile.armor` for a whole
/// file): the BEGIN line, padded base64 in 64-column lines, the END line. A backup of any size
/// is armored in bounded memory: each 48 bytes of input become one full line as they come.
public final class AgeArmorWriter {
    private let emit: ([UInt8]) throws(CryptoError) -> Void
    private var pending: [UInt8] = []
    private var finished = false

    /// `output` receives the armored text, BEGIN line first.
    public init(output: @escaping ([UInt8]) throws(CryptoError) -> Void) throws(CryptoError) {
        emit = output
        try output(Array("-----BEGIN AGE ENCRYPTED FILE-----\n".utf8))
    }

    public func write(_ bytes: [UInt8]) throws(CryptoError) {
        pending += bytes
        let whole = pending.count / 48 * 48
        guard whole > 0 else { return }
        var text: [UInt8] = []
        var i = 0
        while i < whole {
            text += Array(Base64.standard.encodePadded(Array(pending[i..<(i + 48)])).utf8) + [0x0A]
            i += 48
        }
        pending.removeFirst(whole)
        try emit(text)
    }

    /// Writes the last (shorter) line and the END line.
    public func finish() throws(CryptoError) {
        guard !finished else { return }
        finished = true
        var text: [UInt8] = []
        if !pending.isEmpty { text += Array(Base64.standard.encodePadded(pending).utf8) + [0x0A] }
        try emit(text + Array("-----END AGE ENCRYPTED FILE-----\n".utf8))
    }
}
