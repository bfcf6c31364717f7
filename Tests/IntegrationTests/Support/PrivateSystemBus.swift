import Foundation
import Glibc
import TestSupport

/// dbus-daemon on a socket of the test's own, a system bus by type, open to every uid.
final class PrivateSystemBus {
    let address: String
    private let process: Process

    init(directory: String) throws {
        let socket = directory + "/system_bus_socket"
        let config = directory + "/bus.conf"
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>
            """.write(toFile: config, atomically: true, encoding: .utf8)
        process = try Command.launch(["/usr/bin/dbus-daemon", "--nofork", "--nopidfile", "--config-file=\(config)"],
                                     stdout: FileHandle.nullDevice, stderr: FileHandle.nullDevice)
        address = "unix:path=\(socket)"
        let deadline = Date().addingTimeInterval(5)
        while !FileManager.default.fileExists(atPath: socket) {
            guard Date() < deadline else { throw CommandFailed(command: "dbus-daemon", status: 0, stderr: "no socket at \(socket) after 5 s") }
            usleep(20_000)
        }
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
