import SystemPackage

/// Unbuffered lines to standard output and error: each reaches a pipe at once (`watch`
/// output read line by line), without Foundation's `FileHandle`.
package enum StandardStreams {
    /// Writes `text` and a newline to standard output.
    package static func printLine(_ text: String) {
        write(text + "\n", to: .standardOutput)
    }

    /// Writes `text` and a newline to standard error.
    package static func printError(_ text: String) {
        write(text + "\n", to: .standardError)
    }

    private static func write(_ text: String, to descriptor: FileDescriptor) {
        // Nothing sensible is left to do when the terminal or pipe is gone.
        _ = try? descriptor.writeAll(text.utf8)
    }
}
