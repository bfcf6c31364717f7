import LinuxSystem
import ReachabilityCore

/// Reads what netlink does not say about a device from sysfs:
/// `class/net/IF/wireless` or `phy80211` → wireless, `DEVTYPE=` of `class/net/IF/uevent`,
/// the driver (last component of the `class/net/IF/device/driver` link), and for a USB
/// network interface its USB device's vendor (`class/net/IF/device/../idVendor`).
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
        let uevent = (try? FileSystem.contents(of: "\(base)/uevent", limit: 64 << 10)).map { String(decoding: $0, as: UTF8.self) }
        let driver = try? FileSystem.symbolicLinkTarget(of: "\(base)/device/driver")
        // `device` is the USB interface; its parent directory is the USB device.
        let vendor = (try? FileSystem.contents(of: "\(base)/device/../idVendor", limit: 16)).flatMap(Self.usbVendor(fromIDVendor:))
        return DeviceFacts(
            isWireless: FileSystem.exists("\(base)/wireless") || FileSystem.exists("\(base)/phy80211"),
            deviceType: Self.deviceType(fromUevent: uevent ?? ""),
            driver: driver.map(FileSystem.name(of:)),
            usbVendor: vendor
        )
    }

    /// `idVendor`'s four hex digits (and a newline), as a number.
    static func usbVendor(fromIDVendor bytes: [UInt8]) -> UInt16? {
        let digits = bytes.last == UInt8(ascii: "\n") ? bytes.dropLast() : bytes[...]
        guard digits.count == 4 else { return nil }
        return UInt16(String(decoding: digits, as: UTF8.self), radix: 16)
    }

    /// The value of the `DEVTYPE=` line, if any.
    static func deviceType(fromUevent text: String) -> String? {
        for line in text.split(whereSeparator: { $0 == "\n" }) where line.hasPrefix("DEVTYPE=") {
            let value = line.dropFirst("DEVTYPE=".count)
            return value.isEmpty ? nil : String(value)
        }
        return nil
    }
}
