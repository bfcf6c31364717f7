import CNetlink
import SystemPackage

/// A failure of a netlink operation: which operation, and the code it failed with.
///
/// Socket reads and kernel answers (NLMSG_ERROR, NLMSG_DONE) fail with an `Errno`;
/// libnl calls (allocation, connect, membership, building and sending requests) fail
/// with a libnl `NLE_*` code. The text for either is made in one place, `message`.
package struct NetlinkError: Error, CustomStringConvertible, Sendable, Hashable {
    /// The code an operation failed with.
    package enum Code: Sendable, Hashable {
        /// A Linux error number, from a system call or from the kernel's netlink answer.
        case errno(Errno)
        /// A libnl error code (`NLE_*`, positive), from a libnl call.
        case libnl(Int32)
    }

    /// The operation that failed, e.g. `"nl_connect(event)"`.
    package let operation: String
    /// What it failed with.
    package let code: Code

    /// Creates an error from an `Errno`.
    package init(operation: String, errno: Errno) {
        self.operation = operation
        self.code = .errno(errno)
    }

    /// Creates an error from a libnl return value (negative or positive `NLE_*`).
    package init(operation: String, libnlCode: Int32) {
        self.operation = operation
        self.code = .libnl(Int32(truncatingIfNeeded: libnlCode.magnitude))
    }

    /// `strerror` text for an errno, `nl_geterror` text for a libnl code.
    package var message: String {
        switch code {
        case .errno(let errno): errno.description
        case .libnl(let value): String(cString: nl_geterror(value))
        }
    }

    /// `operation: message (errno N)` or `operation: message (libnl N)`.
    package var description: String {
        switch code {
        case .errno(let errno): "\(operation): \(message) (errno \(errno.rawValue))"
        case .libnl(let value): "\(operation): \(message) (libnl \(value))"
        }
    }
}

extension Errno {
    /// The errno the kernel reports negated in `nlmsgerr.error`, an NLMSG_DONE payload or
    /// `rta_cacheinfo.rta_error`, whatever its sign (no trap on `Int32.min`).
    init(kernelValue value: Int32) {
        self.init(rawValue: Int32(truncatingIfNeeded: value.magnitude))
    }
}
