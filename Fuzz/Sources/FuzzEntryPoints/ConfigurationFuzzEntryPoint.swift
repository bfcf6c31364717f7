import ReachConfiguration
/// What `fuzz-config` (`scripts/fuzz config`) runs on one input, configuration text, and
/// what the regression tests run on every kept input: the same code, so a fixed crash stays
/// fixed. Package access only; invariants a fuzzer cannot see from outside are
/// `precondition`s.
package enum ConfigurationFuzzEntryPoint {
    /// Configuration text, as `reachd --check-config` and a SIGHUP reload read it: bytes
    /// that are not UTF-8 are refused by `ConfigurationLoader.read` before any parsing.
    /// A configuration or a `ConfigurationError` are both fine; a syntax error must say
    /// where it is.
    package static func text(_ bytes: some Collection<UInt8>) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return }
        do {
            _ = try ReachdConfiguration(parsing: text, file: "fuzz.toml")
        } catch {
            guard case let .invalid(diagnostics) = error else {
                preconditionFailure("parsing text can only find it invalid: \(error)")
            }
            precondition(!diagnostics.isEmpty, "an invalid configuration names at least one problem")
        }
    }
}
