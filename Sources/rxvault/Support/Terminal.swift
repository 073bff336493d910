#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import RxCrypto

/// Standard streams and the terminal. Data goes to stdout; prompts, warnings and errors to stderr.
enum Terminal {
    static var stdinIsTTY: Bool { isatty(STDIN_FILENO) == 1 }
    static var stderrIsTTY: Bool { isatty(STDERR_FILENO) == 1 }

    static func out(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func err(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func warning(_ text: String) { err("rxvault: warning: \(text)") }

    /// The terminal settings to put back if the user presses Ctrl-C while echo is off.
    nonisolated(unsafe) private static var savedTerminal = termios()
    nonisolated(unsafe) private static var echoIsOff = false

    /// Reads one line from stdin with echo off (stdin must be a TTY), into zeroed-on-release memory.
    /// The prompt goes to stderr. Returns nil at end of input.
    static func readSecretLine(prompt: String) -> SecretBytes? {
        var settings = termios()
        let haveSettings = tcgetattr(STDIN_FILENO, &settings) == 0
        if haveSettings {
            savedTerminal = settings
            var silent = settings
            silent.c_lflag &= ~tcflag_t(ECHO)
            silent.c_lflag |= tcflag_t(ECHONL)
            echoIsOff = true
            signal(SIGINT) { _ in
                if Terminal.echoIsOff { tcsetattr(STDIN_FILENO, TCSANOW, &Terminal.savedTerminal) }
                _exit(130)
            }
            // Discard anything typed before the prompt (TCSAFLUSH), then show the prompt: an answer
            // typed after seeing it can no longer be thrown away.
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        }
        FileHandle.standardError.write(Data(prompt.utf8))
        defer {
            if haveSettings {
                tcsetattr(STDIN_FILENO, TCSAFLUSH, &savedTerminal)
                echoIsOff = false
                signal(SIGINT, SIG_DFL)
            }
        }
        return readLine(fd: STDIN_FILENO, limit: 4096)
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

    /// Asks a yes/no question on stderr and reads the answer from stdin (a TTY).
    static func confirm(_ question: String) -> Bool {
        FileHandle.standardError.write(Data((question + " [y/N] ").utf8))
        guard let answer = Swift.readLine() else { return false }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }
}
