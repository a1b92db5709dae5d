// swift-tools-version:6.0
import PackageDescription

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
    ],
    targets: [
        // Debian's Lua 5.4, with a shim for the C macros Swift cannot import.
        .systemLibrary(name: "CLua54", pkgConfig: "lua5.4", providers: [.apt(["liblua5.4-dev"])]),
        // Everything that may raise a Lua error (longjmp) lives in C: no Lua error crosses a Swift frame.
        .target(name: "LuaSandbox", dependencies: ["CLua54"]),
        // A small safe Swift layer over the C API.
        .target(name: "Lua", dependencies: ["CLua54", "LuaSandbox"]),
        // The domain in plain Swift: envelope, context, decision, pipeline. No Lua.
        .target(name: "HushCore"),
        // Lua policies turned into Swift values; rules run through the sandbox.
        .target(name: "HushPolicy", dependencies: ["HushCore", "Lua", "CLua54"], resources: [.copy("Resources")]),
        // What Hush remembers between notifications.
        .target(name: "HushState", dependencies: ["HushCore", .product(name: "GRDB", package: "GRDB.swift"),
                                                 .product(name: "GRDBSQLite", package: "GRDB.swift")]),
        // The public facade: prepare a policy once, evaluate many.
        .target(name: "Hush", dependencies: ["HushCore", "HushPolicy", "HushState", .product(name: "Logging", package: "swift-log")]),
        .executableTarget(name: "HushCLI", dependencies: ["Hush", .product(name: "ArgumentParser", package: "swift-argument-parser")]),

        .testTarget(name: "LuaTests", dependencies: ["Lua"], resources: [.copy("Fixtures")]),
        .testTarget(name: "HushCoreTests", dependencies: ["HushCore", "HushState"]),
        .testTarget(name: "HushPolicyTests", dependencies: ["HushPolicy", "HushCore", "Lua"]),
        .testTarget(name: "HushStateTests", dependencies: ["HushState", "HushCore", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "HushTests", dependencies: ["Hush", "HushCore"]),
        .testTarget(name: "EndToEndTests", dependencies: ["HushCLI"]),
    ],
    swiftLanguageModes: [.v6]
)
