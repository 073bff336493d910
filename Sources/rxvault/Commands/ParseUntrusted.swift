import ArgumentParser
import Foundation
import RxModel
import RxValidate
import RxVault

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension RxVaultCommand {
    /// The isolated child that parses untrusted files (see RxValidate.ParserChild). Not for people.
    struct ParseUntrusted: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "_parse-untrusted", shouldDisplay: false)

        @Option var mode: String
        @Option var limits: String
        @Option var previewWidth: UInt32
        @Option var cpuSeconds: Int
        @Option var memoryBytes: Int

        func run() throws {
            try CommandRunner.run {
                guard let mode = ParserChild.Mode(rawValue: mode) else {
                    throw CLIError(
                        .usage,
                        "_parse-untrusted: --mode '\(mode)' is not one of \(ParserChild.Mode.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                guard let limits = try? JSONDecoder().decode(ValidationLimits.self, from: Data(limits.utf8)) else {
                    throw CLIError(.usage, "_parse-untrusted: --limits is not the limits' JSON")
                }
                // Never a trap: a negative or absurd limit is refused before it is applied.
                if let problem = ParserChild.argumentProblem(
                    limits: limits, previewWidth: previewWidth, cpuSeconds: cpuSeconds,
                    memoryBytes: memoryBytes)
                {
                    throw CLIError(
                        .usage, "_parse-untrusted: \(problem)",
                        hint: "this command is run by rxvault itself, not by people")
                }
                ParserChild.run(
                    mode: mode, limits: limits, previewWidth: previewWidth, cpuSeconds: cpuSeconds,
                    memoryBytes: memoryBytes, faultForTests: FaultHook.parserFault)
            }
        }
    }
}
