// swift-tools-version:6.0
// rxvault: an encrypted vault for vision prescriptions.
// Layers (dependencies point down only): rxvault (CLI) -> RxServe (HTTP), RxAgent (unlock once) -> RxVault -> RxModel, RxCrypto, RxStore -> C libraries.
// The CLI also links RxStorePostgres (-> RxStore) and registers it with RxVault (VaultLocation.databaseEngine): RxVault alone links no database client.
import PackageDescription

let package = Package(
    name: "rxvault",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "rxvault", targets: ["rxvault"]),
        .library(name: "RxVault", targets: ["RxVault"]),
        // For client apps: the API's side of a granted app, in Swift (URLSession).
        .library(name: "RxVaultClient", targets: ["RxVaultClient"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        // rxvault serve: the FHIR API for client apps (HTTP/1.1 over a Unix socket or TCP, TLS).
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        // HTTP request and response parts as NIO channel handlers see them (already under Hummingbird).
        .package(url: "https://github.com/apple/swift-nio-extras", exact: "1.35.2"),
        // The vault in PostgreSQL (a practice's several machines): the wire protocol, SCRAM, TLS.
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2")
    ],
    targets: [
        // C libraries from Debian's -dev packages (their traps: DESIGN.md, "Attachments").
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng16", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CPoppler", pkgConfig: "poppler-glib", providers: [.apt(["libpoppler-glib-dev"])]),
        .systemLibrary(name: "CQPDF", pkgConfig: "libqpdf", providers: [.apt(["libqpdf-dev"])]),

        // C side of the attachment validators: libpng (owns setjmp), poppler-glib (pages, render),
        // qpdf (the object walk, in C++: pdfwalk.cpp), the child's seccomp sandbox, and the phone
        // photo converter (photo.c: libjpeg-turbo from libjpeg62-turbo-dev, libheif from libheif-dev).
        // poppler-glib.pc omits gio, which the memory-stream loader needs: link it explicitly.
        .target(
            name: "CRxValidate", dependencies: ["CPNG", "CPoppler", "CQPDF"],
            linkerSettings: [
                .linkedLibrary("png16"), .linkedLibrary("z"), .linkedLibrary("poppler-glib"), .linkedLibrary("gio-2.0"),
                .linkedLibrary("gobject-2.0"), .linkedLibrary("glib-2.0"), .linkedLibrary("cairo"),
                .linkedLibrary("qpdf"), .linkedLibrary("stdc++"),
                .linkedLibrary("jpeg"), .linkedLibrary("heif")
            ]),

        // The agent's system calls Swift cannot reach (SO_PEERCRED, signalfd, posix_spawn with setsid).
        .target(name: "CRxAgent"),
        // No core dumps of any rxvault process (prctl PR_SET_DUMPABLE, RLIMIT_CORE, coredump_filter):
        // called once at the start of `main`, before any command reads a key.
        .target(name: "CRxProcess"),

        // Pure domain: prescriptions, lens specifications, notation, clinical rules. No C, no I/O.
        .target(name: "RxModel"),
        // libsodium wrapper: zeroed secrets, Argon2id, AEAD, sub-keys. Imports nothing of ours.
        .target(name: "RxCrypto", dependencies: ["CSodium"]),
        // SQLite: connection, statements, schema. Holds ciphertext only.
        .target(name: "RxStore", dependencies: ["CSQLite"]),
        // The same tables in a PostgreSQL database (postgres-nio), and libpq's way of finding
        // the server, the login and the password (URL, PG* variables, ~/.pgpass).
        .target(
            name: "RxStorePostgres",
            dependencies: [
                "RxStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log")
            ]),
        // Attachment validators (run in an isolated child process) and the parent side that runs them.
        .target(name: "RxValidate", dependencies: ["CRxValidate"]),
        // A client app's side of `rxvault serve` (docs/api.md): login with the age identity, search, read.
        .target(name: "RxVaultClient", dependencies: ["RxCrypto"]),
        // The service: vault, key hierarchy, prescriptions. Enforces everything the CLI offers.
        // Its fault hooks (FaultHook.swift) are compiled into debug builds only: the release
        // binary ignores RXVAULT_PARSER_FAULT and RXVAULT_TEST_*.
        .target(
            name: "RxVault", dependencies: ["RxModel", "RxCrypto", "RxStore", "RxValidate"],
            swiftSettings: [.define("RXVAULT_FAULT_HOOKS", .when(configuration: .debug))]),
        // `rxvault serve`: the read-only FHIR R4 API, client authentication, access requests.
        // Its OpenAPI document is a JSON file compiled into the code (`PackageResources`), so the
        // one installed binary serves it with no resource bundle beside it.
        .target(
            name: "RxServe",
            dependencies: [
                "RxVault", "RxModel", "RxCrypto",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log")
            ],
            resources: [.embedInCode("Resources/openapi.json")]),
        // Printable copies (`export --format pdf`) and trend charts (`trend --out`): drawn with cairo,
        // linked through poppler-glib.
        .target(name: "RxPrint", dependencies: ["CPoppler", "RxModel"]),
        // The agent that keeps an unlocked vault's root key (`rxvault unlock`): socket, protocol, policy, client.
        .target(name: "RxAgent", dependencies: ["CRxAgent", "RxCrypto", "RxVault"]),
        // Thin executable: arguments, secrets from files/prompts, printing, exit codes.
        .executableTarget(
            name: "rxvault",
            dependencies: [
                "RxVault", "RxModel", "RxServe", "RxAgent", "RxPrint", "RxStorePostgres", "CRxProcess",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log")
            ]),

        // What the test targets share (temporary folders, fixtures, running programs with a
        // deadline, seeded randomness, vaults at a fast KDF): a library only the tests use.
        .target(
            name: "RxTestSupport", dependencies: ["RxVault", "RxModel", "RxCrypto", "RxStore"],
            path: "Tests/RxTestSupport"),
        .testTarget(name: "RxModelTests", dependencies: ["RxModel", "RxTestSupport"]),
        .testTarget(name: "RxCryptoTests", dependencies: ["RxCrypto", "RxTestSupport"]),
        .testTarget(name: "RxStoreTests", dependencies: ["RxStore", "RxStorePostgres", "RxTestSupport"]),
        .testTarget(name: "RxValidateTests", dependencies: ["RxValidate", "CRxValidate", "RxTestSupport"]),
        .testTarget(
            name: "RxVaultTests",
            dependencies: ["RxVault", "RxModel", "RxCrypto", "RxStore", "RxValidate", "RxTestSupport"]),
        .testTarget(
            name: "CLITests",
            dependencies: ["rxvault", "RxVault", "RxStore", "RxCrypto", "RxVaultClient", "RxTestSupport"]),
        .testTarget(name: "RxAgentTests", dependencies: ["RxAgent", "RxVault", "RxCrypto", "RxTestSupport"]),
        // The API in-process (HummingbirdTesting): routes, errors, authorization, on a vault made
        // with RxVault; "rxvault" only so the attachment parser's binary is built.
        .testTarget(
            name: "RxServeTests",
            dependencies: [
                "RxServe", "RxVault", "RxModel", "RxCrypto", "RxStore", "RxValidate", "rxvault", "RxTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras")
            ]),
        // Proves the image and PDF libraries the attachment validators build on link and run here.
        .testTarget(name: "CLibraryTests", dependencies: ["CPNG", "CPoppler"])
    ],
    swiftLanguageModes: [.v6]
)
