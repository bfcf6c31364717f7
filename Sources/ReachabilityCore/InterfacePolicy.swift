/// How reachd treats interfaces by name: which to ignore, and type / cost overrides.
///
/// Patterns are shell globs (`*`, `?`) matched against the whole interface name.
package struct InterfacePolicy: Sendable, Hashable {
    /// An override for interfaces whose name matches `pattern`.
    package struct Override: Sendable, Hashable {
        /// Glob on the interface name.
        package var pattern: String
        /// Forced interface type, if any.
        package var type: InterfaceType?
        /// Forced expensive flag, if any.
        package var isExpensive: Bool?
        /// Forced constrained flag, if any.
        package var isConstrained: Bool?
        /// Forced ignored (true) or kept (false), over the globs and the host-internal
        /// bridge rule; nil leaves both to decide.
        package var isIgnored: Bool?

        /// Creates an override.
        package init(
            pattern: String, type: InterfaceType? = nil, isExpensive: Bool? = nil, isConstrained: Bool? = nil,
            isIgnored: Bool? = nil
        ) {
            self.pattern = pattern
            self.type = type
            self.isExpensive = isExpensive
            self.isConstrained = isConstrained
            self.isIgnored = isIgnored
        }
    }

    /// Container and bridge noise that is listed but left out of the answer by default.
    package static let defaultIgnoredPatterns = ["docker*", "veth*", "br-*", "virbr*", "cali*", "cni*", "flannel*"]

    /// Globs of interfaces left out of the answer (still listed, marked ignored).
    package var ignoredPatterns: [String]
    /// Overrides; the first matching one wins per field.
    package var overrides: [Override]
    /// Whether an iPhone hotspot's address plan makes an interface expensive.
    package var hotspotAddressPlan: Bool

    /// Creates a policy; the default ignores container and bridge noise.
    package init(ignoredPatterns: [String] = InterfacePolicy.defaultIgnoredPatterns, overrides: [Override] = [], hotspotAddressPlan: Bool = true) {
        self.ignoredPatterns = ignoredPatterns
        self.overrides = overrides
        self.hotspotAddressPlan = hotspotAddressPlan
    }

    /// Whether the interface is left out of the answer: an override's `isIgnored` if one
    /// says, else an ignore glob matches or it is one of `hostInternalBridges`
    /// (`InterfaceRoles.hostInternalBridges(in:)` of the same snapshot).
    package func isIgnored(_ link: Link, hostInternalBridges: Set<Int32>) -> Bool {
        if let forced = firstOverride(for: link, \.isIgnored) { return forced }
        return hostInternalBridges.contains(link.index) || ignoredPatterns.contains { Glob.matches($0, link.name) }
    }

    /// The interface's type: an override if one matches, else its classification.
    package func type(of link: Link) -> InterfaceType {
        firstOverride(for: link, \.type) ?? InterfaceClassifier.classify(link)
    }

    /// Why the interface is costly, nil when it is not, the first that holds: an override
    /// (its false wins over every guess); cellular; NetworkManager's `Metered` (its "no",
    /// the user's choice, wins over the guesses below); a tethered phone's driver; the
    /// network's DHCP server (`dhcpMetered`); an iPhone hotspot's address plan in `snapshot`.
    package func expense(of link: Link, in snapshot: NetworkSnapshot? = nil, networkManager: NetworkManagerDevice? = nil,
                        dhcpMetered: Bool = false) -> ExpensiveReason? {
        if let forced = firstOverride(for: link, \.isExpensive) { return forced ? .configured : nil }
        if type(of: link) == .cellular { return .cellular }
        if let metered = networkManager?.metered { return metered ? .networkManager : nil }
        if CostlyNetworks.tetheringDriver(link.device) != nil { return .tethering }
        if dhcpMetered { return .dhcp }
        if hotspotAddressPlan, let snapshot, CostlyNetworks.isHotspotAddressPlan(link.index, in: snapshot) { return .hotspotAddressPlan }
        return nil
    }

    /// Low-data mode: only ever set by an override.
    package func isConstrained(_ link: Link) -> Bool {
        firstOverride(for: link, \.isConstrained) ?? false
    }

    private func firstOverride<Value>(for link: Link, _ field: KeyPath<Override, Value?>) -> Value? {
        for override in overrides where Glob.matches(override.pattern, link.name) {
            if let value = override[keyPath: field] { return value }
        }
        return nil
    }
}

