// One read of the host's TCP sockets as the engine makes it (sock_diag with tcp_info), judged
// by the stall rule alone and by the stall rule plus the link-quality estimate, alternated
// read by read so both see the same host. For scripts/bench-quality only (REACHD_BENCH, see
// Package.swift).
import Glibc
import NetlinkMonitor
import ReachabilityCore

let arguments = CommandLine.arguments
guard arguments.count == 5, let index = Int32(arguments[2]), let address = IPAddress(arguments[1]),
      let reads = Int(arguments[3]), let limit = Int(arguments[4]) else {
    print("usage: bench-socket-reads ADDRESS IFINDEX READS SOCKET-LIMIT")
    exit(64)
}
let addresses = [InterfaceAddress(interfaceIndex: index, address: address, prefixLength: 24)]

/// CLOCK_MONOTONIC in nanoseconds.
func now() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

var stallAlone = DataStallDetector(), stallPaired = DataStallDetector(), estimator = LinkQualityEstimator()
var alone: [UInt64] = [], both: [UInt64] = [], estimateOnly: [UInt64] = []
var sockets = 0, estimated = 0
for read in 0..<reads {
    let time = Double(read) / 10
    // The stall watch alone: the read and the stall rule.
    var start = now()
    let first = try TCPSocketDiagnostics.read(addresses: addresses, limit: limit)
    stallAlone.poll(first.samples, at: read)
    alone.append(now() - start)
    // The same, and the estimate from the same samples.
    start = now()
    let second = try TCPSocketDiagnostics.read(addresses: addresses, limit: limit)
    stallPaired.poll(second.samples, at: read)
    let middle = now()
    let estimates = estimator.poll(second.samples, at: time)
    let end = now()
    both.append(end - start)
    estimateOnly.append(end - middle)
    sockets = second.samples.count
    estimated = estimates[index]?.rttSamples ?? 0
}

func median(_ values: [UInt64]) -> UInt64 { values.sorted()[values.count / 2] }
func p90(_ values: [UInt64]) -> UInt64 { values.sorted()[values.count * 9 / 10] }
/// Nanoseconds as milliseconds with three decimals.
func ms(_ nanoseconds: UInt64) -> String {
    let micro = (nanoseconds + 500) / 1000
    let fraction = String(micro % 1000)
    return "\(micro / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) ms"
}
print("sockets per read: \(sockets); reads: \(reads) each; rtt readings kept at the end: \(estimated)")
print("stall watch alone:           median \(ms(median(alone)))  p90 \(ms(p90(alone)))")
print("stall watch + link quality:  median \(ms(median(both)))  p90 \(ms(p90(both)))")
print("the estimate's own part:     median \(ms(median(estimateOnly)))  p90 \(ms(p90(estimateOnly)))")
