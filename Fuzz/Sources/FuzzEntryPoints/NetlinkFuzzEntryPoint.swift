import NetlinkMonitor
import CNetlink
import ReachabilityCore

/// What the netlink fuzz target runs on one input (`scripts/fuzz netlink`), and what the
/// regression tests run on every kept input.
///
/// Package access only: not part of any API. The bytes are one datagram as
/// `NetlinkSocket.receive` reads it: copied into an aligned buffer of their own size and
/// walked with `nlmsg_ok` / `nlmsg_next`, which is all the framing the kernel's datagrams
/// get from reachd. Each message then goes where an event or an answer goes:
/// `MessageParser.parse` (libnl-route underneath) into a `TrackedState`, and
/// `FIBLookup.interpret` as if it answered a lookup; the state's snapshot is derived into
/// a path at the end, as the engine would publish it. Each message is also decoded as a
/// sock_diag dump or destroy record (`TCPSocketDiagnostics.sample`), the IPv4 and IPv6
/// addresses the seeds use being interfaces' own, and as generic netlink: an nl80211
/// station record (`WirelessStationInfo.parse`) and the controller's family answer.
package enum NetlinkFuzzEntryPoint {

    /// Runs one datagram's worth of bytes.
    package static func datagram(_ bytes: some Collection<UInt8>) {
        let count = bytes.count
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: MemoryLayout<nlmsghdr>.alignment)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: bytes)
        var state = TrackedState()
        // The interfaces the sock_diag records' source addresses are attributed to. Per input,
        // not a static: LeakSanitizer reports a global's lazily built storage as a leak.
        let owners: [IPAddress: Int32] = [.v4(10, 99, 0, 1): 2, IPAddress("fd99::1")!: 2]
        var remaining = Int32(clamping: count)
        var header = buffer.baseAddress!.bindMemory(to: nlmsghdr.self, capacity: 1)
        while nlmsg_ok(header, remaining) != 0 {
            let message = NetlinkMessage(header: header)
            state.apply(MessageParser.parse(message)) { _ in DeviceFacts() }
            _ = FIBLookup.interpret(message)
            _ = TCPSocketDiagnostics.sample(message, owners: owners)
            _ = WirelessStationInfo.parse(message)
            _ = WirelessStationInfo.familyIdentifier(message)
            header = nlmsg_next(header, &remaining)
        }
        _ = PathDerivation.derive(state.snapshot())
    }
}
