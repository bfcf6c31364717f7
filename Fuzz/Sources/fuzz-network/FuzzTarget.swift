// Fuzz target: what a network hands reachd: an RFC 8908 answer, an RA's option 37, a probe
// server's HTTP answer, and the URI rule they all pass through; the first byte picks which.
// Built and run by `scripts/fuzz network SECONDS` only (see Package.swift: REACHD_FUZZ).
// With `--sanitize fuzzer`, SwiftPM builds an executable target as a library and libFuzzer
// supplies `main`, which calls this once per input.
import FuzzEntryPoints

/// libFuzzer's entry point: one input, handed to the entry point the regression tests use.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    NetworkFuzzEntryPoint.input(UnsafeBufferPointer(start: data, count: size))
    return 0
}
