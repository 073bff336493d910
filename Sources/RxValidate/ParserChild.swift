import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The child side of `IsolatedParser`: the process that actually parses untrusted bytes.
///
/// It limits itself first (CPU time, address space, no file writes, no core dumps), then reads
/// the whole file from stdin, runs the validator (or the preview renderer) and writes one JSON
/// line to stdout, followed by the preview bytes when asked for. If a hostile file makes the
/// parser crash or spin, only this process dies; the vault process reports the refusal.
public enum ParserChild {
    /// What the child writes as its first line.
    struct Verdict: Codable {
        var accepted: ValidatedAttachment?
        var refusal: AttachmentRefusal.Reason?
        var message: String?
        var previewBytes: Int?
    }

    public enum Mode: String, Sendable { case validate, preview }

    /// Runs the child and exits. `faultForTests` (from RXVAULT_PARSER_FAULT) makes the child
    /// crash or hang after reading its input, so tests can prove the vault survives both.
    public static func run(mode: Mode, limits: ValidationLimits, previewWidth: UInt32, cpuSeconds: Int,
                           memoryBytes: Int, faultForTests: String?) -> Never {
        applyLimits(cpuSeconds: cpuSeconds, memoryBytes: memoryBytes)
        let input = readInput(limit: limits.maxBytes)
        switch faultForTests {
        case "crash"?:
            // A real invalid memory access, as a parser bug would make.
            let address = UnsafeMutablePointer<Int>(bitPattern: Int.random(in: 1..<4096))!
            address.pointee = 1
        case "hang"?: while true { _ = sqrt(Double(Int.random(in: 0..<1000))) }
        default: break
        }
        var verdict = Verdict()
        var payload: [UInt8] = []
        do throws(AttachmentRefusal) {
            guard let bytes = input else {
                throw AttachmentRefusal(.tooLarge, "file is over the \(ByteCount(limits.maxBytes)) limit")
            }
            switch mode {
            case .validate:
                verdict.accepted = try AttachmentValidator.validate(bytes, limits: limits)
            case .preview:
                payload = try PreviewRenderer.render(bytes, width: previewWidth, limits: limits)
                verdict.previewBytes = payload.count
            }
        } catch {
            verdict.refusal = error.reason
            verdict.message = error.message
        }
        var line = (try? JSONEncoder().encode(verdict)) ?? Data("{}".utf8)
        line.append(0x0A)
        writeAll(Array(line) + payload)
        exit(0)
    }

    static func applyLimits(cpuSeconds: Int, memoryBytes: Int) {
        func set(_ resource: Int32, _ value: rlim_t) {
            var limit = rlimit(rlim_cur: value, rlim_max: value)
            setrlimit(__rlimit_resource_t(UInt32(resource)), &limit)
        }
        set(Int32(RLIMIT_CPU.rawValue), rlim_t(cpuSeconds))
        set(Int32(RLIMIT_AS.rawValue), rlim_t(memoryBytes))
        set(Int32(RLIMIT_FSIZE.rawValue), 0)
        set(Int32(RLIMIT_CORE.rawValue), 0)
    }

    /// Reads stdin to the end; nil when it holds more than `limit` bytes.
    static func readInput(limit: Int) -> [UInt8]? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
            if bytes.count > limit { return nil }
        }
        return bytes
    }

    static func writeAll(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}
