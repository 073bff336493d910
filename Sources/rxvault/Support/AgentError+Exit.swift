import ArgumentParser
import Foundation
import RxAgent
import RxCrypto
import RxVault

extension AgentError {
    var exitStatus: ExitStatus {
        switch self {
        case .unsafeDirectory: return .wrongPassphrase
        case .socketPathTooLong: return .usage
        case .alreadyRunning: return .busy
        case .refused, .system, .protocolError: return .failure
        }
    }
}
