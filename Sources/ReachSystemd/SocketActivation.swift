import CSystemd
import Glibc
import SystemPackage

/// The listening socket systemd hands over with `LISTEN_FDS` / `LISTEN_FDNAMES`
/// (`reachd.socket`, or `systemd-socket-activate`).
package enum SocketActivation {
    /// Why a passed descriptor cannot be served.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// The name `reachd.socket` gives its descriptor (`FileDescriptorName=`).
    static let descriptorName = "varlink"

    /// The passed listening Unix stream socket: the one named `varlink`, else the only
    /// one passed. Nil when reachd was not socket-activated. The variables are removed
    /// from the environment so nothing reachd might spawn inherits them.
    package static func listeningDescriptor() throws(Failure) -> Int32? {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        guard count > 0 else {
            if count < 0 { throw Failure(description: "LISTEN_FDS is malformed: \(Errno(rawValue: -count))") }
            return nil
        }
        defer {
            for index in 0..<Int(count) { free(names?[index]) }
            free(names)
        }
        let passed = (0..<Int(count)).map { index in names?[index].map { String(cString: $0) } ?? "unknown" }
        let index: Int
        if let named = passed.firstIndex(of: descriptorName) {
            index = named
        } else if count == 1 {
            index = 0
        } else {
            throw Failure(description: "systemd passed \(count) sockets (\(passed.joined(separator: ", "))) and none is named \"\(descriptorName)\"")
        }
        let descriptor = SD_LISTEN_FDS_START + Int32(index)
        guard sd_is_socket_unix(descriptor, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
            throw Failure(description: "the socket systemd passed (fd \(descriptor)) is not a listening Unix stream socket")
        }
        return descriptor
    }
}
