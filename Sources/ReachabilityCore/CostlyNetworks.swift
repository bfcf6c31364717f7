/// Signs that an interface's network costs money though its type does not say so: a phone
/// tethered over USB or Bluetooth, and an iPhone's Personal Hotspot by its address plan.
/// Pure; `InterfacePolicy.expense` weighs them after configuration and the interface type.
package enum CostlyNetworks {
    /// Drivers only a phone (or a cellular dongle) binds: Apple's iPhone USB tethering,
    /// RNDIS (Android's USB tethering) and Bluetooth PAN.
    package static let tetheringDrivers: Set<String> = ["ipheth", "rndis_host", "bnep"]

    /// Generic USB Ethernet drivers phones use too (Android's NCM/ECM tethering), but so do
    /// docks and adapters: tethering only when the USB device's vendor makes phones.
    package static let sharedUSBDrivers: Set<String> = ["cdc_ncm", "cdc_ether"]

    /// USB vendor IDs of phone makers: Apple, Google, Samsung, Motorola, LG, HTC, Sony,
    /// Huawei, Xiaomi, OnePlus, OPPO, ZTE, Nokia (HMD). Lenovo (0x17ef) is left out: its
    /// docks use these drivers.
    package static let phoneVendors: Set<UInt16> = [
        0x05AC, 0x18D1, 0x04E8, 0x22B8, 0x1004, 0x0BB4, 0x0FCE, 0x12D1, 0x2717, 0x2A70, 0x22D9, 0x19D2, 0x0421,
    ]

    /// The driver that makes the device a tethered phone, when it is one.
    package static func tetheringDriver(_ device: DeviceFacts) -> String? {
        guard let driver = device.driver else { return nil }
        if tetheringDrivers.contains(driver) { return driver }
        if sharedUSBDrivers.contains(driver), let vendor = device.usbVendor, phoneVendors.contains(vendor) { return driver }
        return nil
    }

    /// An iPhone's Personal Hotspot hands out 172.20.10.2–14 in 172.20.10.0/28 with itself
    /// at 172.20.10.1; an interface with such an address and its default route via that
    /// gateway is taken for one (Apple documents no other sign a client can see).
    package static func isHotspotAddressPlan(_ interfaceIndex: Int32, in snapshot: NetworkSnapshot) -> Bool {
        let hasPlanAddress = snapshot.addresses(of: interfaceIndex).contains { address in
            guard address.prefixLength == 28, case let bytes = address.address.bytes, bytes.count == 4 else { return false }
            return bytes[0] == 172 && bytes[1] == 20 && bytes[2] == 10 && (2...14).contains(bytes[3])
        }
        guard hasPlanAddress else { return false }
        return snapshot.defaultRoutes.contains { route in
            route.family == .ipv4 && route.nextHops.contains { $0.interfaceIndex == interfaceIndex && $0.gateway == hotspotGateway }
        }
    }

    private static let hotspotGateway = IPAddress("172.20.10.1")
}
