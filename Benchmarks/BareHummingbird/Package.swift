// swift-tools-version:6.0
// A bare Hummingbird server for Benchmarks/api-read.sh: the same Hummingbird version as rxvault,
// one route answering GET /VisionPrescription/{id} with bytes held in memory. What it reaches is
// the ceiling rxvault's API can approach on Hummingbird; nginx is the ceiling of the machine.
import PackageDescription

let package = Package(
    name: "BareHummingbird",
    dependencies: [.package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1")],
    targets: [
        .executableTarget(
            name: "BareHummingbird", dependencies: [.product(name: "Hummingbird", package: "hummingbird")])
    ],
    swiftLanguageModes: [.v6]
)
