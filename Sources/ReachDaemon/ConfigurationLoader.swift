import Glibc

/// Reads the configuration file from disk.
public enum ConfigurationLoader {
    /// Where the configuration came from.
    public enum Source: Sendable, Equatable {
        /// The file at this path.
        case file(String)
        /// No file: the built-in defaults.
        case defaults
    }

    /// Loads `explicitPath` (from `--config`: it must exist), or else `defaultPath`,
    /// whose absence means the built-in defaults.
    public static func load(
        explicitPath: String?, defaultPath: String = ReachdConfiguration.defaultPath
    ) throws(ConfigurationError) -> (configuration: ReachdConfiguration, source: Source) {
        let path = explicitPath ?? defaultPath
        let text: String
        do {
            text = try read(path)
        } catch .notFound where explicitPath == nil {
            return (ReachdConfiguration(), .defaults)
        }
        return (try ConfigurationParser.parse(text, file: path), .file(path))
    }

    /// The file's text; `notFound` only for ENOENT, `unreadable` for anything else.
    public static func read(_ path: String) throws(ConfigurationError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { throw .notFound(path: path) }
            throw .unreadable(path: path, reason: String(cString: strerror(code)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .unreadable(path: path, reason: "not a regular file") }

        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
            if bytes.count > 1 << 20 { throw .unreadable(path: path, reason: "larger than 1 MiB") }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .unreadable(path: path, reason: "not UTF-8 text")
        }
        return text
    }
}
