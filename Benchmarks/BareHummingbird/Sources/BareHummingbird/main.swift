import Foundation
import Hummingbird
import Logging
import NIOCore

// Usage: BareHummingbird PORT FOLDER
// Serves each file FOLDER/VisionPrescription/ID at /VisionPrescription/ID, read once at start,
// with rxvault's content type; anything else is 404. No authentication, no log line, no vault:
// only what Hummingbird itself costs per request.
let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: BareHummingbird PORT FOLDER\n".utf8))
    exit(2)
}
let folder = URL(fileURLWithPath: arguments[2]).appendingPathComponent("VisionPrescription")
var bodies: [String: ByteBuffer] = [:]
for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
    bodies[name] = ByteBuffer(bytes: try Data(contentsOf: folder.appendingPathComponent(name)))
}
let served = bodies
let router = Router()
router.get("VisionPrescription/:id") { _, context -> Response in
    guard let id = context.parameters.get("id"), let body = served[id] else { return Response(status: .notFound) }
    return Response(
        status: .ok, headers: [.contentType: "application/fhir+json; charset=utf-8"], body: .init(byteBuffer: body))
}
var logger = Logger(label: "bare-hummingbird")
logger.logLevel = .warning
let app = Application(
    router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
print("serving \(served.count) bodies on 127.0.0.1:\(port)")
try await app.runService()
