// swift-tools-version:6.0
// libFuzzer targets for rxvault's Swift parsers. Built by scripts/fuzz with
// -sanitize=fuzzer,address and -parse-as-library (libFuzzer provides main).
import PackageDescription

let package = Package(
    name: "rxvault-fuzz",
    dependencies: [.package(name: "rxvault", path: "../..")],
    targets: [
        .executableTarget(name: "FuzzNotation", dependencies: [.product(name: "RxVault", package: "rxvault")]),
        .executableTarget(name: "FuzzImport", dependencies: [.product(name: "RxVault", package: "rxvault")]),
        .executableTarget(name: "FuzzAge", dependencies: [.product(name: "RxVault", package: "rxvault")]),
        .executableTarget(name: "FuzzPolyglot", dependencies: [.product(name: "RxVault", package: "rxvault")]),
    ],
    swiftLanguageModes: [.v6]
)
