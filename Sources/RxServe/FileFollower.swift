import Logging
import RxVault

/// Which vault file the server answers from, and how it opens the next one when the file at the
/// vault's path is replaced (Syncthing, Dropbox or Nextcloud, an editor, `rxvault restore`: all
/// rename a new file over it) or removed (DESIGN.md, "The file replaced under a running server").
///
/// The server compares the path's device and inode with those of the file it has open at every
/// request and at least once a second (`isCurrent`: one stat). When they differ, the gateway lets
/// go of the old file and this opens the new one with the root key the server holds, accepting it
/// only as the same vault as its owner left it (`VaultReopener.open`). A file it cannot accept
/// (another vault, one the key does not open, an older copy) is said once on stderr, clients get
/// 503, and it is tried again at the next request or second: at most once a second while the
/// same file stays there, at once when another file arrives.
struct FileFollower {
    let reopener: VaultReopener
    let logger: Logger
    /// The file the gateway has open; nil while none is served.
    private(set) var served: VaultFileNumbers?
    /// The last failed attempt: which file was at the path, when, and why it was refused.
    private var refused: (file: VaultFileNumbers?, at: ContinuousClock.Instant, why: String)?

    init(reopener: VaultReopener, serving vault: Vault, logger: Logger) {
        self.reopener = reopener
        self.logger = logger
        // A file already replaced as the server started is followed at the first request.
        served = vault.openFileNumbers()
    }

    var path: String { reopener.path }

    /// Whether the file at the path is the one served.
    func isCurrent() -> Bool {
        served != nil && VaultFileNumbers(path: path) == served
    }

    /// The write counter of the file served last: a file renamed over it with a lower one is an
    /// older copy, refused even where no rollback anchor can be kept (no state folder).
    private var lastServedCounter: Int?

    /// Notes how far the file being let go of had come (read before its connections close).
    mutating func noteCounter(_ counter: Int?) {
        if let counter { lastServedCounter = max(lastServedCounter ?? counter, counter) }
    }

    /// Says that the served file is gone, once the gateway has let go of it.
    mutating func letGo() {
        guard served != nil else { return }
        served = nil
        logger.notice(
            "the vault file at \(path) was replaced or removed: the server stopped using the file it had open and opens the one now there"
        )
    }

    /// Opens the file now at the path for the gateway, or nil when it cannot be served yet (said
    /// on stderr once per file and reason). Only once every connection to the old file is
    /// released. The audit writer opens its own connection next (`AuditWriter.follow`) and the
    /// gateway calls `opened` or `refuse` with how that went.
    mutating func open() -> Vault? {
        let file = VaultFileNumbers(path: path)
        if let refused, refused.file == file, ContinuousClock.now - refused.at < .seconds(1) { return nil }
        do throws(VaultError) {
            let vault = try reopener.open()
            guard vault.openFileNumbers() != nil else {
                throw .refused("\(path) was replaced again while it was being opened")
            }
            if let minimum = lastServedCounter, let found = try? vault.writeCounter(), found < minimum {
                throw .refused(
                    "the file is older (write \(found)) than the one it replaced (write \(minimum)): it would bring back grants revoked since; restart 'rxvault serve' to serve it anyway"
                )
            }
            return vault
        } catch {
            refuse(error.description, file: file)
            return nil
        }
    }

    /// The file both connections have open is served from now on.
    mutating func opened(_ vault: Vault, file: VaultFileNumbers) {
        served = file
        refused = nil
        logger.notice(
            "serving the vault file now at \(path) (write \((try? vault.writeCounter()) ?? 0)): its grants, revocations and client removals count from this request on"
        )
    }

    /// The file at the path cannot be served: why, said once per file and reason.
    mutating func refuse(_ why: String, file: VaultFileNumbers?) {
        if refused?.why != why || refused?.file != file {
            logger.error(
                "cannot serve the file now at \(path): \(why); clients get 503 until this vault's own file is there (checked at each request, at most once a second)"
            )
        }
        refused = (file, .now, why)
    }
}
