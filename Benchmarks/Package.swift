// swift-tools-version:6.0
// The project's benchmark (scripts/bench.sh runs it): a package of its own, depending on the root
// one by path, so that the `hush` product and the unit tests carry no benchmark code. It uses only
// the public API of the Hush library.
import PackageDescription

let package = Package(
    name: "HushBenchmarks",
    products: [
        .executable(name: "hush-benchmark", targets: ["HushBenchmark"]),
    ],
    dependencies: [
        .package(name: "Hush", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .executableTarget(name: "HushBenchmark", dependencies: [
            .product(name: "Hush", package: "Hush"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
