import Foundation

/// A path as a POSIX shell reads it back as one word, for commands a hint tells the user to run:
/// as it is when it holds only characters no shell treats specially, else in single quotes
/// (a single quote inside written as '\'').
enum ShellWord {
    static func quote(_ text: String) -> String {
        let plain =
            !text.isEmpty
            && text.unicodeScalars.allSatisfy { c in
                (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9")
                    || "_./:@%+=,-".unicodeScalars.contains(c)
            }
        if plain { return text }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
