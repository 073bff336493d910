import RxVault
import Testing

/// Records an issue unless `body` throws `VaultError.integrity` whose message mentions every
/// one of `words`: what an attacker's change to the file must end in.
public func expectIntegrity(
    _ what: String = "tampered data", mentioning words: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record("\(what): accepted", sourceLocation: sourceLocation)
    } catch let error as VaultError {
        guard case .integrity(let message) = error else {
            Issue.record("\(what): expected an integrity error, got \(error)", sourceLocation: sourceLocation)
            return
        }
        for word in words where !message.contains(word) {
            Issue.record("\(what): '\(message)' does not mention '\(word)'", sourceLocation: sourceLocation)
        }
    } catch {
        Issue.record("\(what): unexpected \(error)", sourceLocation: sourceLocation)
    }
}
