// Fuzz target: configuration text: `ReachdConfiguration(parsing:file:)`, toml++ underneath.
// Built and run by `scripts/fuzz config SECONDS` only (see Package.swift: REACHD_FUZZ). With
// `--sanitize fuzzer`, SwiftPM builds an executable target as a library and libFuzzer
// supplies `main`, which calls this once per input.
import FuzzEntryPoints

/// libFuzzer's entry point: one input, handed to the entry point the regression tests use.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    ConfigurationFuzzEntryPoint.text(UnsafeBufferPointer(start: data, count: size))
    return 0
}
