/// Splitting a path given by the user into its folder and its last part, as plain text.
///
/// Foundation's `NSString.deletingLastPathComponent` traps on some short relative paths on Linux
/// (`rxvault --vault V init` died with SIGILL), and its results for "", "/" and trailing slashes
/// differ between platforms. These follow POSIX `dirname`/`basename`, never trap, and are the
/// only path splitting rxvault does.
public enum PathText {
    /// The folder that holds `path`: "." for a bare name, "/" for a name in the root folder.
    /// Trailing slashes are ignored ("a/b/" -> "a"), as `dirname` does.
    public static func folder(of path: String) -> String {
        let trimmed = trimmingTrailingSlashes(path)
        if trimmed == "/" { return "/" }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        let head = trimmingTrailingSlashes(String(trimmed[..<slash]))
        return head.isEmpty ? "/" : head
    }

    /// The last part of `path` ("scan.pdf" of "a/scan.pdf"); "/" for the root, "" for "".
    public static func name(of path: String) -> String {
        let trimmed = trimmingTrailingSlashes(path)
        if trimmed == "/" { return "/" }
        guard let slash = trimmed.lastIndex(of: "/") else { return trimmed }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// `folder` and `name` joined with one slash.
    public static func join(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    private static func trimmingTrailingSlashes(_ path: String) -> String {
        var text = Substring(path)
        while text.count > 1, text.hasSuffix("/") { text = text.dropLast() }
        return String(text)
    }
}
