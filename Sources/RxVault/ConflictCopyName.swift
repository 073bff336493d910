import Foundation

/// Which tool made a file beside the vault out of it, told from the file's name alone (or, for
/// `vaultCopy`, from its content: `ConflictCopies`).
///
/// When two devices change a file a sync tool carries before they hear from each other, the tool
/// keeps one side under the file's name and renames the other. Each tool has its own name for
/// that copy, and `ConflictCopyName` knows these, as each tool's source writes them:
///
/// | form | the copy of `vault.rxv` |
/// |---|---|
/// | `syncthing` | `vault.sync-conflict-20261207-101500-ABCDEFG.rxv` (date, time, the short id of the device that made the losing change) |
/// | `dropbox` | `vault (conflicted copy 2026-12-07).rxv`, `vault (laptop's conflicted copy 2026-12-07).rxv` |
/// | `nextcloud` | `vault (conflicted copy 2026-12-07 101500).rxv`, with a user before the date in newer clients; `vault_conflict-20261207-101500.rxv` (older clients, ownCloud's too) |
/// | `vaultCopy` | any other file in the folder that is a vault with the same vault id |
public enum ConflictCopyForm: String, Sendable, CaseIterable, Codable {
    case syncthing
    case dropbox
    /// Nextcloud's desktop client, and ownCloud's, from which it comes: both write both forms.
    case nextcloud
    /// Not a sync tool's name: another file of the same vault (a copy made by hand, or by a tool
    /// whose naming rxvault does not know).
    case vaultCopy = "vault-copy"

    /// How messages name the form: "Syncthing's", "another copy of this vault".
    public var described: String {
        switch self {
        case .syncthing: "Syncthing's conflict copy"
        case .dropbox: "Dropbox's conflicted copy"
        case .nextcloud: "Nextcloud's or ownCloud's conflicted copy"
        case .vaultCopy: "another file of this vault"
        }
    }
}

/// Recognizes a sync tool's conflict copy of the vault file by name (pure: no file is read).
public enum ConflictCopyName {
    /// The form of `name` as a conflict copy of the vault file named `vaultName` (both the last
    /// part of a path, in the same folder), or nil when it is none of the sync tools' forms.
    /// The vault's own name is none.
    public static func form(of name: String, copyOf vaultName: String) -> ConflictCopyForm? {
        guard name != vaultName, !vaultName.isEmpty else { return nil }
        if let middle = middle(of: name, around: splitLikeGo(vaultName)), isSyncthingMarker(middle) {
            return .syncthing
        }
        guard let middle = middle(of: name, around: splitLikeQt(vaultName)) else { return nil }
        if isNextcloudMarker(middle) { return .nextcloud }
        if isDropboxMarker(middle) { return .dropbox }
        return nil
    }

    // MARK: - Where each tool puts its marker

    /// A name split into what comes before its extension and the extension (with its dot), as
    /// Go's `filepath.Ext` splits it, which Syncthing uses: from the last dot, wherever it is
    /// (".vault" is all extension), or no extension without a dot.
    static func splitLikeGo(_ name: String) -> (stem: Substring, ext: Substring) {
        guard let dot = name.lastIndex(of: ".") else { return (name[...], "") }
        return (name[..<dot], name[dot...])
    }

    /// The same as the Qt clients split it (Nextcloud's and ownCloud's `makeConflictFileName`):
    /// a dot that starts the name is no extension's ("`.vault`" has none). Dropbox names the
    /// same way for every name rxvault would use.
    static func splitLikeQt(_ name: String) -> (stem: Substring, ext: Substring) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name[...], "") }
        return (name[..<dot], name[dot...])
    }

    /// What `name` holds between the vault name's stem and its extension; nil when it does not
    /// start with the one and end with the other, or holds nothing between them.
    static func middle(of name: String, around parts: (stem: Substring, ext: Substring)) -> Substring? {
        guard name.count > parts.stem.count + parts.ext.count, name.hasPrefix(parts.stem), name.hasSuffix(parts.ext)
        else { return nil }
        return name.dropFirst(parts.stem.count).dropLast(parts.ext.count)
    }

    // MARK: - The markers

    /// `.sync-conflict-YYYYMMDD-HHMMSS-DEVICE`: Syncthing's `conflictName`, the device being the
    /// short id (seven base-32 characters today; any run of capitals and digits is taken).
    static func isSyncthingMarker(_ middle: Substring) -> Bool {
        let prefix = ".sync-conflict-99999999-999999-"
        guard middle.count > prefix.count, fits(middle.prefix(prefix.count), prefix) else { return false }
        return middle.dropFirst(prefix.count).allSatisfy { isDigit($0) || ("A"..."Z").contains($0) && $0.isASCII }
    }

    /// ` (conflicted copy [USER ]YYYY-MM-DD HHMMSS)`, and `_conflict-YYYYMMDD-HHMMSS` or
    /// `_conflict_USER-YYYYMMDD-HHMMSS` of older clients.
    static func isNextcloudMarker(_ middle: Substring) -> Bool {
        if let inner = enclosed(middle, after: " (conflicted copy ") {
            let stamp = "9999-99-99 999999"
            guard inner.count >= stamp.count, fits(inner.suffix(stamp.count), stamp) else { return false }
            let user = inner.dropLast(stamp.count)
            return user.isEmpty || (user.count > 1 && user.hasSuffix(" "))
        }
        let stamp = "-99999999-999999"
        guard middle.count >= stamp.count, fits(middle.suffix(stamp.count), stamp) else { return false }
        let head = middle.dropLast(stamp.count)
        return head == "_conflict" || (head.hasPrefix("_conflict_") && head.count > "_conflict_".count)
    }

    /// ` (conflicted copy YYYY-MM-DD)` and ` (HOST's conflicted copy YYYY-MM-DD)`, with the
    /// ` (N)` Dropbox adds inside when that name is taken too.
    static func isDropboxMarker(_ middle: Substring) -> Bool {
        guard let inner = enclosed(middle, after: " (") else { return false }
        let words = "conflicted copy "
        guard let found = inner.range(of: words) else { return false }
        let host = inner[..<found.lowerBound]
        guard host.isEmpty || (host.count > 3 && (host.hasSuffix("'s ") || host.hasSuffix("\u{2019}s "))) else {
            return false
        }
        let rest = inner[found.upperBound...]
        let date = "9999-99-99"
        guard rest.count >= date.count, fits(rest.prefix(date.count), date) else { return false }
        let counter = rest.dropFirst(date.count)
        guard !counter.isEmpty else { return true }
        guard counter.hasPrefix(" ("), counter.hasSuffix(")"), counter.count > 3 else { return false }
        return counter.dropFirst(2).dropLast().allSatisfy(isDigit)
    }

    /// What `middle` holds after `opening` up to its closing parenthesis, which must end it.
    private static func enclosed(_ middle: Substring, after opening: String) -> Substring? {
        guard middle.hasPrefix(opening), middle.hasSuffix(")"), middle.count > opening.count else { return nil }
        return middle.dropFirst(opening.count).dropLast()
    }

    /// Whether `text` has `shape`'s characters, each `9` standing for any digit.
    private static func fits(_ text: Substring, _ shape: String) -> Bool {
        guard text.count == shape.count else { return false }
        return zip(text, shape).allSatisfy { character, wanted in
            wanted == "9" ? isDigit(character) : character == wanted
        }
    }

    private static func isDigit(_ character: Character) -> Bool {
        character.asciiValue.map { (0x30...0x39).contains($0) } ?? false
    }
}
