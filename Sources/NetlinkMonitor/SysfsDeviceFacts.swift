import Glibc
import ReachabilityCore

/// Reads what netlink does not say about a device from sysfs:
/// `class/net/IF/wireless` or `phy80211` → wireless, `DEVTYPE=` of `class/net/IF/uevent`,
/// and the driver (last component of the `class/net/IF/device/driver` link).
///
/// Missing files are normal (virtual devices, containers, other namespaces' sysfs):
/// they just leave the facts empty.
struct SysfsDeviceFacts {
    /// The sysfs mount point, `/sys` unless a test points elsewhere.
    let root: String

    /// The facts for interface `name`; empty facts for a name that cannot be a path component.
    func facts(for name: String) -> DeviceFacts {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/") else { return DeviceFacts() }
        let base = "\(root)/class/net/\(name)"
        let isWireless = access("\(base)/wireless", F_OK) == 0 || access("\(base)/phy80211", F_OK) == 0
        return DeviceFacts(
            isWireless: isWireless,
            deviceType: Self.deviceType(fromUevent: Self.readFile("\(base)/uevent") ?? ""),
            driver: Self.linkTarget("\(base)/device/driver").flatMap { $0.split(separator: "/").last.map(String.init) }
        )
    }

    /// The value of the `DEVTYPE=` line, if any.
    static func deviceType(fromUevent text: String) -> String? {
        for line in text.split(whereSeparator: { $0 == "\n" }) where line.hasPrefix("DEVTYPE=") {
            let value = line.dropFirst("DEVTYPE=".count)
            return value.isEmpty ? nil : String(value)
        }
        return nil
    }

    /// A small text file's contents (sysfs attributes are at most a page).
    static func readFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A symbolic link's target.
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let count = buffer.withUnsafeMutableBufferPointer { readlink(path, $0.baseAddress!, $0.count - 1) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
