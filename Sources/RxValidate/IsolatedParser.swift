import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the validator (or the preview renderer) on untrusted bytes in a child process with limits
/// on CPU time, address space and wall-clock time (DESIGN.md, "Attachments").
///
/// The child is a program that calls `ParserChild.run` for `arguments` (rxvault runs itself
/// with a hidden subcommand). The caller streams the file in with `send` and then calls
/// `finish`; a parser that crashes or hangs becomes a refusal, never a crash of the caller.
public struct IsolatedParser: Sendable {
    public var executable: String
    public var arguments: [String]
    public var limits: ValidationLimits
    public var cpuSeconds: Int
    public var memoryBytes: Int
    public var wallClockSeconds: Double
    /// The child's whole environment besides PATH and LANG (RXVAULT_PARSER_FAULT in tests).
    public var environment: [String: String]
    /// Called when a child reports that it ran with resource limits only (the kernel refused
    /// the seccomp filter): the CLI prints a warning, once per run of the child.
    public var onUnsandboxed: (@Sendable (Sandbox) -> Void)?
    /// Called once when a check is still running after `slowAfterSeconds`, with the wall-clock
    /// limit: the CLI says on a terminal that it is still checking and when it gives up.
    public var onSlow: (@Sendable (Double) -> Void)?
    public var slowAfterSeconds: Double = 2

    /// The time a check may take, CPU and wall clock (RXVAULT_PARSER_TIMEOUT sets both): twice
    /// what the heaviest file accepted takes here (a 100-page PDF of 300 dpi A4 scans, 870 MB of
    /// decoded images: 10 s on a 2-core machine), so a hostile file holds `attach` no longer.
    public static let defaultSeconds = 20

    public init(
        executable: String, arguments: [String], limits: ValidationLimits, cpuSeconds: Int = defaultSeconds,
        memoryBytes: Int = 2 << 30, wallClockSeconds: Double = Double(defaultSeconds),
        environment: [String: String] = [:]
    ) {
        self.executable = executable
        self.arguments = arguments
        self.limits = limits
        self.cpuSeconds = cpuSeconds
        self.memoryBytes = memoryBytes
        self.wallClockSeconds = wallClockSeconds
        self.environment = environment
    }

