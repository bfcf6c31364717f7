import CLinux
import Glibc
@testable import ReachConfiguration
import XCTest


/// Every reload leaked about 5.8 KB, all of it TOMLKit's (a table it
/// never freed, a `strdup` or `malloc` for every key list, string, integer and boolean it
/// read). Reading the configuration now frees everything it allocates: 1,000 reads of a
/// 373-byte file, good or bad, leave the heap as they found it (within 64 bytes a read;
/// TOMLKit leaked 6.9 MB here).
final class ConfigurationMemoryTests: XCTestCase {
    /// A configuration like the one the leak was measured with (373 bytes): strings, integers,
    /// booleans, arrays and an array of tables.
    static let text = """
        [log]
        level = "info"

        [interfaces]
        ignore = ["docker*", "veth*", "virbr*"]

        [[interfaces.override]]
        match = "wwan*"
        type = "cellular"
        expensive = true

        [[interfaces.override]]
        match = "wg*"
        constrained = true

        [netlink]
        receive-buffer-size = 8388608

        [probe]
        url = "http://probe.example/gen_204"
        timeout = 5
        families = ["ipv4", "ipv6"]

        [metrics]
        listen = "127.0.0.1:9799"

        """

    /// Bytes the heap holds (`mallinfo2`: in-use blocks, small and mmapped).
    private func heapInUse() -> Int {
        let info = mallinfo2()
        return Int(info.uordblks + info.hblkhd)
    }

    private func growth(reading text: String, times: Int) -> Int {
        for _ in 0..<20 { _ = try? ReachdConfiguration(parsing: text, file: "reachd.toml") }  // warm caches up
        let before = heapInUse()
        for _ in 0..<times { _ = try? ReachdConfiguration(parsing: text, file: "reachd.toml") }
        return heapInUse() - before
    }

    func testReadingTheConfigurationLeaksNothing() throws {
        XCTAssertEqual(Self.text.utf8.count, 373)
        XCTAssertNoThrow(try ReachdConfiguration(parsing: Self.text, file: "reachd.toml"))
        let good = growth(reading: Self.text, times: 1000)
        print("heap growth over 1,000 reads of a good configuration: \(good) bytes")
        XCTAssertLessThan(good, 64 << 10, "0 now; TOMLKit leaked 6.9 MB here")
    }

    func testRefusedConfigurationsLeakNothing() {
        let cases = [
            Self.text + "\n[log]\nlevel = 5\n",            // a syntax error (a table defined twice)
            Self.text.replacing("timeout = 5", with: "timeout = \"5\""),  // a type mismatch
            Self.text + "\n[unknown]\nkey = true\n",         // an unknown table
        ]
        for text in cases {
            XCTAssertThrowsError(try ReachdConfiguration(parsing: text, file: "reachd.toml"))
            let growth = growth(reading: text, times: 1000)
            print("heap growth over 1,000 reads of a refused configuration: \(growth) bytes")
            XCTAssertLessThan(growth, 64 << 10, String(text.suffix(40)))
        }
    }
}
