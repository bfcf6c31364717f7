import CNetlink
import Glibc

/// A failure of a netlink operation: which operation, the libnl or errno code, and
/// the human-readable message for it.
public struct NetlinkError: Error, CustomStringConvertible, Sendable, Hashable {
    /// Where the code comes from.
    public enum Domain: String, Sendable, Hashable {
        /// A libnl error code (`NLE_*`, as a positive number).
        case libnl
        /// A Linux `errno` value.
        case errno
    }

    /// The operation that failed, e.g. `"nl_connect(event)"`.
    public let operation: String
    /// Whether `code` is a libnl code or an errno.
    public let domain: Domain
    /// The positive libnl (`NLE_*`) or errno code.
    public let code: Int32
    /// `nl_geterror` / `strerror` text for `code`.
    public let message: String

    /// Creates an error from a libnl return value (negative or positive `NLE_*`).
    public init(operation: String, libnlCode: Int32) {
        self.operation = operation
        self.domain = .libnl
        self.code = abs(libnlCode)
        self.message = String(cString: nl_geterror(abs(libnlCode)))
    }

    /// Creates an error from a Linux errno value (sign ignored).
    public init(operation: String, errno code: Int32) {
        self.operation = operation
        self.domain = .errno
        self.code = abs(code)
        self.message = String(cString: strerror(abs(code)))
    }

    /// `operation: message (libnl|errno code)`.
    public var description: String {
        "\(operation): \(message) (\(domain.rawValue) \(code))"
    }
}
