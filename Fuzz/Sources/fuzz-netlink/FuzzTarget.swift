// Fuzz target: one netlink datagram: `MessageParser.parse`, `FIBLookup.interpret`, libnl-route underneath.
// Built and run by `scripts/fuzz netlink SECONDS` only (see Package.swift: REACHD_FUZZ). With
// `--sanitize fuzzer`, SwiftPM builds an executable target as a library and libFuzzer
// supplies `main`, which calls this once per input.
import FuzzEntryPoints

/// libFuzzer's entry point: one input, handed to the entry point the regression tests use.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    NetlinkFuzzEntryPoint.datagram(UnsafeBufferPointer(start: data, count: size))
    return 0
}
