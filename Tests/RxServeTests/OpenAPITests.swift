import Foundation
import Hummingbird
import RxTestSupport
import Testing

@testable import RxServe

/// The API's OpenAPI document: the server sends the resource file byte for byte (it is compiled
/// in: Package.swift's `.embedInCode`), and it names exactly the routes the router has (CI also
/// runs schemathesis against a live server: ServeTests).
@Suite struct OpenAPITests {
    static func documentPaths(_ json: [String: Any]) -> Set<String> {
        let paths = json["paths"] as? [String: [String: Any]] ?? [:]
        return Set(paths.flatMap { path, operations in operations.keys.map { "\($0.uppercased()) \(path)" } })
    }

    @Test func theServedDocumentIsTheResourceFileAndNamesEveryRoute() async throws {
        let file = try String(
            contentsOfFile: Repository.path("Sources/RxServe/Resources/openapi.json"), encoding: .utf8)
        let vault = try ServedVault()
        let served = try await vault.serve { api in try await api.get("/openapi.json") }
        #expect(served.status == .ok && served.contentType == "application/json")
        #expect(served.text == file, "Sources/RxServe/Resources/openapi.json and the served document differ")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(file.utf8)) as? [String: Any])
        #expect(document["openapi"] as? String == "3.0.3")

        let api = try ServeAPI(
            vault: try vault.owner.anotherConnection(busyTimeoutMilliseconds: 5000), settings: ServedVault.settings,
            logger: ServedVault.quiet)
        let routes = Set(
            api.router().routes.map { route -> String in
                let path = "\(route.path)".split(separator: "/").map { part in
                    part.hasPrefix(":") ? "{\(part.dropFirst())}" : String(part)
                }
                return "\(route.method.rawValue) /" + path.joined(separator: "/")
            })
        #expect(routes == Self.documentPaths(document), "routes: \(routes.sorted())")
    }
}
