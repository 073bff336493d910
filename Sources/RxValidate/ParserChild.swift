import CRxValidate
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The child side of `IsolatedParser`: the process that actually parses untrusted bytes.
///
/// It limits itself first (CPU time, address space, no file writes, no core dumps), enters its
/// seccomp sandbox where the kernel allows (no sockets, processes, programs or file changes; else
/// it goes on with the limits alone and says so in its verdict), then reads
/// the whole file from stdin, runs the validator (or the preview renderer) and writes one JSON
/// line to stdout, followed by the preview bytes when asked for. If a hostile file makes the
/// parser crash or spin, only this process dies; the vault process reports the refusal.
public enum ParserChild {
    /// What the child writes as its first line.
    struct Verdict: Codable {
        var accepted: ValidatedAttachment?
        var refusal: AttachmentRefusal.Reason?
        var message: String?
        /// Bytes after the verdict line: the preview, the converted photo, or the file to store.
        var payloadBytes: Int?
        /// In the validate modes: the PNG chunks left out of the file to store.
        var dropped: [String]?
        /// In the validate modes: how many cuts the PNG's image data needed (`PNGImageDataSplit`).
        var splits: Int?
        /// Which sandbox the child ran in (`Sandbox.description`).
        var sandbox: String?
        /// In the convert modes: what the photo was and what it became (the PNG is the payload).
        var converted: PhotoConversion?
    }

    /// `validate` checks the file and sends back what to store: a PNG without its metadata
    /// chunks (`validate-keep-metadata`: as given), a PDF as given.
    /// `probe` checks nothing: the child only enters its sandbox and reports which one ran.
    /// `convert` turns a JPEG or HEIC photo into a PNG scaled to `PhotoConverter.defaultLongestSide`
    /// (`convert-full-size`: every pixel), checks the PNG with the validator, and sends it back.
    public enum Mode: String, Sendable, CaseIterable {
        case validate, preview, probe, convert
        case validateKeepingMetadata = "validate-keep-metadata"
        case convertFullSize = "convert-full-size"
    }

    /// The CPU seconds and address space rxvault may give the child (RXVAULT_PARSER_TIMEOUT
    /// allows 1 to 3600 s; the address space is 2 GiB).
    public static let cpuSecondsRange = 1...3600
    public static let memoryBytesRange = (64 << 20)...(1 << 40)

    /// Why the child's arguments cannot be used, or nil. They come from its command line: rxvault
    /// always passes sane ones, and anything else (a negative, zero or absurd limit, as someone
    /// running the hidden command by hand might give) is refused before any limit is applied.
    public static func argumentProblem(
        limits: ValidationLimits, previewWidth: UInt32, cpuSeconds: Int, memoryBytes: Int
    ) -> String? {
        if !cpuSecondsRange.contains(cpuSeconds) {
            return
                "--cpu-seconds \(cpuSeconds) is outside \(cpuSecondsRange.lowerBound) to \(cpuSecondsRange.upperBound)"
        }
        if !memoryBytesRange.contains(memoryBytes) {
            return
                "--memory-bytes \(memoryBytes) is outside \(memoryBytesRange.lowerBound) to \(memoryBytesRange.upperBound)"
        }
        if !PreviewRenderer.widthRange.contains(previewWidth) {
            return
                "--preview-width \(previewWidth) is outside \(PreviewRenderer.widthRange.lowerBound) to \(PreviewRenderer.widthRange.upperBound)"
        }
        return limits.problem.map { "--limits: \($0)" }
    }

