import ArgumentParser
import FoundationEssentials
import ReachabilityCore
import ReachClient
import ReachProtocol

extension Reachctl {
    /// `reachctl status`: the current path.
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the current path (default).")

        @ParentCommand var root: Reachctl
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var answerTimeout: AnswerTimeoutOptions
        @OptionGroup var filter: FilterOptions
        @Flag(help: "Print the reply as JSON.") var json = false

        func run() async throws {
            let client = connection.client(root, timeout: answerTimeout.duration)
            let reply: StatusReply
            var targets: [WatchedTargetStatus]?
            var lastWake: WakeStatus?
            do {
                if filter.filter.isUnconstrained {
                    let status = try await client.statusWithTargets()
                    (reply, targets, lastWake) = (status.status, status.targets, status.lastWake)
                } else {
                    // GetStatus has no filter: take the first reply of a filtered subscription.
                    var updates = client.subscribe(filter: filter.filter).makeAsyncIterator()
                    guard let first = try await updates.next() else { throw ExitCode(1) }
                    reply = first
                }
            } catch let error as ReachClientError {
                throw fail(error)
            }
            guard !json else {
                return printLine(ReachProtocolTools.json(StatusWithTargets(status: reply, targets: targets, lastWake: lastWake), pretty: true))
            }
            // Since when a gateway is unreachable, a tethered phone's driver and the link-quality
            // estimates are in the interface list.
            let known = reply.path.linkQuality.map { $0 != .unknown } ?? false
            let interfaces = reply.path.unsatisfiedReason == .gatewayUnreachable || reply.path.expensiveReason == .tethering || known
                ? ((try? await client.interfaces()) ?? []) : []
            let primary = interfaces.first { $0.name == reply.path.primaryInterface }
            printLine(StatusFormatter.describe(reply, neighbours: interfaces.flatMap { $0.gateways ?? [] }, targets: targets ?? [],
                                               primaryDriver: primary?.driver, primaryQuality: primary?.quality, lastWake: lastWake))
        }
    }
}

/// Namespaced access to the JSON helper (a flag named `json` shadows the free function).
enum ReachProtocolTools {
    static func json(_ value: some Encodable, pretty: Bool) -> String { reachctl.json(value, pretty: pretty) }
}

/// Human-readable renderings of a status reply.
enum StatusFormatter {
    /// The multi-line summary of `reachctl status`; `neighbours` say since when a failed
    /// gateway has been failed.
    static func describe(_ reply: StatusReply, neighbours: [GatewayNeighbourDescription] = [], targets: [WatchedTargetStatus] = [],
                         primaryDriver: String? = nil, primaryQuality: LinkQualityEstimate? = nil, lastWake: WakeStatus? = nil) -> String {
        let path = reply.path
        var lines: [(String, String)] = []
        lines.append(("Reachability", path.reachability.rawValue))
        var status = path.status.rawValue
        if let reason = path.unsatisfiedReason { status += " (\(reason.rawValue))" }
        lines.append(("Status", status))
        var primary = path.primaryInterface.map(shown) ?? "none"
        if let type = path.primaryInterfaceType { primary += " (\(type.rawValue))" }
        lines.append(("Primary", primary))
        lines.append(("Gateways", list(path.gateways)))
        if path.unsatisfiedReason == .gatewayUnreachable {
            for gateway in path.gateways {
                let since = neighbours.first { $0.address == gateway && $0.state == .failed }.map { " since " + timestamp($0.since) } ?? ""
                lines.append(("Failing", "gateway \(shown(gateway)) unreachable" + since))
            }
        }
        let clat = path.ipv4ProvidedBy == .clat ? " (through a CLAT over \(path.primaryInterface.map(shown) ?? "the IPv6 uplink"))" : ""
        lines.append(("IPv4", yesNo(path.supportsIPv4) + clat + (path.ipv4ViaNAT64.map { " (reachable through NAT64 \($0))" } ?? "")))
        lines.append(("IPv6", yesNo(path.supportsIPv6)))
        if let prefixes = path.nat64Prefixes {
            lines.append(("NAT64", prefixes.map { "\($0) (\($0.source.rawValue))" }.joined(separator: ", ")))
        }
        lines.append(("DNS", yesNo(path.supportsDNS)))
        lines.append(("Expensive", yesNo(path.isExpensive) + ExpenseFormatter.reason(path.expensiveReason, driver: primaryDriver)))
        lines.append(("Constrained", yesNo(path.isConstrained)))
        lines.append(("Connectivity", ConnectivityFormatter.describe(path.connectivity, cause: path.connectivityCause, since: path.connectivityCauseSince,
                                                                    destinations: path.connectivityCauseDestinations)))
        if let portal = path.captivePortal { lines.append(("Portal", PortalFormatter.describe(portal))) }
        if let quality = path.linkQuality { lines.append(("Link quality", LinkQualityFormatter.describe(quality, primaryQuality))) }
        lines.append(("Flags", list(path.flags.names)))
        lines.append(("Available", list(path.availableInterfaces)))
        lines.append(("Sequence", "\(reply.sequence) (instance \(shown(reply.instance)))"))
        if let wake = lastWake { lines.append(("Last wake", timestamp(wake.at) + " after " + SleepReport.duration(.seconds(wake.asleepSeconds)) + " asleep")) }
        for (index, watched) in targets.enumerated() {
            lines.append((index == 0 ? "Targets" : "", target(watched)))
        }
        let width = lines.map(\.0.count).max() ?? 0
        return lines.map { label, value in
            (label.isEmpty ? "" : label + ":").padded(to: width + 2) + value
        }.joined(separator: "\n")
    }

