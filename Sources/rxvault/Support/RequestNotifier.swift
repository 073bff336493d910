import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `serve --on-request CMD`: tells the owner that a client asked for access, by running their
/// command (`notify-send`, a mail, a chat hook) with `/bin/sh -c`, in the background. The command
/// gets the request's id and the client's name as the owner registered it, in
/// `RXVAULT_REQUEST_ID` and `RXVAULT_REQUEST_CLIENT`; never the reason the client wrote (text
/// from outside, which a careless command line could run), nor anything of a prescription, nor
/// rxvault's own settings (the passphrase file's path is taken out of its environment).
final class RequestNotifier: @unchecked Sendable {
    let command: String
    /// At most this many commands run at once; a burst beyond it is told in the log, not run.
    static let maxRunning = 4
    private let lock = NSLock()
    private var running = 0

    init(command: String) { self.command = command }

    func notify(requestID: String, clientName: String) {
        lock.lock()
        guard running < Self.maxRunning else {
            lock.unlock()
            Terminal.err(
                "rxvault: access request \(requestID.prefix(8)): --on-request not run (\(Self.maxRunning) still running)"
            )
            return
        }
        running += 1
        lock.unlock()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        var environment = ProcessInfo.processInfo.environment
        environment["RXVAULT_PASSPHRASE_FILE"] = nil
        environment["RXVAULT_REQUEST_ID"] = requestID
        environment["RXVAULT_REQUEST_CLIENT"] = clientName
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.terminationHandler = { [weak self] finished in
            if finished.terminationReason != .exit || finished.terminationStatus != 0 {
                Terminal.err(
                    "rxvault: access request \(requestID.prefix(8)): --on-request exited with status \(finished.terminationStatus)"
                )
            }
            self?.finished()
        }
        do { try process.run() } catch {
            Terminal.err("rxvault: access request \(requestID.prefix(8)): cannot run --on-request: \(error)")
            finished()
        }
    }

    private func finished() {
        lock.lock()
        running -= 1
        lock.unlock()
    }
}
