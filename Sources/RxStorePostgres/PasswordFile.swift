import RxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The password for a login, found as libpq finds it: `PGPASSWORD`, else the first matching
/// line of `PGPASSFILE` (default `~/.pgpass`), whose lines are
/// `hostname:port:database:username:password`, each field a value or `*`, with `\:` and `\\`
/// for a colon or backslash within a field. As libpq, a password file that others can read is
/// ignored (with the reason returned, for the message when the login then fails).
enum PasswordFile {
    /// The password for `location`, or nil (the server may not need one: peer or trust login).
    static func password(for location: PostgresLocation, environment: [String: String]) -> String? {
        if let password = environment["PGPASSWORD"], !password.isEmpty { return password }
        let path =
            environment["PGPASSFILE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["HOME"].map { $0 + "/.pgpass" }
        guard let path, let text = readPrivateFile(path) else { return nil }
        // libpq matches a socket login against "localhost" (and the socket folder).
        let hosts: Set<String> =
            location.host.hasPrefix("/") ? ["localhost", location.host] : [location.host]
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) where !line.hasPrefix("#") {
            let fields = split(String(line))
            guard fields.count == 5 else { continue }
            func matches(_ field: String, _ values: Set<String>) -> Bool { field == "*" || values.contains(field) }
            if matches(fields[0], hosts), matches(fields[1], [String(location.port)]),
                matches(fields[2], [location.database]), matches(fields[3], [location.user])
            {
                return fields[4]
            }
        }
        return nil
    }

    /// The fields of one line, with `\:` and `\\` read.
    static func split(_ line: String) -> [String] {
        var fields: [String] = [""]
        var escaped = false
        for c in line {
            if escaped {
                fields[fields.count - 1].append(c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else if c == ":" && fields.count < 5 {
                fields.append("")
            } else {
                fields[fields.count - 1].append(c)
            }
        }
        return fields
    }

    /// The file's text when it is a regular file only its owner can read or write (libpq's rule).
    private static func readPrivateFile(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_mode & 0o077 == 0 else { return nil }
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            bytes += buffer[0..<n]
            if bytes.count > 1 << 20 { return nil }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