    /// Runs the child and exits. `faultForTests` (from RXVAULT_PARSER_FAULT) makes the child
    /// crash or hang after reading its input, so tests can prove the vault survives both.
    public static func run(
        mode: Mode, limits: ValidationLimits, previewWidth: UInt32, cpuSeconds: Int,
        memoryBytes: Int, faultForTests: String?
    ) -> Never {
        applyLimits(cpuSeconds: cpuSeconds, memoryBytes: memoryBytes)
        // "no-sandbox" shows, in tests, what happens where the kernel refuses the filter.
        let sandbox =
            faultForTests == "no-sandbox"
            ? Sandbox.rlimitsOnly(reason: "turned off by RXVAULT_PARSER_FAULT for a test")
            : Sandbox.enter()
        var verdict = Verdict()
        verdict.sandbox = sandbox.description
        if mode == .probe {
            writeVerdict(verdict, payload: [])
            exit(0)
        }
        let input = readInput(limit: limits.maxBytes)
        switch faultForTests {
        case let fault? where fault.hasPrefix("create-file:"):
            // What a parser exploit would try: leave a file behind. The sandbox refuses the open;
            // without it, RLIMIT_FSIZE stops only the writing, not the creating.
            let path = String(fault.dropFirst("create-file:".count))
            reportSandboxProbe(
                &verdict, open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600), did: "created \(path)",
                failed: "could not create \(path)")
        case "socket"?:
            reportSandboxProbe(
                &verdict, socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0), did: "opened a socket",
                failed: "could not open a socket")
        case "crash"?:
            // A real invalid memory access, as a parser bug would make.
            let address = UnsafeMutablePointer<Int>(bitPattern: Int.random(in: 1..<4096))!
            address.pointee = 1
        case "hang"?: while true { _ = sqrt(Double(Int.random(in: 0..<1000))) }
        case "stall"?: while true { sleep(60) } // waits without using CPU: only the wall clock stops it
        default: break
        }
        var payload: [UInt8] = []
        do throws(AttachmentRefusal) {
            guard let bytes = input else {
                throw AttachmentRefusal(.tooLarge, "file is over the \(ByteCount(limits.maxBytes)) limit")
            }
            switch mode {
            case .validate, .validateKeepingMetadata:
                let checked = try AttachmentValidator.check(
                    bytes, limits: limits, keepMetadata: mode == .validateKeepingMetadata)
                verdict.accepted = checked.validated
                verdict.dropped = checked.droppedMetadata
                verdict.splits = checked.imageDataSplits
                payload = checked.stored
                verdict.payloadBytes = payload.count
            case .preview:
                payload = try PreviewRenderer.render(bytes, width: previewWidth, limits: limits)
                verdict.payloadBytes = payload.count
            case .convert, .convertFullSize:
                let (conversion, png) = try PhotoConverter.convert(
                    bytes, limits: limits, fullSize: mode == .convertFullSize)
                // The parent checks it again as any attachment; checking here too means a
                // converter bug shows as the converter's, not as a refusal of the person's photo.
                verdict.accepted = try AttachmentValidator.validate(png, limits: limits)
                verdict.converted = conversion
                payload = png
                verdict.payloadBytes = payload.count
            case .probe: break
            }
        } catch {
            verdict.refusal = error.reason
            verdict.message = error.message
        }
        writeVerdict(verdict, payload: payload)
        exit(0)
    }

    /// A fault test's probe of the sandbox: says whether the forbidden call (`fd`, its result)
    /// worked, as the verdict's message, and ends the child.
    static func reportSandboxProbe(_ verdict: inout Verdict, _ fd: Int32, did: String, failed: String) -> Never {
        let error = errno
        let outcome = fd >= 0 ? did : "\(failed): \(String(cString: strerror(error)))"
        if fd >= 0 { close(fd) }
        verdict.refusal = .parserFailed
        verdict.message = "fault test: \(outcome)"
        writeVerdict(verdict, payload: [])
        exit(0)
    }

    static func writeVerdict(_ verdict: Verdict, payload: [UInt8]) {
        var line = (try? JSONEncoder().encode(verdict)) ?? Data("{}".utf8)
        line.append(0x0A)
        writeAll(Array(line) + payload)
    }

    static func applyLimits(cpuSeconds: Int, memoryBytes: Int) {
        func set(_ resource: Int32, _ value: rlim_t) {
            var limit = rlimit(rlim_cur: value, rlim_max: value)
            setrlimit(__rlimit_resource_t(UInt32(resource)), &limit)
        }
        // Checked by `argumentProblem` first; clamped too, so no value can trap here.
        set(Int32(RLIMIT_CPU.rawValue), rlim_t(clamping: max(1, cpuSeconds)))
        set(Int32(RLIMIT_AS.rawValue), rlim_t(clamping: max(1, memoryBytes)))
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
