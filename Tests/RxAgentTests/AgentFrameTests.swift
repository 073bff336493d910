import Foundation
import RxCrypto
import Testing

@testable import RxAgent

@Suite struct AgentFrameTests {
    func pair() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        return (fds[0], fds[1])
    }

    @Test func messagesAndKeysRoundTrip() throws {
        let (a, b) = try pair()
        defer {
            close(a)
            close(b)
        }
        let file = VaultFileIdentity(vaultID: "00ff", device: 1, inode: 2, keyWrapping: "ab")
        try AgentFrame.send(AgentRequest(.rootKey, file: file), to: a)
        let request = try AgentFrame.receive(AgentRequest.self, from: b)
        #expect(request.op == .rootKey && request.file == file && request.v == 1)
        let key = SecretBytes(randomCount: 32)
        try AgentFrame.send(key: key, to: b)
        let received = try AgentFrame.receiveKey(from: a)
        #expect(received == key && received.isLocked)
    }

    @Test func framesOfTheWrongKindOrSizeAreRefused() throws {
        let (a, b) = try pair()
        defer {
            close(a)
            close(b)
        }
        // A key where a message is expected, and a message where a key is.
        try AgentFrame.send(key: SecretBytes(randomCount: 32), to: a)
        #expect(throws: AgentError.self) { try AgentFrame.receive(AgentRequest.self, from: b) }
        let (c, d) = try pair()
        defer {
            close(c)
            close(d)
        }
        try AgentFrame.send(AgentRequest(.status), to: c)
        #expect(throws: AgentError.self) { try AgentFrame.receiveKey(from: d) }
        // A length over the limit is refused before anything is allocated.
        let (e, f) = try pair()
        // `e` is closed below, on purpose: closed twice, its number could by then be another
        // test's open file (the suites run side by side in one process).
        defer { close(f) }
        let huge: [UInt8] = [1, 0x7F, 0xFF, 0xFF, 0xFF]
        _ = huge.withUnsafeBytes { write(e, $0.baseAddress, $0.count) }
        #expect(throws: AgentError.self) { try AgentFrame.receive(AgentRequest.self, from: f) }
        // A connection closed early.
        close(e)
        #expect(throws: AgentError.self) { try AgentFrame.receive(AgentRequest.self, from: f) }
    }
}
