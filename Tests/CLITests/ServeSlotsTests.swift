import Foundation
import RxTestSupport
import Testing

/// `rxvault serve` over TCP shares its 64 connection slots fairly (docs/api.md, "Limits";
/// issue 50: 64 slow connections from four addresses left every real client unanswered).
@Suite struct ServeSlotsTests {
    /// 64 slow connections, 16 from each of 127.0.0.2 to 127.0.0.5, each sending a request
    /// head a few bytes at a time (a slow-loris client) and so holding every slot; then the
    /// shop, from 127.0.0.1, logs in (a challenge, a token: two connections) and reads its
    /// prescription, all answered at once, not after the 30 s idle timeout. Each of its
    /// connections takes an idle stranger's slot; the strangers' sources, now over their share
    /// (64 / 5), get no new connection.
    @Test func aClientIsAnsweredWhileFourAddressesHoldEverySlot() throws {
        let (cli, _, _, shop, _) = try ServeTests().household()
        let port = freeLoopbackPort()
        let server = try ServerProcess(cli, arguments: ["--listen", "127.0.0.1:\(port)"])
        defer { server.stop() }
        let holder = try cli.write(
            #"""
            import socket, sys, time
            port, held = int(sys.argv[1]), []
            for n in range(2, 6):
                for _ in range(16):
                    s = socket.socket(); s.bind((f"127.0.0.{n}", 0)); s.settimeout(5)
                    s.connect(("127.0.0.1", port)); held.append(s)
            def open_ones():
                alive = 0
                for s in held:
                    s.setblocking(False)
                    try:
                        alive += s.recv(1) != b""
                    except BlockingIOError:
                        alive += 1
                    except OSError:
                        pass
                return alive
            for s in held:
                s.setblocking(False)
                try: s.send(b"GET /metadata HTTP/1.1\r\n")
                except OSError: pass
            time.sleep(0.5)
            print("held", open_ones(), flush=True)
            sys.stdin.readline()
            s = socket.socket(); s.bind(("127.0.0.2", 0)); s.settimeout(5)
            try:
                s.connect(("127.0.0.1", port)); s.settimeout(3); refused = s.recv(1) == b""
            except OSError:
                refused = True
            print("after", open_ones(), "refused" if refused else "admitted", flush=True)
            """#, to: "holder.py")
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments = [holder, String(port)]
        let input = Pipe()
        let output = Pipe()
        python.standardInput = input
        python.standardOutput = output
        python.standardError = FileHandle.nullDevice
        try python.run()
        defer {
            if python.isRunning { python.terminate() }
            python.waitUntilExit()
        }
        func line() -> String {
            var bytes: [UInt8] = []
            while let byte = try? output.fileHandleForReading.read(upToCount: 1), let b = byte.first, b != 10 {
                bytes.append(b)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        let held = line()
        #expect(held == "held 64", "every slot is held by the four addresses: \(held)")

        let url = "http://127.0.0.1:\(port)"
        let start = Date()
        let token = try server.token(identity: shop, url: url)
        let read = try server.curl("GET", "/VisionPrescription", token: token, url: url)
        let seconds = Date().timeIntervalSince(start)
        #expect(read.status == 200 && (read.json["entry"] as? [Any])?.count == 1, "\(read.body)")
        #expect(seconds < 8, "answered in \(seconds) s, not after the idle timeout")

        input.fileHandleForWriting.write(Data("go\n".utf8))
        let after = line().split(separator: " ")
        #expect(after.count == 3 && after.last == "refused", "\(after)")
        if after.count == 3, let left = Int(after[1]) {
            // The client's three connections each took one stranger's slot.
            #expect((61...63).contains(left), "strangers' connections left: \(left)")
        }
    }
}