    /// One watched target: "db.internal: satisfied via eth0", "10.0.0.5 (uid 1000): unsatisfied (noRoute)".
    static func target(_ watched: WatchedTargetStatus) -> String {
        let name = shown(watched.target) + (watched.uid.map { " (uid \($0))" } ?? "")
        guard let path = watched.path else { return "\(name): not known yet" }
        let how = path.unsatisfiedReason.map { " (\($0.rawValue))" } ?? path.primaryInterface.map { " via \(shown($0))" } ?? ""
        return "\(name): \(path.status.rawValue)\(how)"
    }

    /// The one-line form of `reachctl watch`.
    static func line(_ reply: StatusReply, timestamp: String) -> String {
        let path = reply.path
        var text = "\(timestamp) #\(reply.sequence) \(path.status.rawValue)"
        if let reason = path.unsatisfiedReason { text += " (\(reason.rawValue))" }
        text += " \(path.reachability.rawValue)"
        if let primary = path.primaryInterface {
            text += " via \(shown(primary))"
            if let type = path.primaryInterfaceType { text += " (\(type.rawValue))" }
        }
        if !path.gateways.isEmpty { text += " gw " + path.gateways.map(shown).joined(separator: ",") }
        let families = [path.supportsIPv4 ? "IPv4" : nil, path.supportsIPv6 ? "IPv6" : nil].compactMap { $0 }
        if !families.isEmpty { text += " " + families.joined(separator: "+") }
        if let prefix = path.ipv4ViaNAT64 { text += " IPv4-via-NAT64 \(prefix)" }
        if path.ipv4ProvidedBy == .clat { text += " IPv4-via-CLAT" }
        if path.supportsDNS { text += " DNS" }
        if path.isExpensive { text += " expensive" }
        if path.isConstrained { text += " constrained" }
        if path.connectivityCause != nil {
            text += " " + ConnectivityFormatter.describe(path.connectivity, cause: path.connectivityCause, since: path.connectivityCauseSince,
                                                         destinations: path.connectivityCauseDestinations)
        }
        if let quality = path.linkQuality, quality != .unknown { text += " quality \(quality.rawValue)" }
        if let changes = reply.changes, !changes.isEmpty {
            text += " [changed: " + changes.map(\.rawValue).joined(separator: ",") + "]"
        }
        return text
    }

    private static func yesNo(_ value: Bool) -> String { value ? "yes" : "no" }
    /// Seconds since the epoch as ISO 8601, as the connectivity cause's.
    static func timestamp(_ seconds: Int) -> String { Date(timeIntervalSince1970: Double(seconds)).formatted(.iso8601) }
    private static func list(_ values: [String]) -> String { values.isEmpty ? "-" : values.map(shown).joined(separator: ", ") }
}

/// Human-readable connectivity: "limited (dataStall since 2026-11-25T15:20:01Z, 4 destinations)".
enum ConnectivityFormatter {
    /// The verdict, and what caused it since when, if something besides the probes did.
    static func describe(_ connectivity: Connectivity, cause: ConnectivityCause?, since: Int?, destinations: Int?) -> String {
        guard let cause else { return connectivity.rawValue }
        return "\(connectivity.rawValue) (\(self.cause(cause, since: since, destinations: destinations)))"
    }

