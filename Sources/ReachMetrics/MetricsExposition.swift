import Prometheus
import ReachabilityCore
import ReachProtocol
import Synchronization

/// Counters kept where things happen (the engine thread, the loop) and read when metrics are
/// rendered. Atomics: the engine adds without waking the loop.
package final class DaemonCounters: Sendable {
    /// Kernel messages read from the netlink event socket.
    package let netlinkEvents = Atomic<Int>(0)
    /// Resyncs after the kernel dropped events (ENOBUFS).
    package let resyncsAfterLostEvents = Atomic<Int>(0)
    /// Resyncs after a receive error.
    package let resyncsAfterReceiveFailure = Atomic<Int>(0)

    /// Counters at zero.
    package init() {}
}

/// What the metrics describe, gathered on the event loop at the moment they are rendered.
package struct MetricsFacts {
    /// The published state: path, interfaces, connectivity.
    package var state: ReachabilityState
    /// The publication's sequence (1 + the changes published so far).
    package var sequence: Int
    /// When the path last changed (or reachd started), seconds since the epoch.
    package var lastChange: Double
    /// Open `Subscribe` and `SubscribeTarget` streams.
    package var subscribers: Int
    /// Connections closed or refused, by reason.
    package var refusals: [RefusalReason: Int]
    /// Netlink events read.
    package var netlinkEvents: Int
    /// Resyncs by reason (`lost-events`, `receive-failure`).
    package var resyncs: [String: Int]
    /// Whether probes or portal APIs run (connectivity metrics are left out otherwise).
    package var probing: Bool
    /// The targets the configuration watches, with their answers.
    package var targets: [WatchedTargetStatus] = []
    /// Wakes from sleep seen since reachd started.
    package var wakes = 0
    /// The last wake: when (seconds since the epoch) and after how long asleep (seconds).
    package var lastWake: (at: Double, asleep: Double)?

    /// Gathers the facts.
    package init(
        state: ReachabilityState, sequence: Int, lastChange: Double, subscribers: Int, refusals: [RefusalReason: Int],
        netlinkEvents: Int, resyncs: [String: Int], probing: Bool
    ) {
        self.state = state
        self.sequence = sequence
        self.lastChange = lastChange
        self.subscribers = subscribers
        self.refusals = refusals
        self.netlinkEvents = netlinkEvents
        self.resyncs = resyncs
        self.probing = probing
    }
}

