/// What a DHCP client recorded of its lease, read for one fact: the server's vendor
/// information (option 43) saying `ANDROID_METERED`, which Android's hotspot and USB tethering
/// send (NetworkManager reads it the same way). Pure and bounded: the text comes from files
/// the network's DHCP server filled, so every value is untrusted.
package enum DHCPLeases {
    /// The marker Android puts in option 43.
    package static let androidMetered = Array("ANDROID_METERED".utf8)
    /// Lease text read at most (a lease file keeps every lease the client had).
    package static let textLimit = 256 << 10
    /// Option 43 kept at most (one DHCP option is at most 255 bytes; concatenated, more).
    package static let optionLimit = 1024

    /// Whether option 43's bytes carry the marker, raw (Android) or inside sub-options.
    package static func isAndroidMetered(vendorSpecific bytes: [UInt8]) -> Bool {
        guard bytes.count >= androidMetered.count else { return false }
        return (0...(bytes.count - androidMetered.count)).contains { bytes[$0..<($0 + androidMetered.count)].elementsEqual(androidMetered) }
    }

    /// One recorded lease: the address it gave and its option 43, when it had one.
    package struct Lease: Sendable, Hashable {
        /// The leased IPv4 address.
        package var address: IPAddress?
        /// Option 43's bytes.
        package var vendorSpecific: [UInt8]?

        /// Creates a lease.
        package init(address: IPAddress?, vendorSpecific: [UInt8]?) {
            self.address = address
            self.vendorSpecific = vendorSpecific
        }

        /// The lease is the one in use (its address is one of `addresses`, so an old lease
        /// left in a file says nothing) and its server said `ANDROID_METERED`.
        package func isMetered(holding addresses: [IPAddress]) -> Bool {
            guard let address, addresses.contains(address), let vendorSpecific else { return false }
            return DHCPLeases.isAndroidMetered(vendorSpecific: vendorSpecific)
        }
    }

    /// systemd-networkd's lease file (`/run/systemd/netif/leases/IFINDEX`): its `ADDRESS=`
    /// and `VENDOR_SPECIFIC=` (hex) lines. Nil without an address.
    package static func networkdLease(_ text: Substring) -> Lease? {
        var lease = Lease(address: nil, vendorSpecific: nil)
        for line in text.prefix(textLimit).split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("ADDRESS=") {
                lease.address = IPAddress(line.dropFirst("ADDRESS=".count).prefix(64))
            } else if line.hasPrefix("VENDOR_SPECIFIC=") {
                lease.vendorSpecific = hexBytes(line.dropFirst("VENDOR_SPECIFIC=".count))
            }
        }
        return lease.address == nil ? nil : lease
    }

    /// The last lease ISC dhclient recorded for `interface` in a lease file (`lease {
    /// interface "eth0"; fixed-address …; option vendor-encapsulated-options …; }`), option 43
    /// a quoted string (octal escapes) or colon-separated hex. Nil when there is none. A `;` or
    /// `}` inside a string cuts it (dhclient escapes quotes, so nothing forges a statement).
    /// Text after the last `}` is a lease still being written (dhclient appends), so unread.
    package static func dhclientLease(_ text: Substring, interface: String) -> Lease? {
        let wantedInterface = "interface \"\(interface)\""
        let optionPrefix = "option vendor-encapsulated-options "
        let bounded = text.prefix(textLimit)
        var found: Lease?
        for block in bounded[..<(bounded.lastIndex(of: "}") ?? bounded.startIndex)].split(separator: "}") {
            var statements: [Substring] = []
            for piece in block.split(separator: ";") {
                let statement: Substring = piece.drop { $0 == " " || $0 == "\n" || $0 == "\t" }
                statements.append(statement.hasPrefix("lease {") ? statement.dropFirst("lease {".count).drop { $0 == " " || $0 == "\n" } : statement)
            }
            guard statements.contains(where: { $0 == wantedInterface }) else { continue }
            var lease = Lease(address: nil, vendorSpecific: nil)
            for statement in statements {
                if statement.hasPrefix("fixed-address ") {
                    lease.address = IPAddress(statement.dropFirst("fixed-address ".count).prefix(64))
                } else if statement.hasPrefix(optionPrefix) {
                    lease.vendorSpecific = dhclientValue(statement.dropFirst(optionPrefix.count))
                }
            }
            found = lease
        }
        return found
    }

    /// `"text\101"` or `41:4e:…`.
    static func dhclientValue(_ value: Substring) -> [UInt8]? {
        let value = value.prefix { $0 != "\n" }
        if value.first == "\"" {
            var bytes: [UInt8] = []
            var iterator = value.utf8.dropFirst().makeIterator()
            while let byte = iterator.next(), bytes.count < optionLimit {
                switch byte {
                case UInt8(ascii: "\""): return bytes
                case UInt8(ascii: "\\"):
                    guard let next = iterator.next() else { return nil }
                    if (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(next) {
                        // dhclient writes unprintable bytes as three octal digits.
                        guard let second = iterator.next(), let third = iterator.next(),
                              let value = UInt8(String(decoding: [next, second, third], as: UTF8.self), radix: 8)
                        else { return nil }
                        bytes.append(value)
                    } else {
                        bytes.append(next)
                    }
                default: bytes.append(byte)
                }
            }
            return nil
        }
        var bytes: [UInt8] = []
        for part in value.split(separator: ":") {
            guard bytes.count < optionLimit, (1...2).contains(part.count), let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    static func hexBytes(_ text: Substring) -> [UInt8]? {
        let digits = Array(text.utf8.prefix(optionLimit * 2 + 1))
        guard digits.count % 2 == 0, digits.count <= optionLimit * 2 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let byte = UInt8(String(decoding: digits[index..<(index + 2)], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
            index += 2
        }
        return bytes
    }
}