/// Classifies an interface from kernel and sysfs facts; `classify` lists the rules in order.
package enum InterfaceClassifier {
    /// Drivers of WWAN modems whose netdevs may not say `DEVTYPE=wwan`.
    package static let cellularDrivers: Set<String> = [
        "qmi_wwan", "cdc_mbim", "mhi_net", "rmnet", "ipa", "cdc_ncm_wwan", "huawei_cdc_ncm", "sierra_net", "option",
    ]

    /// loopback → IFF_LOOPBACK; wifi → sysfs `wireless`/`phy80211` or `DEVTYPE=wlan`;
    /// cellular → `DEVTYPE=wwan`, a WWAN driver, or ARPHRD_RAWIP; other → tunnels and
    /// overlays by kind (`InterfaceRoles.tunnelKinds`: vxlan, gretap and tap carry ethernet
    /// frames but lead to a far end), ppp and anything not ethernet; wiredEthernet → the
    /// remaining ARPHRD_ETHER devices (NICs, bridges, bonds, vlans, macvlans, veths).
    package static func classify(_ link: Link) -> InterfaceType {
        if link.flags.contains(.loopback) || link.hardwareType == ARPHardwareType.loopback { return .loopback }
        if link.device.isWireless || link.device.deviceType == "wlan" { return .wifi }
        if link.device.deviceType == "wwan" || link.hardwareType == ARPHardwareType.rawIP { return .cellular }
        if let driver = link.device.driver, cellularDrivers.contains(driver) { return .cellular }
        if let kind = link.kind, InterfaceRoles.tunnelKinds.contains(kind) { return .other }
        return link.hardwareType == ARPHardwareType.ether ? .wiredEthernet : .other
    }
}

/// Shell-style glob matching on interface names (`*` any run, `?` one character).
package enum Glob {
    /// Whether `name` matches `pattern` as a whole.
    ///
    /// Characters are Swift's: `?` takes one whole grapheme cluster (`é`, `e` + U+0301, a
    /// flag, `\r\n`) and canonically equivalent spellings are equal. Interface names are
    /// ASCII, where a character is one byte, so those are matched on their UTF-8 bytes
    /// without building arrays of characters; anything else keeps the character path.
    package static func matches(_ pattern: String, _ name: String) -> Bool {
        var pattern = pattern, name = name
        // Native strings are contiguous UTF-8 already: no copy.
        let onBytes: Bool? = pattern.withUTF8 { p in
            name.withUTF8 { n in
                guard isSingleByteCharacters(p), isSingleByteCharacters(n) else { return nil }
                return match(p, n, star: UInt8(ascii: "*"), question: UInt8(ascii: "?"))
            }
        }
        return onBytes ?? match(Array(pattern), Array(name), star: "*", question: "?")
    }

    /// ASCII without CR, the one ASCII byte that can join the next into a character (CR LF).
    private static func isSingleByteCharacters(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: "\r") }
    }

    private static func match<Text: RandomAccessCollection<Element>, Element: Equatable>(
        _ p: Text, _ n: Text, star: Element, question: Element
    ) -> Bool where Text.Index == Int {
        var pi = p.startIndex, ni = n.startIndex, starP = -1, starN = 0
        while ni < n.endIndex {
            if pi < p.endIndex && (p[pi] == question || p[pi] == n[ni]) {
                pi += 1; ni += 1
            } else if pi < p.endIndex && p[pi] == star {
                starP = pi; starN = ni; pi += 1
            } else if starP >= 0 {
                // Backtrack: let the last star swallow one more character.
                pi = starP + 1; starN += 1; ni = starN
            } else {
                return false
            }
        }
        while pi < p.endIndex && p[pi] == star { pi += 1 }
        return pi == p.endIndex
    }
}
