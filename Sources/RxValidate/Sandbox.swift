import CRxValidate

/// The sandbox the parser child runs in, besides its resource limits (SECURITY.md, "Attachment
/// checker"). `seccomp`: a system-call filter that leaves the child no sockets, no new processes,
/// no programs and no file changes. `rlimitsOnly`: the kernel refused the filter (or the platform
/// has none), so only the CPU, memory and file-size limits hold; the reason says why.
public enum Sandbox: Sendable, Equatable, CustomStringConvertible {
    case seccomp
    case rlimitsOnly(reason: String)

    /// Enters the seccomp sandbox for the rest of the process's life. Only for the child.
    static func enter() -> Sandbox {
        var message = [CChar](repeating: 0, count: Int(RX_MESSAGE_SIZE))
        if rx_sandbox_enter(&message) == 0 { return .seccomp }
        return .rlimitsOnly(
            reason: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// As `status` and the warnings print it.
    public var description: String {
        switch self {
        case .seccomp: return "seccomp sandbox and resource limits"
        case .rlimitsOnly(let reason): return "resource limits only (no sandbox: \(reason))"
        }
    }

    /// Reads back what the child reported.
    init(reported: String) {
        self =
            reported == Sandbox.seccomp.description
            ? .seccomp
            : .rlimitsOnly(
                reason: reported.hasPrefix("resource limits only (no sandbox: ") && reported.hasSuffix(")")
                    ? String(reported.dropFirst("resource limits only (no sandbox: ".count).dropLast()) : reported)
    }

    public var isSeccomp: Bool { self == .seccomp }
}
