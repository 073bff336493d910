import RxVault

/// What an import says of the rules' advisories for what it stored. An import of a practice's
/// file can carry tens of thousands (every soft toric axis off the 10-degree step, every contact
/// lens prescription without the Contact Lens Rule's fields): listing them all buries the
/// summary and anything else said. So the first `shown` are listed, as a refused import lists
/// its first 20 problems, and one line says how many more there are and how to list them all.
enum ImportWarnings {
    static let shown = 20

    /// The lines to say (each after "rxvault: warning: "): every warning when `all`, else the
    /// first `shown` and a count of the rest.
    static func lines(_ warnings: [Vault.ImportWarning], all: Bool) -> [String] {
        guard !all, warnings.count > shown else { return warnings.map(\.line) }
        let listed = warnings.prefix(shown)
        let rest = warnings.dropFirst(shown)
        // Items the listed warnings already named are not counted again.
        let named = Set(listed.map(\.position))
        let more = Set(rest.map(\.position)).subtracting(named).count
        let on = more == 0 ? "" : " (on \(counted(more, "more prescription")))"
        return listed.map(\.line) + [
            "... and \(counted(rest.count, "more warning"))\(on); --all-warnings lists every one"
        ]
    }
}
