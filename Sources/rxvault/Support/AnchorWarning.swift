import Synchronization

/// The warning that the rollback anchor (RollbackAnchor) cannot be kept: no state folder is named,
/// or the one named cannot be written. The vault works without it, but an older copy of the file
/// put in its place is then not noticed, so the user is told, with why and what to do, instead
/// of going without in silence. Once per command: a command (or `serve`) that records after
/// every write would otherwise repeat it, and once is enough to act on. Every command that opens
/// the vault with the anchor says it again: nothing can be remembered where nothing can be written.
enum AnchorWarning {
    private static let warned = Mutex(false)

    static let notKept: @Sendable (String) -> Void = { why in
        let first = warned.withLock { warned in
            defer { warned = true }
            return !warned
        }
        guard first else { return }
        Terminal.warning(
            "this computer cannot remember the newest state of the vault (\(why)): "
                + "an older copy put in place of the vault file will not be noticed; "
                + "set XDG_STATE_HOME to a folder you can write (the rollback anchor is kept in $XDG_STATE_HOME/rxvault)"
        )
    }
}
