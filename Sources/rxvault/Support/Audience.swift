import RxVault

/// Who reads rxvault's messages: the vault's owner, or a client app (`--identity`). A client
/// can run only the read commands, so its messages must never tell it to run an owner command
/// (init, add, attach, grant, restore...) or speak of what it was not granted.
enum Audience {
    /// Set while parsing, as soon as `--identity` is seen (VaultOptions.validate).
    nonisolated(unsafe) static var isClient = false
}

extension VaultError {
    /// The hint for a client app: what it can do itself, or that the vault's owner must act.
    var clientHint: String? {
        switch self {
        case .noVault: return "point to the vault file with --vault PATH or RXVAULT_PATH"
        case .ambiguousID: return "give more characters of the id ('rxvault --identity FILE list' shows them)"
        case .notFound: return "'rxvault --identity FILE list' shows the prescriptions shared with this identity"
        case .integrity: return "the vault file was changed outside rxvault or is damaged; tell the vault's owner"
        case .unknownIdentity: return "the vault's owner registers a client by its public key (age1...)"
        case .busy, .ambiguousAttachment: return hint
        default: return nil
        }
    }
}
