// swift-tools-version:6.0
// libFuzzer targets for Hush (see README.md). A separate package so the root package stays free of
// unsafe flags; the sanitizer flags are given on the command line (fuzz/run.sh).
import PackageDescription

let package = Package(
    name: "HushFuzz",
    dependencies: [
        .package(name: "Hush", path: ".."),
    ],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "Hush", package: "Hush")]),
        .executableTarget(name: "FuzzEnvelope", dependencies: ["FuzzSupport"]),
        .executableTarget(name: "FuzzPolicy", dependencies: ["FuzzSupport"]),
        .executableTarget(name: "FuzzLuaBridge", dependencies: ["FuzzSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
