import CLinux
import Glibc
import SystemPackage

/// Tells when a descriptor that someone else reads is ready, by ringing an eventfd: one-shot
/// poll requests the kernel answers itself (`io_submit(2)`'s IOCB_CMD_POLL, Linux 4.18, with
/// IOCB_FLAG_RESFD). A loop that can only wait on what it reads (SwiftNIO's) waits on the
/// eventfd instead, and sd-bus keeps reading its own socket. Owned by one thread.
package final class PollRequests {
    /// Counts the requests answered; the owner waits on it and empties it.
    package let doorbell: EventDescriptor
    private let descriptor: FileDescriptor
    private var context = aio_context_t()
    /// Whether a request of each kind is in flight (not answered yet).
    private var inFlight: (reading: Bool, writing: Bool) = (false, false)

    /// Requests about `descriptor`, none asked yet. The owner keeps `descriptor` open for as
    /// long as this lives.
    package init(_ descriptor: FileDescriptor) throws(Errno) {
        self.descriptor = descriptor
        doorbell = try EventDescriptor()
        // Two requests at most in flight; the kernel rounds the ring up (a few per CPU).
        _ = try systemCall { reachd_io_setup(2, &context) }
    }

    deinit {
        // Ends the requests in flight: the kernel drops them with the context.
        _ = reachd_io_destroy(context)
    }

    /// Asks to be told when the descriptor is readable (`POLLIN` in `events`), writable
    /// (`POLLOUT`), or both; a kind asked already and not answered is not asked again. An
    /// error or hang-up answers either. Already ready: answered at once (the doorbell rings).
    package func request(_ events: Int16) throws(Errno) {
        if events & Int16(POLLIN) != 0, !inFlight.reading {
            try submit(events: Int16(POLLIN), kind: 0)
            inFlight.reading = true
        }
        if events & Int16(POLLOUT) != 0, !inFlight.writing {
            try submit(events: Int16(POLLOUT), kind: 1)
            inFlight.writing = true
        }
    }

    /// What the requests answered since the last call saw (`POLLIN`, `POLLOUT`, `POLLERR`,
    /// `POLLHUP`), 0 when none was; each answered kind may be asked again. Never waits.
    package func answered() -> Int16 {
        var events = [io_event](repeating: io_event(), count: 2)
        let count = events.withUnsafeMutableBufferPointer { reachd_io_getevents_now(context, 2, $0.baseAddress) }
        var seen: Int16 = 0
        for event in events.prefix(max(0, Int(count))) {
            if event.data == 0 { inFlight.reading = false } else { inFlight.writing = false }
            // A negative result is an errno (the request failed): whoever reads will see why.
            seen |= event.res < 0 ? Int16(POLLERR) : Int16(truncatingIfNeeded: event.res)
        }
        return seen
    }

    /// The kernel copies the request as it is submitted: nothing of it need outlive the call.
    private func submit(events: Int16, kind: UInt64) throws(Errno) {
        var request = iocb()
        request.aio_data = kind
        request.aio_lio_opcode = UInt16(IOCB_CMD_POLL)
        request.aio_fildes = UInt32(bitPattern: descriptor.rawValue)
        request.aio_buf = UInt64(UInt16(bitPattern: events))
        request.aio_flags = UInt32(IOCB_FLAG_RESFD)
        request.aio_resfd = UInt32(bitPattern: doorbell.descriptor.rawValue)
        _ = try systemCall { reachd_io_submit(context, &request) }
    }
}
