/// The API as an OpenAPI 3 document, served at `GET /openapi.json`: the resource file
/// Sources/RxServe/Resources/openapi.json, edited by hand. It is embedded in the code at build
/// time (Package.swift: `.embedInCode`, SwiftPM's `PackageResources`), not copied as a resource
/// bundle beside the binary: `scripts/install` installs one statically linked file, and a
/// `Bundle.module` looked up at run time would be missing there. RxServeTests/OpenAPITests
/// checks that the served document is that file and names exactly the router's routes; CI also
/// checks the server against it with schemathesis (CLITests/ServeTests).
enum OpenAPIDocument {
    static let text = String(decoding: PackageResources.openapi_json, as: UTF8.self)
}
