/// Streaming removal of age's ASCII armor, with the same strictness as `AgeFile.dearmor` (BEGIN
/// line, 64-column padded base64 lines with only the last one shorter, END line, whitespace only
/// outside), so an armored backup of any size restores in bounded memory.
public final class AgeArmorStream {
    private static let begin = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
    private static let end = Array("-----END AGE ENCRYPTED FILE-----".utf8)

    private let source: (inout [UInt8]) throws -> Int
    private var text: [UInt8] = []
    private var textStart = 0
    private var sourceEnded = false
    private var decoded: [UInt8] = []
    private var decodedStart = 0
    private var lineNumber = 0
    private var chunk = [UInt8](repeating: 0, count: 4096)
    private var state = State.beforeBegin
    private enum State { case beforeBegin, body, afterShortLine, ended }

    /// `source` reads the armored text like `read(2)`: fills the buffer, returns 0 at the end.
    public init(source: @escaping (inout [UInt8]) throws -> Int) { self.source = source }

    /// Reads decoded (binary age) bytes into `buffer`; 0 at the end.
    public func read(_ buffer: inout [UInt8]) throws -> Int {
        while decodedStart == decoded.count {
            guard state != .ended else { return 0 }
            decoded.removeAll(keepingCapacity: true)
            decodedStart = 0
            try advance()
        }
        let n = min(buffer.count, decoded.count - decodedStart)
        for i in 0..<n { buffer[i] = decoded[decodedStart + i] }
        decodedStart += n
        return n
    }

    /// Consumes one line (or the leading whitespace and BEGIN line) and decodes what it holds.
    private func advance() throws {
        if state == .beforeBegin {
            while true {
                try fill(1)
                guard textStart < text.count else { throw AgeError.armor("missing or malformed BEGIN line") }
                guard AgeFile.isWhitespace(text[textStart]) else { break }
                textStart += 1
            }
        }
        guard let line = try nextLine() else {
            throw AgeError.armor("missing or malformed END line")
        }
        lineNumber += 1
        switch state {
        case .beforeBegin:
            guard line == Self.begin else { throw AgeError.armor("missing or malformed BEGIN line") }
            state = .body
        case .body, .afterShortLine:
            if line == Self.end {
                try requireOnlyWhitespace()
                state = .ended
                return
            }
            guard state == .body else { throw AgeError.armor("line \(lineNumber) follows a short line") }
            guard !line.isEmpty, line.count <= 64, line.count % 4 == 0 else {
                throw AgeError.armor("line \(lineNumber) has the wrong length")
            }
            guard let bytes = Base64.standard.decodePadded(line) else {
                throw AgeError.armor("invalid base64 on line \(lineNumber)")
            }
            if line.count < 64 || line.last == UInt8(ascii: "=") { state = .afterShortLine }
            decoded += bytes
        case .ended:
            break
        }
    }

    /// The next line without its LF (or CRLF); nil at the end of the input with nothing left.
    private func nextLine() throws -> [UInt8]? {
        var scannedPastStart = 0 // relative: `fill` may move the buffer's contents
        while true {
            if let newline = text[(textStart + scannedPastStart)...].firstIndex(of: 0x0A) {
                var line = Array(text[textStart..<newline])
                if line.last == 0x0D { line.removeLast() }
                textStart = newline + 1
                return line
            }
            scannedPastStart = text.count - textStart
            guard text.count - textStart <= 80 else { throw AgeError.armor("line \(lineNumber + 1) is too long") }
            if sourceEnded {
                guard textStart < text.count else { return nil }
                var line = Array(text[textStart...])
                textStart = text.count
                if line.last == 0x0D { line.removeLast() }
                return line
            }
            try fill(text.count - textStart + 1)
        }
    }

    private func requireOnlyWhitespace() throws {
        while true {
            while textStart < text.count {
                guard AgeFile.isWhitespace(text[textStart]) else { throw AgeError.armor("data after the END line") }
                textStart += 1
            }
            guard !sourceEnded else { return }
            try fill(1)
        }
    }

    /// Makes at least `wanted` unread bytes available, unless the source ends first.
    private func fill(_ wanted: Int) throws {
        if textStart > 0 && textStart == text.count {
            text.removeAll(keepingCapacity: true)
            textStart = 0
        }
        if textStart > 4096 {
            text.removeFirst(textStart)
            textStart = 0
        }
        while text.count - textStart < wanted && !sourceEnded {
            let n = try source(&chunk)
            if n == 0 { sourceEnded = true } else { text += chunk[0..<n] }
        }
    }
}
