@testable import ReachConfiguration
@testable import ReachDaemon
@testable import ReachServer
import TestSupport
import XCTest
import FuzzEntryPoints

/// Every seed and every input a fuzz run found (`Fuzz/corpus/TARGET/`,
/// `Fuzz/regressions/TARGET/`), through the entry point `scripts/fuzz TARGET` fuzzes. A
/// crash there fails the whole test run, which is the point: each of these crashed once,
/// or would show one.
final class FuzzInputTests: XCTestCase {
    func testConfigurationInputs() throws {
        for (_, bytes) in try FuzzInputs.inputs(for: "config") {
            ConfigurationFuzzEntryPoint.text(bytes)
        }
    }

    func testVarlinkInputs() throws {
        for (_, bytes) in try FuzzInputs.inputs(for: "varlink") {
            VarlinkFuzzEntryPoint.stream(bytes)
        }
    }

    func testNetworkInputs() throws {
        for (_, bytes) in try FuzzInputs.inputs(for: "network") {
            NetworkFuzzEntryPoint.input(bytes)
        }
    }
}
