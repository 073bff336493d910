#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Command-line arguments and the environment values rxvault reads must be UTF-8 text.
///
/// Swift turns each `argv` string into a `String` by replacing bytes that are not UTF-8 with
/// U+FFFD, so `rxvault attach 3f9a $'\xff.png'` would open a file called "\u{FFFD}.png" (another
/// file, if one has that name), `init --vault` would create a vault under a name nobody typed,
/// and a client or attachment name would be stored mangled. The raw bytes (`CommandLine.unsafeArgv`
/// and `getenv`, before any conversion) are checked first, and anything that is not UTF-8 is
/// refused before a command runs.
enum ArgumentEncoding {
    /// The environment variables rxvault reads (docs/reference.md, "Environment"), whose values become
    /// paths, names or settings.
    static let environmentNames = [
        "RXVAULT_PATH", "RXVAULT_PASSPHRASE_FILE", "RXVAULT_BUSY_TIMEOUT", "RXVAULT_PARSER_TIMEOUT",
        "RXVAULT_PARSER_FAULT", "RXVAULT_TEST_WRITE_PAUSE_MS", "RXVAULT_TEST_READ_PAUSE_MS",
        "RXVAULT_TODAY",
        "XDG_DATA_HOME", "XDG_STATE_HOME", "HOME"
    ]

    /// Why the command line cannot be used as given, or nil when every argument (after the
    /// program's name) and every environment value rxvault reads is UTF-8.
    static func refusal() -> CLIError? {
        let argv = CommandLine.unsafeArgv
        for index in 1..<Int(CommandLine.argc) {
            guard let pointer = argv[index] else { continue }
            let bytes = raw(pointer)
            if String(validating: bytes, as: UTF8.self) == nil {
                return CLIError(
                    .usage, "argument \(index) is not UTF-8 text: '\(escaped(bytes))'",
                    hint:
                        "rxvault reads paths and names as UTF-8; rename the file to a UTF-8 name (convmv does it), or give a link with one"
                )
            }
        }
        for name in environmentNames {
            guard let pointer = getenv(name) else { continue }
            let bytes = raw(pointer)
            if String(validating: bytes, as: UTF8.self) == nil {
                return CLIError(
                    .usage, "the environment variable \(name) is not UTF-8 text: '\(escaped(bytes))'",
                    hint: "set \(name) to a UTF-8 value (for a path: rename it, or use a link with a UTF-8 name)")
            }
        }
        return nil
    }

    private static func raw(_ pointer: UnsafePointer<CChar>) -> [UInt8] {
        Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer)).map { UInt8(bitPattern: $0) })
    }

    /// The bytes as text, each byte that is not part of a UTF-8 character written `\xFF`, so the
    /// message shows which argument it is and where (at most 200 characters of it).
    static func escaped(_ bytes: [UInt8]) -> String {
        var text = ""
        var index = 0
        while index < bytes.count && text.count < 200 {
            var decoded: String?
            var length = 1
            while decoded == nil && length <= 4 && index + length <= bytes.count {
                decoded = String(validating: bytes[index..<index + length], as: UTF8.self)
                if decoded == nil { length += 1 }
            }
            if let decoded {
                text += decoded
                index += length
            } else {
                text += "\\x" + String(bytes[index], radix: 16, uppercase: true).leftPadded(to: 2)
                index += 1
            }
        }
        return index < bytes.count ? text + "..." : text
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
