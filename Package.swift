// swift-tools-version:6.0
import PackageDescription

// The compiler settings every Swift target builds with (as swift-log does): existentials spelled
// `any`, imports internal unless marked, and a member visible only where its module is imported.
let strictness: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Hush",
    products: [
        .library(name: "Hush", targets: ["Hush"]),
        .executable(name: "hush", targets: ["HushCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // `hush serve`: the HTTP server, its lifecycle, the webhook client and the metrics.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // The live page at `/` of `hush serve`, rendered on the server.
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        // `--state postgres://…`: state shared by several `hush serve` instances (docs/scaling.md).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // `swift package generate-documentation --target Hush` (the DocC catalog in Sources/Hush/Hush.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Debian's Lua 5.4, with a shim for the C macros Swift cannot import.
        .systemLibrary(name: "CLua54", pkgConfig: "lua5.4", providers: [.apt(["liblua5.4-dev"])]),
        // Everything that may raise a Lua error (longjmp) lives in C: no Lua error crosses a Swift frame.
        .target(name: "LuaSandbox", dependencies: ["CLua54"]),
        // A small safe Swift layer over the C API.
        .target(name: "Lua", dependencies: ["CLua54", "LuaSandbox"], swiftSettings: strictness),
        // JSON bytes in and out, without Foundation: the parser and writer every input and output uses.
        .target(name: "HushJSON", swiftSettings: strictness),
        // The domain in plain Swift: envelope, context, decision, pipeline. No Lua.
        .target(name: "HushCore", dependencies: ["HushJSON"], swiftSettings: strictness),
        // Lua policies turned into Swift values; rules run through the sandbox.
        .target(name: "HushPolicy", dependencies: ["HushCore", "HushJSON", "Lua", "CLua54"],
                resources: [.copy("Resources")], swiftSettings: strictness),
        // What Hush remembers between notifications.
        .target(name: "HushState", dependencies: ["HushCore", "HushJSON",
                                                 .product(name: "GRDB", package: "GRDB.swift"),
                                                 .product(name: "GRDBSQLite", package: "GRDB.swift")],
                swiftSettings: strictness),
        // State in PostgreSQL, for several machines: the same behaviour as the other stores.
        .target(name: "HushPostgres", dependencies: ["HushCore", "HushJSON", "HushState",
                                                    .product(name: "PostgresNIO", package: "postgres-nio"),
                                                    .product(name: "NIOCore", package: "swift-nio"),
                                                    .product(name: "NIOPosix", package: "swift-nio"),
                                                    .product(name: "Logging", package: "swift-log")],
                swiftSettings: strictness),
        // The public library: prepare a policy once, evaluate many. The only module embedders import.
        .target(name: "Hush", dependencies: ["HushCore", "HushJSON", "HushPolicy", "HushState", "HushPostgres",
                                            .product(name: "Logging", package: "swift-log")],
                swiftSettings: strictness),
        // `hush serve`: HTTP over the library. Imports only `Hush` of this package.
        .target(name: "HushServer", dependencies: [
            "Hush",
            .product(name: "Hummingbird", package: "hummingbird"),
            // HTTP1Channel, wrapped to add a deadline for request heads (HeadDeadline.swift).
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Mustache", package: "swift-mustache"),
        ], swiftSettings: strictness),
        // Process-wide SQLite settings the `hush` executable makes before opening a file (C: the
        // setting is a variadic call).
        .target(name: "SQLiteSettings", linkerSettings: [.linkedLibrary("sqlite3")]),
        .executableTarget(name: "HushCLI", dependencies: ["Hush", "HushServer", "SQLiteSettings",
                                                        .product(name: "ArgumentParser", package: "swift-argument-parser"),
                                                        .product(name: "Logging", package: "swift-log")],
                          swiftSettings: strictness,
                          // The executable's allocator (Debian's libmimalloc-dev): glibc's malloc
                          // and free were 7% of `hush eval`'s time, more where threads pass objects
                          // to each other (a state file: 18% less wall time). The library leaves
                          // the allocator to the program that embeds it.
                          linkerSettings: [.linkedLibrary("mimalloc", .when(platforms: [.linux]))]),
        // The README's embedding code, word for word, built and run by the tests.
        .executableTarget(name: "EmbeddingExample", dependencies: ["Hush"], path: "Examples/Embedding",
                          swiftSettings: strictness),

        .testTarget(name: "LuaTests", dependencies: ["Lua"], resources: [.copy("Fixtures")], swiftSettings: strictness),
        .testTarget(name: "HushCoreTests", dependencies: ["HushCore", "HushJSON", "HushState"], swiftSettings: strictness),
        .testTarget(name: "HushPolicyTests", dependencies: ["HushPolicy", "HushCore", "HushJSON", "Lua"], swiftSettings: strictness),
        // A private PostgreSQL cluster for the tests that need one (scripts/test-postgres.sh).
        .target(name: "PostgresTestSupport", path: "Tests/PostgresTestSupport", swiftSettings: strictness),
        .testTarget(name: "HushStateTests", dependencies: ["HushState", "HushCore", "HushJSON", "HushPostgres",
                                                          "PostgresTestSupport",
                                                          .product(name: "GRDB", package: "GRDB.swift")],
                    swiftSettings: strictness),
        .testTarget(name: "HushTests", dependencies: ["Hush", "HushCore", "HushJSON", "HushPolicy", "HushState"], swiftSettings: strictness),
        // What an embedder sees: only `import Hush`, only the public API.
        .testTarget(name: "HushAPITests", dependencies: ["Hush"], swiftSettings: strictness),
        .testTarget(name: "EndToEndTests", dependencies: ["HushCLI", "EmbeddingExample"], swiftSettings: strictness),
        // The real `hush serve` on a loopback port, with an HTTP client, an event-stream reader and
        // a webhook receiver of its own.
        .testTarget(name: "ServiceTests", dependencies: [
            "HushCLI",
            // `EventLoopTaskExecutor`, tested on its own.
            "HushServer",
            "PostgresTestSupport",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ], swiftSettings: strictness),
    ],
    swiftLanguageModes: [.v6]
)

// The libFuzzer targets (fuzz/README.md) join the package only when fuzz/run.sh builds them
// (HUSH_FUZZ=1, with sanitizer flags on the command line): same package, so they reach the
// `package` API of the lower modules, and the root package stays free of unsafe flags.
if Context.environment["HUSH_FUZZ"] == "1" {
    package.targets += [
        .target(name: "FuzzSupport", dependencies: ["Hush", "HushCore", "HushJSON", "HushPolicy", "Lua"],
                path: "fuzz/Sources/FuzzSupport"),
        .executableTarget(name: "FuzzEnvelope", dependencies: ["FuzzSupport"], path: "fuzz/Sources/FuzzEnvelope"),
        .executableTarget(name: "FuzzPolicy", dependencies: ["FuzzSupport"], path: "fuzz/Sources/FuzzPolicy"),
        .executableTarget(name: "FuzzLuaBridge", dependencies: ["FuzzSupport"], path: "fuzz/Sources/FuzzLuaBridge"),
        .executableTarget(name: "FuzzService", dependencies: ["FuzzSupport", "HushState"], path: "fuzz/Sources/FuzzService"),
    ]
}
