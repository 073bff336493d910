/// Recipients as age users write them: `age1...` (X25519) or an SSH public key line
/// (`ssh-ed25519 AAAA... comment`), one per `-r`, or a file of them as `age -R` reads it (one per
/// line, blank lines and lines starting with `#` skipped).
public enum AgeRecipientText {
    /// Why a recipient was not accepted. Never quotes a whole line of a recipients file: it could
    /// be a secret pasted by mistake (age hides them the same way).
    public enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// Not an age1 or ssh- recipient at all (or a malformed one).
        case malformed
        /// An age plugin recipient (age1name1...): it needs the plugin's program.
        case plugin
        /// A well-formed SSH key of a type rxvault does not encrypt to (ssh-rsa; ecdsa and
        /// security-key types, which age does not accept either).
        case unsupportedSSHKey(String)
        /// An identity (secret key) where a recipient (public key) belongs.
        case secretKey

        public var description: String {
            switch self {
            case .malformed: return "not an age recipient (age1...) or an ssh-ed25519 public key"
            case .plugin: return "an age plugin recipient, which rxvault cannot encrypt to"
            case .unsupportedSSHKey(let type):
                return "an SSH key of type \(type); rxvault encrypts to ssh-ed25519 keys only"
            case .secretKey:
                return "a secret key, not a recipient: give the public key (age-keygen -y, or the .pub file)"
            }
        }
    }

    /// One recipient, as given to `--recipient`.
    public static func parse(_ text: String) throws(Refusal) -> AgeFile.Recipient {
        let trimmed = text.trimmingSpaces()
        if trimmed.hasPrefix("AGE-SECRET-KEY-") || trimmed.hasPrefix("-----BEGIN") { throw .secretKey }
        if trimmed.hasPrefix("age1") {
            // age's own rule: a second "1" (after the HRP separator) marks a plugin's HRP.
            if trimmed.dropFirst(4).contains("1") && AgeRecipient(trimmed) == nil { throw .plugin }
            guard let recipient = AgeRecipient(trimmed) else { throw .malformed }
            return .x25519(recipient)
        }
        if trimmed.hasPrefix("ssh-") || trimmed.hasPrefix("sk-ssh-") || trimmed.hasPrefix("ecdsa-")
            || trimmed.hasPrefix("sk-ecdsa-")
        {
            if let key = AgeSSHRecipient(trimmed) { return .sshEd25519(key) }
            let type = String(trimmed.prefix { $0 != " " && $0 != "\t" })
            if type == AgeSSHRecipient.keyType { throw .malformed }
            throw .unsupportedSSHKey(type)
        }
        throw .malformed
    }

    /// A line of a recipients file that was not accepted: its number and why.
    public struct LineRefusal: Error, Equatable, Sendable {
        public let line: Int
        public let refusal: Refusal
        public init(line: Int, refusal: Refusal) {
            self.line = line
            self.refusal = refusal
        }
    }

    /// The recipients in the text of a recipients file, in order. Throws for the first line that
    /// is not one; an empty list means the file held only comments and blank lines.
    public static func parseFile(_ text: String) throws(LineRefusal) -> [AgeFile.Recipient] {
        var found: [AgeFile.Recipient] = []
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .enumerated()
        {
            var line = Substring(raw)
            if line.last == "\r" { line = line.dropLast() }
            if line.isEmpty || line.hasPrefix("#") { continue }
            do { found.append(try parse(String(line))) } catch { throw LineRefusal(line: index + 1, refusal: error) }
        }
        return found
    }
}
