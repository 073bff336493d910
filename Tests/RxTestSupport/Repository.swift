import Foundation

/// Where the repository's files are, for tests that read its fixtures, examples or documents.
/// Found from this file's path: the tests run from the clone they were built in.
public enum Repository {
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A file of the repository, by its path from the root (`"examples/systemd"`).
    public static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// A file under `Fixtures/` (`"attachments/valid/png-1x1.png"`).
    public static func fixture(_ relative: String) -> String { path("Fixtures/" + relative) }

    /// The Python with fhir.resources that `scripts/setup` installs (or `$RXVAULT_FHIR_PYTHON`).
    public static var fhirPython: String {
        ProcessInfo.processInfo.environment["RXVAULT_FHIR_PYTHON"] ?? path(".build/python/bin/python3")
    }
}