    /// The arguments `ParserChild` needs, to append after the hidden subcommand.
    public func childArguments(mode: ParserChild.Mode, previewWidth: UInt32) -> [String] {
        let encodedLimits = (try? JSONEncoder().encode(limits)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return arguments + [
            "--mode", mode.rawValue, "--limits", encodedLimits, "--preview-width", String(previewWidth),
            "--cpu-seconds", String(cpuSeconds), "--memory-bytes", String(memoryBytes)
        ]
    }

    public func start(mode: ParserChild.Mode, previewWidth: UInt32 = PreviewRenderer.defaultWidth)
        throws(AttachmentRefusal) -> Session
    {
        try Session(parser: self, mode: mode, previewWidth: previewWidth)
    }

    /// Converts a phone photo (JPEG or HEIC) in the child: the new PNG, and what it came from.
    /// The PNG still has to go through `.validate` like any file before it is stored.
    public func convertPhoto(_ bytes: [UInt8], fullSize: Bool) throws(AttachmentRefusal) -> (PhotoConversion, [UInt8]) {
        let session = try start(mode: fullSize ? .convertFullSize : .convert)
        bytes.withUnsafeBytes { _ = session.send($0) }
        let (_, png) = try session.finish()
        guard let conversion = session.conversion else {
            throw AttachmentRefusal(.parserFailed, "the file checker did not convert the photo")
        }
        return (conversion, png)
    }

    /// Runs the child without input to learn which sandbox it gets on this machine (for
    /// `status`): the seccomp filter, or resource limits only.
    public func probeSandbox() throws(AttachmentRefusal) -> Sandbox {
        let session = try start(mode: .probe)
        _ = try? session.finish()
        guard let sandbox = session.sandbox else {
            throw AttachmentRefusal(.parserFailed, "the file checker did not say which sandbox it runs in")
        }
        return sandbox
    }

    /// One run of the child: bytes in, verdict (and preview) out.
    public final class Session {
        let process = Process()
        let input = Pipe()
        let output = Pipe()
        let parser: IsolatedParser
        private var inputOpen = true
        /// Which sandbox the child reported it ran in; set by `finish` (nil when it said nothing,
        /// as when it crashed before its verdict).
        public private(set) var sandbox: Sandbox?
        /// In the convert modes: what the photo was converted from (set by `finish`).
        public private(set) var conversion: PhotoConversion?
        /// In the validate modes: the PNG chunks left out of the file to store (set by `finish`).
        public private(set) var droppedMetadata: [String] = []
        /// In the validate modes: how many cuts the PNG's image data needed (set by `finish`).
        public private(set) var imageDataSplits = 0
        private let deadline: DispatchWorkItem
        private let slowNotice: DispatchWorkItem?
        private let timedOut = TimeoutFlag()

        init(parser: IsolatedParser, mode: ParserChild.Mode, previewWidth: UInt32) throws(AttachmentRefusal) {
            self.parser = parser
            // A child that dies early closes its stdin; writing then must fail, not kill us.
            signal(SIGPIPE, SIG_IGN)
            process.executableURL = URL(fileURLWithPath: parser.executable)
            process.arguments = parser.childArguments(mode: mode, previewWidth: previewWidth)
            // Only what the child needs: no passphrase file paths or anything else of ours.
            var environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
            for (key, value) in parser.environment { environment[key] = value }
            process.environment = environment
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            do { try process.run() } catch {
                throw AttachmentRefusal(.parserFailed, "cannot start the file checker: \(error.localizedDescription)")
            }
            let pid = process.processIdentifier
            let flag = timedOut
            deadline = DispatchWorkItem {
                flag.set()
                kill(pid, SIGKILL)
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + parser.wallClockSeconds, execute: deadline)
            if let onSlow = parser.onSlow, mode != .probe {
                let limit = parser.wallClockSeconds
                let notice = DispatchWorkItem { onSlow(limit) }
                DispatchQueue.global().asyncAfter(deadline: .now() + parser.slowAfterSeconds, execute: notice)
                slowNotice = notice
            } else {
                slowNotice = nil
            }
        }

        deinit {
            deadline.cancel()
            slowNotice?.cancel()
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }

        /// Streams the next piece of the file to the child. Returns false once the child stopped
        /// reading (it refused early, crashed or was killed); `finish` then says why.
        @discardableResult
        public func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
            guard inputOpen else { return false }
            var offset = 0
            let fd = input.fileHandleForWriting.fileDescriptor
            while offset < bytes.count {
                let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 {
                    closeInput()
                    return false
                }
                offset += n
            }
            return true
        }

        private func closeInput() {
            if inputOpen {
                try? input.fileHandleForWriting.close()
                inputOpen = false
            }
        }

        /// Ends the input, waits for the child, and returns what it found and the payload: the
        /// preview, the converted photo, or in the validate modes the file to store.
        public func finish() throws(AttachmentRefusal) -> (ValidatedAttachment, [UInt8]) {
            var payload: [UInt8] = []
            do {
                let accepted = try finish { payload += $0 }
                return (accepted, payload)
            } catch let refusal as AttachmentRefusal {
                throw refusal
            } catch {
                throw AttachmentRefusal(.parserFailed, "the file checker's answer could not be read: \(error)")
            }
        }

        /// Like `finish()`, but hands the payload to `consume` piece by piece as it arrives, so the
        /// caller's memory stays at a piece whatever the file's size. Nothing is handed over unless
        /// the child accepted the file; a payload cut short throws after the pieces were given,
        /// so the caller must discard what it got then. Throws `AttachmentRefusal`, or what
        /// `consume` throws.
        public func finish(streaming consume: (ArraySlice<UInt8>) throws -> Void) throws -> ValidatedAttachment {
            closeInput()
            let fd = output.fileHandleForReading.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            func readPiece() -> ArraySlice<UInt8>? {
                while true {
                    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    return n > 0 ? buffer[0..<n] : nil
                }
            }
            func drain() { while readPiece() != nil {} }
            var head: [UInt8] = []
            var newline: Int?
            while newline == nil, head.count < 1 << 20, let piece = readPiece() {
                head += piece
                newline = head.firstIndex(of: 0x0A)
            }
            guard let newline,
                let verdict = try? JSONDecoder().decode(ParserChild.Verdict.self, from: Data(head[..<newline]))
            else {
                drain()
                try waitForExit()
                throw AttachmentRefusal(
                    .parserFailed,
                    "the file checker failed on this file (exit \(process.terminationStatus)); it is refused as malformed"
                )
            }
            sandbox = verdict.sandbox.map(Sandbox.init(reported:))
            conversion = verdict.converted
            droppedMetadata = verdict.dropped ?? []
            imageDataSplits = verdict.splits ?? 0
            if let sandbox, !sandbox.isSeccomp { parser.onUnsandboxed?(sandbox) }
            if let reason = verdict.refusal {
                drain()
                try waitForExit()
                throw AttachmentRefusal(reason, verdict.message ?? "refused")
            }
            guard
                let accepted = verdict.accepted ?? (verdict.payloadBytes != nil ? ValidatedAttachment(type: .png) : nil)
            else {
                drain()
                try waitForExit()
                throw AttachmentRefusal(.parserFailed, "the file checker gave no verdict")
            }
            var received = head.count - newline - 1
            if received > 0 { try consume(head[(newline + 1)...]) }
            while let piece = readPiece() {
                received += piece.count
                try consume(piece)
            }
            try waitForExit()
            if let expected = verdict.payloadBytes, expected != received {
                throw AttachmentRefusal(.parserFailed, "the file checker's answer was cut short")
            }
            return accepted
        }

        /// Waits for the child to end; throws when the watchdog killed it or it died of a signal.
        private func waitForExit() throws(AttachmentRefusal) {
            process.waitUntilExit()
            deadline.cancel()
            slowNotice?.cancel()
            if timedOut.isSet {
                throw AttachmentRefusal(
                    .parserFailed,
                    "the file checker did not finish within \(Int(parser.wallClockSeconds)) s, the limit for checking a file; it is refused as suspicious (RXVAULT_PARSER_TIMEOUT sets the limit)"
                )
            }
            if process.terminationReason == .uncaughtSignal {
                let signal = process.terminationStatus
                let what =
                    signal == SIGXCPU || signal == SIGKILL
                    ? "used more than \(parser.cpuSeconds) s of CPU time"
                    : signal == SIGSEGV || signal == SIGBUS
                        ? "crashed"
                        : signal == SIGABRT ? "aborted (out of memory?)" : "was killed by signal \(signal)"
                throw AttachmentRefusal(
                    .parserFailed, "the file checker \(what) on this file; it is refused as malformed")
            }
        }
    }
}

/// Set once by the watchdog, read by `finish`.
final class TimeoutFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}
