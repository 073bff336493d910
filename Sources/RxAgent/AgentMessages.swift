/// The control messages of the agent protocol (JSON frames; docs/format.md, "Agent protocol").
/// One request per connection, one reply, and for `root-key` then one key frame.
public struct AgentRequest: Codable, Sendable {
    public enum Operation: String, Codable, Sendable {
        /// What the agent holds and until when. Does not count as use (the idle timer goes on).
        case status
        /// The vault's root key, for the file `file` describes.
        case rootKey = "root-key"
        /// Wipe the key and exit.
        case lock
    }

    /// The protocol version; an agent refuses another.
    public var v: Int
    public var op: Operation
    /// `root-key`: the file the CLI is about to open (vault id, device, inode, key wrapping).
    public var file: VaultFileIdentity?

    public static let version = 1

    public init(_ op: Operation, file: VaultFileIdentity? = nil) {
        v = Self.version
        self.op = op
        self.file = file
    }
}

/// The agent's answer. `ok` false: `code` and `message` say why (`locked` when it locked itself).
public struct AgentReply: Codable, Sendable {
    public var ok: Bool
    public var code: String?
    public var message: String?
    public var locked: Bool?
    public var status: AgentStatus?

    public static func refusal(_ code: Code, _ message: String, locked: Bool = false) -> AgentReply {
        AgentReply(ok: false, code: code.rawValue, message: message, locked: locked, status: nil)
    }

    public static func accepted(_ status: AgentStatus) -> AgentReply {
        AgentReply(ok: true, code: nil, message: nil, locked: nil, status: status)
    }

    /// Why an agent says no.
    public enum Code: String, Sendable {
        /// The caller is another user (SO_PEERCRED).
        case permission
        /// The vault file is no longer the one unlocked: the agent locked.
        case fileChanged = "file-changed"
        /// The caller names another file of the same vault (a copy): the agent stays unlocked.
        case otherFile = "other-file"
        /// The agent has locked (its time is up, or it was told to).
        case locked
        /// Not a request of this protocol.
        case badRequest = "bad-request"
    }
}

/// What an agent holds and until when (`status`, `unlock` when one is already running).
public struct AgentStatus: Codable, Sendable, Equatable {
    public var vaultID: String
    /// The vault file as `unlock` named it (absolute).
    public var path: String
    public var pid: Int32
    public var file: VaultFileIdentity
    /// When it locks if not used again: the earlier of `idleUntil` and `lifetimeUntil` (seconds
    /// since 1970).
    public var until: Double
    public var idleUntil: Double
    public var lifetimeUntil: Double
    public var idleTimeoutSeconds: Double
    /// Whether the key's memory is locked against swapping (mlock).
    public var memoryLocked: Bool
}