/// The metrics in Prometheus' text exposition format (0.0.4), named by its conventions:
/// one `reachd_` prefix, base units, `_total` counters, `_info` gauges of 1 carrying
/// labels, one-hot gauges for states, no timestamps. Rendered by swift-prometheus from the
/// facts each time (reachd's state is small and scrapes are rare), so nothing is kept in
/// step with the state between scrapes. Pure.
package enum MetricsExposition {
    /// The exposition text.
    package static func text(_ facts: MetricsFacts) -> String {
        let registry = PrometheusCollectorRegistry()
        let path = facts.state.path

        set(registry, "reachd_build_info", [("version", ReachdVersion.string)], help: "reachd's version; always 1.", to: 1)
        set(registry, "reachd_path_satisfied", help: "1 when the host has a usable route to the internet.", to: path.status == .satisfied ? 1 : 0)
        oneHot(registry, "reachd_path_status", label: "status", PathStatus.allCases.map(\.rawValue), path.status.rawValue,
               help: "The path's status (NWPath.Status), one-hot.")
        oneHot(registry, "reachd_path_reachability", label: "reachability", ReachabilityStatus.allCases.map(\.rawValue),
               path.reachability.rawValue, help: "The AFNetworking-style status, one-hot.")
        set(registry, "reachd_path_info", [
            ("primary_interface", path.primaryInterface ?? ""), ("primary_type", path.primaryInterfaceType?.rawValue ?? ""),
            ("unsatisfied_reason", path.unsatisfiedReason?.rawValue ?? ""),
        ], help: "The path's primary interface, its type and why the path is not satisfied; always 1.", to: 1)
        for (family, supported) in [("ipv4", path.supportsIPv4), ("ipv6", path.supportsIPv6), ("dns", path.supportsDNS)] {
            set(registry, "reachd_path_supports", [("family", family)], help: "1 when the path carries IPv4, IPv6, or has a DNS server.", to: supported ? 1 : 0)
        }
        set(registry, "reachd_path_expensive", help: "1 when the primary interface is costly.", to: path.isExpensive ? 1 : 0)
        set(registry, "reachd_path_constrained", help: "1 when the primary interface is in low-data mode.", to: path.isConstrained ? 1 : 0)
        set(registry, "reachd_path_ipv4_via_nat64", help: "1 when IPv4 destinations are reached through the network's NAT64 (no native IPv4).",
            to: path.ipv4ViaNAT64 == nil ? 0 : 1)
        set(registry, "reachd_path_link_quality", help: "The primary interface's link quality: 0 unknown, 1 minimal, 2 moderate, 3 good.",
            to: (path.linkQuality ?? .unknown).level)
        set(registry, "reachd_path_ipv4_via_clat", help: "1 when IPv4 is provided by a CLAT (464XLAT) translating onto the IPv6 uplink.",
            to: path.ipv4ProvidedBy == .clat ? 1 : 0)
        if facts.probing {
            oneHot(registry, "reachd_path_connectivity", label: "state", Connectivity.allCases.map(\.rawValue), path.connectivity.rawValue,
                   help: "The primary interface's connectivity as probes found it, one-hot.")
            // What the network said, not that it announced an API: `captive: false` (session
            // open) or an API nobody asked yet is no portal in the way.
            let captive = path.connectivity == .portal || path.captivePortal?.captive == true
            set(registry, "reachd_path_captive_portal", help: "1 when the primary interface is behind a captive portal.", to: captive ? 1 : 0)
        }

        for interface in facts.state.interfaces {
            let device = [("device", interface.name)]
            set(registry, "reachd_interface_info", device + [
                ("type", interface.type.rawValue), ("kind", interface.kind ?? ""), ("ignored", interface.ignored ? "true" : "false"),
            ], help: "An interface's type, kind and whether configuration ignores it; always 1.", to: 1)
            set(registry, "reachd_interface_usable", device, help: "1 when the interface can carry the path.", to: path.availableInterfaces.contains(interface.name) ? 1 : 0)
            set(registry, "reachd_interface_up", device, help: "1 when the interface is administratively up.", to: interface.up ? 1 : 0)
            set(registry, "reachd_interface_carrier", device, help: "1 when the interface has carrier.", to: interface.carrier ? 1 : 0)
            set(registry, "reachd_interface_expensive", device + [("reason", interface.expensiveReason?.rawValue ?? "")],
                help: "1 when the interface is costly; reason: configured, cellular, networkManager, tethering, dhcp or hotspotAddressPlan.",
                to: interface.isExpensive ? 1 : 0)
            set(registry, "reachd_interface_data_stall", device, help: "1 while the interface's TCP traffic is stalled (segments go out, nothing comes back).",
                to: interface.connectivityCause == .dataStall ? 1 : 0)
            if let quality = interface.quality {
                set(registry, "reachd_interface_link_quality", device,
                    help: "An interface's link quality from its TCP traffic: 0 unknown, 1 minimal, 2 moderate, 3 good.", to: quality.linkQuality.level)
                if let rtt = quality.rtt {
                    set(registry, "reachd_interface_rtt_seconds", device, help: "An interface's typical TCP RTT (time-weighted median).", to: Double(rtt) / 1000)
                }
                if let minimum = quality.minimumRTT {
                    set(registry, "reachd_interface_min_rtt_seconds", device, help: "The lowest TCP RTT the kernel measured over an interface.", to: Double(minimum) / 1000)
                }
                if let rate = quality.deliveryRate {
                    set(registry, "reachd_interface_delivery_rate_bits_per_second", device,
                        help: "An interface's typical TCP delivery rate, from samples that were not app-limited.", to: Double(rate))
                }
                if let loss = quality.lossPercent {
                    set(registry, "reachd_interface_loss_ratio", device, help: "Segments retransmitted over an interface, of those sent.", to: loss / 100)
                }
                if let signal = quality.signal {
                    set(registry, "reachd_interface_wifi_signal_dbm", device, help: "A Wi-Fi interface's signal from its access point, in dBm.", to: Double(signal))
                }
                if let bitRate = quality.transmitBitRate {
                    set(registry, "reachd_interface_wifi_bitrate_bits_per_second", device,
                        help: "A Wi-Fi interface's transmit bit rate to its access point.", to: Double(bitRate))
                }
            }
            for prefix in interface.nat64Prefixes ?? [] {
                set(registry, "reachd_interface_nat64_prefix", device + [("prefix", prefix.description), ("source", prefix.source.rawValue)],
                    help: "A NAT64 prefix the interface's network announced (PREF64 or DNS64); always 1.", to: 1)
            }
            for gateway in interface.gateways ?? [] {
                set(registry, "reachd_gateway_reachable", device + [("gateway", gateway.address)],
                    help: "0 when the kernel marked a watched gateway's neighbour entry FAILED, 1 otherwise.", to: gateway.state == .failed ? 0 : 1)
            }
            guard facts.probing else { continue }
            for (family, state) in [("ipv4", interface.ipv4Connectivity), ("ipv6", interface.ipv6Connectivity)] where state != .unknown {
                set(registry, "reachd_interface_connectivity", device + [("family", family), ("state", state.rawValue)],
                    help: "An interface's connectivity per family as probes found it (absent until probed); always 1.", to: 1)
                set(registry, "reachd_probe_success", device + [("family", family)],
                    help: "1 when the last probe round over the interface and family reached the internet.", to: state == .full ? 1 : 0)
            }
        }

        for watched in facts.targets {
            guard let answer = watched.path else { continue }  // not known yet: no guess either way
            let target = [("target", watched.target)] + (watched.uid.map { [("uid", "\($0)")] } ?? [])
            set(registry, "reachd_target_reachable", target, help: "1 when a target the configuration watches is reachable.",
                to: answer.status == .satisfied ? 1 : 0)
            set(registry, "reachd_target_info", target + [
                ("unsatisfied_reason", answer.unsatisfiedReason?.rawValue ?? ""), ("interface", answer.primaryInterface ?? ""),
            ], help: "Why a watched target is not reachable, and the interface it is reached by; always 1.", to: 1)
        }

        count(registry, "reachd_path_changes_total", help: "Changes of the system-wide path published since reachd started.", facts.sequence - 1)
        set(registry, "reachd_last_change_timestamp_seconds", help: "When the path last changed (or reachd started), in seconds since the epoch.", to: facts.lastChange)
        set(registry, "reachd_subscribers", help: "Open Subscribe and SubscribeTarget streams.", to: Double(facts.subscribers))
        count(registry, "reachd_wakes_total", help: "Wakes from sleep (suspend or hibernation) seen since reachd started.", facts.wakes)
        if let wake = facts.lastWake {
            set(registry, "reachd_last_wake_timestamp_seconds", help: "When the machine last woke from sleep, in seconds since the epoch.", to: wake.at)
            set(registry, "reachd_last_sleep_seconds", help: "How long the machine slept before its last wake.", to: wake.asleep)
        }
        count(registry, "reachd_netlink_events_total", help: "Kernel messages read from the rtnetlink event socket.", facts.netlinkEvents)
        for reason in ["lost-events", "receive-failure"] {
            count(registry, "reachd_netlink_resyncs_total", [("reason", reason)], help: "Times reachd re-read links, addresses and routes, by reason.", facts.resyncs[reason, default: 0])
        }
        for (reason, refused) in facts.refusals.map({ ($0.key.label, $0.value) }).sorted(by: { $0.0 < $1.0 }) {
            count(registry, "reachd_connections_refused_total", [("reason", reason)], help: "Client connections refused or closed for breaking a limit, by limit.", refused)
        }
        return registry.emitToString()
    }

    /// Sets the gauge `name` with `labels` to `value`.
    private static func set(_ registry: PrometheusCollectorRegistry, _ name: String, _ labels: [(String, String)] = [], help: String, to value: Double) {
        registry.makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help), labels: displayed(labels)).set(to: value)
    }

    /// Sets the counter `name` with `labels` to `value` (a fresh registry's counters start at 0).
    private static func count(_ registry: PrometheusCollectorRegistry, _ name: String, _ labels: [(String, String)] = [], help: String, _ value: Int) {
        registry.makeCounter(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help), labels: displayed(labels))
            .increment(by: Int64(value))
    }

    /// Label values under `UntrustedText`'s rule: an interface name is anyone's text (a
    /// network namespace's owner names its links), and swift-prometheus escapes only `\`,
    /// `"` and newline, so ESC or U+202E would reach every dashboard and terminal as they are.
    static func displayed(_ labels: [(String, String)]) -> [(String, String)] {
        labels.map { ($0.0, UntrustedText.escaped($0.1)) }
    }

    /// One gauge per value of `label`, 1 for `current`, 0 for the others.
    private static func oneHot(_ registry: PrometheusCollectorRegistry, _ name: String, label: String, _ values: [String], _ current: String, help: String) {
        for value in values {
            set(registry, name, [(label, value)], help: help, to: value == current ? 1 : 0)
        }
    }
}

extension LinkQuality {
    /// The class as a gauge's value: 0 unknown, 1 minimal, 2 moderate, 3 good.
    fileprivate var level: Double { rank.map { Double($0 + 1) } ?? 0 }
}
