import Foundation
import RxCrypto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Standard streams and the terminal. Data goes to stdout; prompts, warnings and errors to stderr.
enum Terminal {
    static var stdinIsTTY: Bool { isatty(STDIN_FILENO) == 1 }
    static var stderrIsTTY: Bool { isatty(STDERR_FILENO) == 1 }

    static func out(_ text: String) {
        StandardStream.write(text + "\n", to: STDOUT_FILENO)
    }

    /// Bytes as they are (an attachment, an age file) to stdout.
    static func out(bytes: [UInt8]) {
        StandardStream.write(bytes, to: STDOUT_FILENO)
    }

    /// `text` exactly as given, with no newline added: a format with its own line endings (iCalendar's CRLF).
    static func outExactly(_ text: String) {
        StandardStream.write(text, to: STDOUT_FILENO)
    }

    static func err(_ text: String) {
        StandardStream.write(text + "\n", to: STDERR_FILENO)
    }

    static func warning(_ text: String) { err("rxvault: warning: \(text)") }

    /// Where questions are asked: the controlling terminal (/dev/tty), as age, gpg and ssh ask,
    /// so stdin can carry data (`rxvault attach ID - < scan.png`) while a person types the
    /// answer; else stdin when it is a terminal that is not the controlling one. Opened once.
    private struct Asker: Sendable {
        let input: Int32
        let output: Int32

        static func find() -> Asker? {
            let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
            if fd >= 0 { return Asker(input: fd, output: fd) }
            if isatty(STDIN_FILENO) == 1 { return Asker(input: STDIN_FILENO, output: STDERR_FILENO) }
            return nil
        }

        func say(_ text: String) {
            let bytes = Array(text.utf8)
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { write(output, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return }
                offset += n
            }
        }
    }

    private static let asker = Asker.find()

    /// Whether there is a terminal to ask on. Without one (no controlling terminal, as in CI or
    /// under setsid, and stdin not a terminal) nothing is asked: callers fail fast instead.
    static var canAsk: Bool { asker != nil }

    /// The terminal settings to put back if the user presses Ctrl-C while echo is off.
    nonisolated(unsafe) private static var savedTerminal = termios()
    nonisolated(unsafe) private static var silencedFD: Int32 = -1

    /// Reads one line from the terminal with echo off, into zeroed-on-release memory; the prompt
    /// goes to the same terminal. Returns nil at end of input, or when there is no terminal.
    static func readSecretLine(prompt: String) -> SecretBytes? {
        guard let asker else { return nil }
        var settings = termios()
        let haveSettings = tcgetattr(asker.input, &settings) == 0
        if haveSettings {
            savedTerminal = settings
            var silent = settings
            silent.c_lflag &= ~tcflag_t(ECHO)
            silent.c_lflag |= tcflag_t(ECHONL)
            silencedFD = asker.input
            signal(SIGINT) { _ in
                if Terminal.silencedFD >= 0 { tcsetattr(Terminal.silencedFD, TCSANOW, &Terminal.savedTerminal) }
                _exit(130)
            }
            // Discard anything typed before the prompt (TCSAFLUSH), then show the prompt: an answer
            // typed after seeing it can no longer be thrown away.
            tcsetattr(asker.input, TCSAFLUSH, &silent)
        }
        asker.say(prompt)
        defer {
            if haveSettings {
                tcsetattr(asker.input, TCSAFLUSH, &savedTerminal)
                silencedFD = -1
                signal(SIGINT, SIG_DFL)
            }
        }
        return readLine(fd: asker.input, limit: 4096)
    }

    /// Reads bytes up to a newline (not included) into a secret buffer; nil if nothing was read.
    static func readLine(fd: Int32, limit: Int) -> SecretBytes? {
        let buffer = SecretBytes(zeroedCount: limit)
        var length = 0
        var sawAny = false
        var byte: UInt8 = 0
        while length < limit {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            sawAny = true
            if byte == UInt8(ascii: "\n") { break }
            buffer.withUnsafeMutableBytes { $0[length] = byte }
            length += 1
        }
        byte = 0
        guard sawAny else { return nil }
        if length > 0, buffer.withUnsafeBytes({ $0[length - 1] }) == UInt8(ascii: "\r") { length -= 1 }
        return buffer.prefix(length)
    }

    /// Asks a question on the terminal (echo on) and returns the answer, trimmed; nil at end of
    /// input or without a terminal.
    static func ask(_ question: String) -> String? {
        guard let asker else { return nil }
        asker.say(question)
        guard let line = readLine(fd: asker.input, limit: 256) else { return nil }
        return line.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }.trimmingCharacters(in: .whitespaces)
    }

    /// Reads up to `limit` bytes, line breaks included (a recovery code written on several
    /// lines), into a secret buffer; nil if nothing was read.
    static func readAll(fd: Int32, limit: Int) -> SecretBytes? {
        let buffer = SecretBytes(zeroedCount: limit)
        var length = 0
        while length < limit {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + length, limit - length) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            length += n
        }
        return length == 0 ? nil : buffer.prefix(length)
    }

    /// Asks a yes/no question on the terminal (echo on) and reads the answer there.
    static func confirm(_ question: String) -> Bool {
        guard let asker else { return false }
        asker.say(question + " [y/N] ")
        guard let line = readLine(fd: asker.input, limit: 256) else { return false }
        let answer = line.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }
}
