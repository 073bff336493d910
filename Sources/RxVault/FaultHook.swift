#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The environment's fault hooks: what lets a test make a crash, a pause or a small batch
/// happen at a chosen moment (docs/reference.md, "Environment"). They are compiled only into
/// debug builds (Package.swift defines `RXVAULT_FAULT_HOOKS` for the debug configuration, which
/// `swift build --build-tests` and the reliability suite use): the release binary users install
/// reads none of them, so no environment can, say, turn the attachment checker's sandbox off.
public enum FaultHook {
    /// Whether this build honours the hooks.
    #if RXVAULT_FAULT_HOOKS
        public static let compiledIn = true
    #else
        public static let compiledIn = false
    #endif

    /// The hook's value, or nil when it is unset or empty, or in a release build.
    public static func value(_ name: String) -> String? {
        guard compiledIn, let raw = getenv(name) else { return nil }
        let text = String(cString: raw)
        return text.isEmpty ? nil : text
    }

    /// The hook's value as a number; nil when unset, not a number, or in a release build.
    static func number<N: FixedWidthInteger>(_ name: String) -> N? {
        value(name).flatMap { N($0) }
    }

    /// `RXVAULT_PARSER_FAULT`: makes the attachment checker fail a chosen way (crash, hang, stall,
    /// create-file:PATH, socket, no-sandbox), to prove the vault survives each.
    public static var parserFault: String? { value("RXVAULT_PARSER_FAULT") }
}