    /// "dataStall since 2026-11-25T15:20:01Z, 4 destinations", "NetworkManager".
    static func cause(_ cause: ConnectivityCause, since: Int?, destinations: Int?) -> String {
        switch cause {
        case .dataStall:
            return cause.rawValue + (since.map { " since " + Date(timeIntervalSince1970: Double($0)).formatted(.iso8601) } ?? "")
                + (destinations.map { ", \($0) destination\($0 == 1 ? "" : "s")" } ?? "")
        case .networkManager:
            return "NetworkManager"
        }
    }
}

/// Why an interface is expensive, as reachctl prints it.
enum ExpenseFormatter {
    /// " (configured)", " (tethering (ipheth))", " (dhcp ANDROID_METERED)", …; empty when no
    /// reason is given. `driver`: the interface's, named for tethering.
    static func reason(_ reason: ExpensiveReason?, driver: String? = nil) -> String {
        switch reason {
        case nil: return ""
        case .configured?: return " (configured)"
        case .cellular?: return " (cellular)"
        case .networkManager?: return " (NetworkManager)"
        case .tethering?: return " (tethering" + (driver.map { " (\(shown($0)))" } ?? "") + ")"
        case .dhcp?: return " (dhcp ANDROID_METERED)"
        case .hotspotAddressPlan?: return " (hotspot address plan)"
        }
    }
}

/// Human-readable captive-portal facts.
enum PortalFormatter {
    /// "log in at URL (captive, API URI)", "session open, 1800 s left (API URI)".
    static func describe(_ portal: CaptivePortal) -> String {
        var parts: [String] = []
        switch portal.captive {
        case true?: parts.append("captive" + (portal.userPortalURL.map { ", log in at \(shown($0))" } ?? ""))
        case false?: parts.append("session open")
        case nil: parts.append("announced, not asked")
        }
        if let seconds = portal.secondsRemaining { parts.append("\(seconds) s left") }
        if let bytes = portal.bytesRemaining { parts.append("\(bytes) bytes left") }
        if portal.canExtendSession == true { parts.append("can be extended") }
        if let api = portal.apiURI { parts.append("API \(shown(api))") }
        if let venue = portal.venueInfoURL { parts.append("venue \(shown(venue))") }
        return parts.joined(separator: "; ")
    }
}

/// Human-readable link quality: "moderate (RTT 180 ms, 2.1 Mbit/s, 42 samples)".
enum LinkQualityFormatter {
    /// The class, with what the estimate says of it when there is one.
    static func describe(_ quality: LinkQuality, _ estimate: LinkQualityEstimate?) -> String {
        guard let estimate, quality != .unknown else { return quality.rawValue }
        return "\(quality.rawValue) (\(details(estimate)))"
    }

    /// "RTT 180 ms, 2.1 Mbit/s, 0.4 % loss, 42 samples, signal -67 dBm at 144 Mbit/s": the values present.
    static func details(_ estimate: LinkQualityEstimate) -> String {
        var parts: [String] = []
        if let rtt = estimate.rtt { parts.append(rtt == 0 ? "RTT <1 ms" : "RTT \(rtt) ms") }
        if let rate = estimate.deliveryRate { parts.append(self.rate(rate)) }
        if let loss = estimate.lossPercent, loss > 0 { parts.append("\(loss) % loss") }
        parts.append("\(estimate.rttSamples) samples")
        switch (estimate.signal, estimate.transmitBitRate) {
        case let (signal?, bitRate?): parts.append("signal \(signal) dBm at \(self.rate(bitRate))")
        case let (signal?, nil): parts.append("signal \(signal) dBm")
        case let (nil, bitRate?): parts.append("radio at \(self.rate(bitRate))")
        case (nil, nil): break
        }
        return parts.joined(separator: ", ")
    }

    /// Bits per second as "64 kbit/s", "2.1 Mbit/s", "940 Mbit/s".
    static func rate(_ bits: Int) -> String {
        switch bits {
        case ..<1_000_000: return "\(bits / 1000) kbit/s"
        case ..<10_000_000: return "\(Double(bits / 100_000) / 10) Mbit/s"
        default: return "\(bits / 1_000_000) Mbit/s"
        }
    }
}
