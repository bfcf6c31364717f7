// swift-tools-version:6.0
import PackageDescription

// The products the targets depend on, each named once.
let system: Target.Dependency = .product(name: "SystemPackage", package: "swift-system")
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")
let nioEmbedded: Target.Dependency = .product(name: "NIOEmbedded", package: "swift-nio")
let nioConcurrencyHelpers: Target.Dependency = .product(name: "NIOConcurrencyHelpers", package: "swift-nio")
let nioHTTP1: Target.Dependency = .product(name: "NIOHTTP1", package: "swift-nio")
let nioPosix: Target.Dependency = .product(name: "NIOPosix", package: "swift-nio")
let nioSSL: Target.Dependency = .product(name: "NIOSSL", package: "swift-nio-ssl")
let x509: Target.Dependency = .product(name: "X509", package: "swift-certificates")
let asn1: Target.Dependency = .product(name: "SwiftASN1", package: "swift-asn1")
let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
let prometheus: Target.Dependency = .product(name: "Prometheus", package: "swift-prometheus")
let toml: Target.Dependency = .product(name: "TOMLKit", package: "TOMLKit")
let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")

let package = Package(
    name: "reachd",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "reachd", targets: ["reachd"]),
        .executable(name: "reachctl", targets: ["reachctl-entry"]),
        // The one library: what it makes public is docs/client-api.md's list (PublicSurfaceTests).
        .library(name: "ReachClient", targets: ["ReachClient"]),
    ],
    // Each minimum is the first release with an API used here (checked against the tags).
    dependencies: [
        // @ParentCommand: 1.7.0.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.7.0"),
        // LogHandler.log(event:) 1.11.0; LogEvent.error 1.12.0.
        .package(url: "https://github.com/apple/swift-log", from: "1.12.0"),
        // EventLoopFuture.assumeIsolated() public in 2.78.0; NIOLoopBoundBox.makeBoxSendingValue 2.68.0.
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        // NIOSSLContext Sendable (one context shared by every probe): 2.22.0.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.22.0"),
        // Verifier.validate(leaf:intermediates:) and CertificateValidationResult: 1.14.0;
        // RFC5280Policy(fixedExpiryValidationTime:): 1.15.0.
        .package(url: "https://github.com/apple/swift-certificates", from: "1.15.0"),
        // PEMDocument.parseMultiple (a PEM file of several certificates), DER.parse: 1.0.0.
        .package(url: "https://github.com/apple/swift-asn1", from: "1.0.0"),
        // 4.5.2 imports FoundationEssentials where 3.x imported Foundation, which linked all of
        // Foundation and ICU into reachd (SHA256 and P256 themselves are older).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // PrometheusCollectorRegistry with help texts, emitToString: 2.4.0 (the text format is its job, not ours).
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
        // Stat and FileDescriptor.stat(): 1.7.0.
        .package(url: "https://github.com/apple/swift-system", from: "1.7.0"),
        // `swift package generate-documentation` (ReachClient's DocC catalogue): 1.5.0.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // CTOML, its C shim over toml++ (ReachConfiguration/TOMLDocument.swift reads through it): 0.6.0.
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        // C libraries, reached through pkg-config.
        .systemLibrary(
            name: "CNetlink",
            pkgConfig: "libnl-route-3.0",
            providers: [.apt(["libnl-3-dev", "libnl-route-3-dev", "libnl-genl-3-dev"])]
        ),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),

        // Header-only: Linux calls Swift's Glibc module leaves out (signalfd, eventfd).
        .systemLibrary(name: "CLinux"),

        // The typed edge for the Linux calls swift-system does not wrap; errno is read here only.
        .target(
            name: "LinuxSystem",
            dependencies: ["CLinux", system]
        ),

        // Pure logic: no C, no IO.
        .target(name: "ReachabilityCore"),

        // The only module that talks to the kernel.
        .target(
            name: "NetlinkMonitor",
            dependencies: [
                "CNetlink", "LinuxSystem", "ReachabilityCore",
                system,
            ]
        ),

        // Wire types, the Varlink framer and the blocking connection shared by daemon,
        // client and tests. The IDL is embedded in the code, not copied into a resource
        // bundle: reachd is installed as a single binary and must never fail to find the text it serves.
        .target(
            name: "ReachProtocol",
            dependencies: [
                "LinuxSystem", "ReachabilityCore",
                system, nioCore,
            ],
            resources: [.embedInCode("io.reachd.Reachability.varlink")]
        ),

        // What reachd says to the service manager and the journal: sd_notify, socket
        // activation, the log handler and its journal fields, the log rate limit.
        .target(
            name: "ReachSystemd",
            dependencies: [
                "CSystemd", "LinuxSystem", "ReachabilityCore",
                system, logging,
            ]
        ),
        // The configuration file: its schema, TOML decoding and the errors it reports.
        .target(
            name: "ReachConfiguration",
            dependencies: [
                "LinuxSystem", "ReachabilityCore",
                // TOMLKit's C shim, CTOML, is imported too; it is no product, so this product brings it.
                system, logging, toml,
            ]
        ),
        // Targets and blocking work: every blocking call on a thread of its own, fairly per uid
        // (BlockingWork); names resolved (getaddrinfo or systemd-resolved); CheckTarget's answers
        // and SubscribeTarget's streams; the one way to ask the engine (EngineRequests).
        .target(
            name: "ReachTargets",
            dependencies: [
                "CLinux", "LinuxSystem", "ReachabilityCore", "ReachProtocol",
                system, nioCore,
            ]
        ),
        // Connectivity probes, captive-portal APIs and networkd's portals, HTTPS trust.
        .target(
            name: "ReachConnectivity",
            dependencies: [
                "LinuxSystem", "ReachabilityCore", "ReachProtocol", "ReachConfiguration", "ReachSystemd", "ReachTargets",
                system, logging, nioCore, nioHTTP1, nioPosix, nioSSL, x509, asn1, crypto,
            ]
        ),
        // The Prometheus exposition, its HTTP endpoint and textfile.
        .target(
            name: "ReachMetrics",
            dependencies: [
                "LinuxSystem", "ReachabilityCore", "ReachProtocol", "ReachConfiguration",
                system, nioCore, nioHTTP1, nioPosix, prometheus,
            ]
        ),
        // The Varlink server on its event loop: listener, connections, publication,
        // subscribers, the limits every client is held to.
        .target(
            name: "ReachServer",
            dependencies: [
                "LinuxSystem", "ReachabilityCore", "ReachProtocol", "ReachSystemd", "ReachTargets",
                "ReachConnectivity", "ReachMetrics", "ReachConfiguration",
                system, logging, nioCore, nioPosix,
            ]
        ),
        // The daemon: the engine (kernel view, signals, mailbox) and the wiring of the rest.
        .target(
            name: "ReachDaemon",
            dependencies: [
                "LinuxSystem", "NetlinkMonitor", "ReachabilityCore", "ReachProtocol", "ReachSystemd",
                "ReachConfiguration", "ReachTargets", "ReachConnectivity", "ReachMetrics", "ReachServer",
                system, logging, nioCore, nioHTTP1, nioPosix,
            ]
        ),
        // The fuzz targets' entry points, which the regression tests feed their seeds too; and
        // EmbeddedExchange, one probe over NIO's EmbeddedChannel. Nothing that ships links it.
        .target(
            name: "FuzzEntryPoints",
            dependencies: [
                "CNetlink", "NetlinkMonitor", "ReachabilityCore", "ReachProtocol", "ReachConfiguration",
                "ReachConnectivity", "ReachServer", "ReachDaemon",
                nioCore, nioEmbedded, nioHTTP1,
            ],
            path: "Fuzz/Sources/FuzzEntryPoints"
        ),
        .target(
            name: "ReachClient",
            dependencies: [
                "LinuxSystem", "ReachabilityCore", "ReachProtocol",
                system, nioCore, nioPosix,
            ]
        ),
        // One multi-call binary: called as `reachctl` (the package's /usr/bin/reachctl links
        // to it) it runs reachctl's commands, so the runtime, NIO and BoringSSL ship once.
        .executableTarget(
            name: "reachd",
            dependencies: [
                "LinuxSystem", "ReachDaemon", "ReachConfiguration", "ReachSystemd", "ReachServer", "ReachConnectivity",
                "ReachProtocol", "reachctl", "ReachNetworkManagerBus",
                argumentParser, logging,
            ]
        ),
        // reachd-nm's decisions: reachd's path as NetworkManager's state, its object tree, and
        // the answer to each call on its bus name (pure, like ReachDispatch).
        .target(name: "ReachNetworkManager", dependencies: ["ReachabilityCore"]),
        // reachd-nm's IO: the bus name and its calls through sd-bus, reachd's stream, one poll loop.
        .target(
            name: "ReachNetworkManagerBus",
            dependencies: [
                "CSystemd", "LinuxSystem", "ReachNetworkManager", "ReachProtocol", "ReachSystemd", "ReachabilityCore",
                system, logging, nioCore,
            ]
        ),
        // `reachctl dispatch`'s decisions: which hooks run, with what environment, when.
        .target(name: "ReachDispatch", dependencies: ["ReachabilityCore", "ReachProtocol"]),
        // reachctl's commands, a library: `reachctl-entry` is reachctl on its own (`swift run
        // reachctl`, the tests), and reachd runs them when called as reachctl.
        .target(
            name: "reachctl",
            dependencies: [
                "LinuxSystem", "ReachabilityCore", "ReachClient", "ReachProtocol", "ReachDispatch",
                argumentParser, system,
            ]
        ),
        .executableTarget(name: "reachctl-entry", dependencies: ["reachctl"], path: "Sources/reachctl-entry"),

        // Two small apps ported from Apple platforms, built with everything else so they
        // never rot; the integration tests run them against a real reachd.
        .executableTarget(name: "path-watch", dependencies: ["ReachClient"], path: "Examples/PathWatch"),
        .executableTarget(name: "host-reachability", dependencies: ["ReachClient"], path: "Examples/HostReachability"),

        // What the test targets share: fixtures, test helpers over the Varlink connection, namespaces, processes.
        .target(
            name: "TestSupport",
            dependencies: [
                "ReachDaemon", "ReachServer", "ReachSystemd", "ReachConfiguration", "ReachConnectivity", "ReachProtocol", "ReachabilityCore", "LinuxSystem",
                "ReachMetrics", "ReachTargets",
                logging, x509, asn1, crypto, nioCore, nioPosix, system,
            ],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "ReachabilityCoreTests", dependencies: ["ReachabilityCore"]),
        .testTarget(
            name: "NetlinkMonitorTests",
            dependencies: ["CNetlink", "FuzzEntryPoints", "LinuxSystem", "NetlinkMonitor", "ReachabilityCore", "TestSupport", system]
        ),
        .testTarget(
            name: "ReachProtocolTests",
            dependencies: [
                "LinuxSystem", "ReachProtocol", "ReachabilityCore",
                nioCore, system,
            ]
        ),
        .testTarget(name: "ReachSystemdTests", dependencies: ["ReachSystemd", "ReachabilityCore", logging]),
        .testTarget(
            name: "ReachConfigurationTests",
            dependencies: [
                "CLinux", "LinuxSystem", "ReachabilityCore", "ReachProtocol", "TestSupport", "ReachConfiguration", "ReachSystemd",
                logging, system,
            ]
        ),
        .testTarget(
            name: "ReachTargetsTests",
            dependencies: [
                "CLinux", "LinuxSystem", "ReachabilityCore", "ReachProtocol", "TestSupport", "ReachTargets",
                nioCore, nioConcurrencyHelpers, nioPosix, system,
            ]
        ),
        .testTarget(
            name: "ReachConnectivityTests",
            dependencies: [
                "FuzzEntryPoints", "LinuxSystem", "ReachabilityCore", "ReachProtocol", "TestSupport", "ReachConnectivity", "ReachConfiguration", "ReachTargets", "ReachSystemd",
                logging, nioCore, nioEmbedded, nioHTTP1, nioPosix, nioSSL, x509, asn1, crypto, system,
            ]
        ),
        .testTarget(
            name: "ReachMetricsTests",
            dependencies: [
                "LinuxSystem", "ReachabilityCore", "ReachProtocol", "TestSupport", "ReachMetrics", "ReachConfiguration", "ReachSystemd",
                nioCore, nioPosix, nioHTTP1, logging,
            ]
        ),
        .testTarget(
            name: "ReachServerTests",
            dependencies: [
                "LinuxSystem", "ReachabilityCore", "ReachProtocol", "TestSupport", "ReachServer", "ReachSystemd", "ReachConfiguration", "ReachConnectivity", "ReachTargets", "ReachMetrics",
                logging, nioCore, nioEmbedded, nioPosix, system,
            ]
        ),
        .testTarget(
            name: "ReachDaemonTests",
            dependencies: [
                "FuzzEntryPoints", "LinuxSystem", "ReachabilityCore", "ReachProtocol", "TestSupport", "NetlinkMonitor", "ReachDaemon", "ReachServer", "ReachSystemd", "ReachConfiguration", "ReachConnectivity", "ReachTargets", "ReachMetrics",
                logging, nioCore, nioEmbedded, nioHTTP1, nioPosix, nioSSL, x509, asn1, crypto, system,
            ]
        ),
        .testTarget(
            name: "ReachClientTests",
            dependencies: [
                "LinuxSystem", "ReachClient", "ReachServer", "ReachProtocol", "ReachabilityCore", "TestSupport", "ReachConfiguration",
                nioCore, system, nioPosix,
            ]
        ),
        .testTarget(name: "ReachNetworkManagerTests", dependencies: ["ReachNetworkManager", "ReachabilityCore"]),
        .testTarget(name: "ReachDispatchTests", dependencies: ["ReachDispatch", "ReachProtocol", "ReachabilityCore"]),
        // Runs systemd-analyze, make install and the built reachd / reachctl.
        .testTarget(name: "SystemdUnitTests", dependencies: ["ReachProtocol", "TestSupport"]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "LinuxSystem", "ReachClient", "ReachProtocol", "ReachabilityCore", "TestSupport",
                // SleepInhibitorTests runs a SleepSource on a loop of its own.
                "ReachConnectivity", logging, nioCore, nioPosix,
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// What ships sees only the members of modules it imports itself. Without this, one
// dependency's `import Foundation` (TOMLKit's) made Foundation's String overloads
// (`contains`, `range(of:)`) win over the standard library's in files that import only
// FoundationEssentials, and that linked all of Foundation and ICU into reachd (figures in
// docs/performance.md, "Building and packaging").
for target in package.targets where target.type == .regular || target.type == .executable {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
}

// Fuzz targets, for `scripts/fuzz` only: it sets REACHD_FUZZ and builds them in .build-fuzz
// with `--sanitize fuzzer --sanitize address`. Each is one `LLVMFuzzerTestOneInput` (no
// `main`: libFuzzer's) calling an entry point the regression tests call too
// (the `FuzzEntryPoints` target). Without REACHD_FUZZ they do
// not exist, so a normal `swift build` / `swift test` neither builds nor links them.
if Context.environment["REACHD_FUZZ"] != nil {
    package.targets += [
        .executableTarget(name: "fuzz-config", dependencies: ["FuzzEntryPoints"], path: "Fuzz/Sources/fuzz-config"),
        .executableTarget(name: "fuzz-varlink", dependencies: ["FuzzEntryPoints"], path: "Fuzz/Sources/fuzz-varlink"),
        .executableTarget(name: "fuzz-netlink", dependencies: ["FuzzEntryPoints"], path: "Fuzz/Sources/fuzz-netlink"),
        .executableTarget(name: "fuzz-network", dependencies: ["FuzzEntryPoints"], path: "Fuzz/Sources/fuzz-network"),
    ]
}

// One socket read judged with and without the link-quality estimate, for `scripts/bench-quality`
// only (it sets REACHD_BENCH and builds in .build-bench).
if Context.environment["REACHD_BENCH"] != nil {
    package.targets += [
        .executableTarget(name: "bench-socket-reads", dependencies: ["NetlinkMonitor", "ReachabilityCore"], path: "Tools/bench-socket-reads"),
    ]
}

// C2SP/x509-limbo's server cases against the trust evaluation, for `scripts/x509-limbo` only
// (it sets REACHD_LIMBO and builds in .build-limbo); limbo.json is fetched, never committed.
if Context.environment["REACHD_LIMBO"] != nil {
    package.targets += [
        .executableTarget(
            name: "x509-limbo", dependencies: ["ReachConnectivity", "ReachConfiguration", x509],
            path: "Tools/x509-limbo"
        ),
    ]
}
