import Foundation
import RxTestSupport
import Testing

/// DESIGN.md's architecture block names every layer, and Package.swift builds exactly those:
/// a target added to one and not the other fails here, so the picture a newcomer reads first
/// cannot fall behind the package.
@Suite struct ArchitectureTests {
    static func text(_ relative: String) throws -> String {
        try String(contentsOfFile: Repository.path(relative), encoding: .utf8)
    }

    /// The layers the block under "## Architecture" names: the name starting each line that
    /// starts with one (unindented) or with `->`, a comma-separated list of them allowed, up to
    /// the description (two spaces or " (").
    static func designLayers() throws -> Set<String> {
        let design = try text("DESIGN.md")
        let section = try #require(design.range(of: "## Architecture\n")).upperBound
        let open = try #require(design.range(of: "```\n", range: section..<design.endIndex))
        let close = try #require(design.range(of: "```\n", range: open.upperBound..<design.endIndex))
        var layers: Set<String> = []
        for line in design[open.upperBound..<close.lowerBound].split(separator: "\n") {
            let trimmed = line.drop { $0 == " " }
            let names: Substring
            if trimmed.hasPrefix("->") {
                names = trimmed.dropFirst(2).drop { $0 == " " }
            } else if trimmed.count == line.count {
                names = trimmed
            } else {
                continue // a description's second line
            }
            let end = [names.range(of: "  ")?.lowerBound, names.range(of: " (")?.lowerBound].compactMap { $0 }.min()
            for name in names[..<(end ?? names.endIndex)].split(separator: ",") {
                layers.insert(name.trimmingCharacters(in: .whitespaces))
            }
        }
        return layers
    }

    /// Package.swift's targets but the tests': `.target`, `.executableTarget` and
    /// `.systemLibrary` names, less those whose sources are under `Tests/`. Each declaration is
    /// read to its closing parenthesis (comments left out first), so its settings may nest.
    static func packageTargets() throws -> Set<String> {
        let package = try text("Package.swift").split(separator: "\n")
            .map { line in line.range(of: "//").map { line[..<$0.lowerBound] } ?? line }.joined(separator: "\n")
        var targets: Set<String> = []
        for kind in [".target(", ".executableTarget(", ".systemLibrary("] {
            for found in package.ranges(of: kind) {
                var depth = 1
                var end = found.upperBound
                while depth > 0, end < package.endIndex {
                    if package[end] == "(" { depth += 1 }
                    if package[end] == ")" { depth -= 1 }
                    end = package.index(after: end)
                }
                let declaration = package[found.upperBound..<end]
                guard let name = declaration.firstMatch(of: /name:\s*"([A-Za-z0-9_]+)"/)?.output.1 else {
                    Issue.record("a target without a name: \(declaration.prefix(60))")
                    continue
                }
                if !declaration.contains(#"path: "Tests/"#) { targets.insert(String(name)) }
            }
        }
        return targets
    }

    @Test func designNamesEveryTargetAndNoOther() throws {
        let layers = try Self.designLayers()
        let targets = try Self.packageTargets()
        // Both readings found what they should: the CLI, the library, a C module map.
        #expect(layers.isSuperset(of: ["rxvault", "RxVault", "CSQLite"]) && targets.contains("RxServe"))
        #expect(
            layers.subtracting(targets).isEmpty,
            "in DESIGN.md's architecture, not Package.swift's targets: \(layers.subtracting(targets).sorted())")
        #expect(
            targets.subtracting(layers).isEmpty,
            "in Package.swift's targets, not DESIGN.md's architecture: \(targets.subtracting(layers).sorted())")
        let folders = Set(try FileManager.default.contentsOfDirectory(atPath: Repository.path("Sources")))
        #expect(targets == folders, "targets without a folder under Sources/, or folders without a target")
    }
}
