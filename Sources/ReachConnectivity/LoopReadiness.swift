import Glibc
import LinuxSystem
import NIOCore
import NIOPosix
import SystemPackage

/// Tells the event loop when a descriptor it must not read is ready: sd-bus reads its own
/// socket, `DirectoryWatch` its inotify queue. NIO is told only of what it reads itself, so
/// the kernel answers `PollRequests` by ringing an eventfd, a NIO pipe channel reads that,
/// and `ready` runs on the loop with what the requests saw. No thread and no timer: asleep in
/// the loop's epoll while nothing happens. Lives on the event loop.
final class LoopReadiness {
    private let requests: PollRequests
    /// The pipe channel reading the doorbell, once NIO registered it.
    private var channel: (any Channel)?
    private var isClosed = false
    private var ready: ((Int16) -> Void)?
    private var failed: ((any Error) -> Void)?

    /// Watches `descriptor`, which the caller keeps open while this lives; nothing is asked
    /// until `request`. `ready` hears on `eventLoop` the events each answer saw; `failed`,
    /// why no more will come (the doorbell could not join the loop, a request was refused).
    /// Throws `notSupported` on a loop without descriptors (NIO's `EmbeddedEventLoop`).
    init(_ descriptor: SystemPackage.FileDescriptor, eventLoop: any EventLoop, ready: @escaping (Int16) -> Void,
         failed: @escaping (any Error) -> Void) throws(Errno) {
        guard let bootstrap = NIOPipeBootstrap(validatingGroup: eventLoop) else { throw .notSupported }
        requests = try PollRequests(descriptor)
        (self.ready, self.failed) = (ready, failed)
        // NIO closes what it owns with its channel; the kernel's requests keep ringing the original.
        let doorbell = try systemCall { fcntl(requests.doorbell.descriptor.rawValue, F_DUPFD_CLOEXEC, 0) }
        let this = NIOLoopBound(self, eventLoop: eventLoop)
        bootstrap
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DoorbellHandler { this.value.rang() })
                }
            }
            .takingOwnershipOfDescriptor(input: doorbell)
            .whenComplete { result in
                switch result {
                case let .success(channel): this.value.registered(channel)
                case let .failure(error):
                    Glibc.close(doorbell)  // still ours when NIO refused it
                    this.value.fail(error)
                }
            }
    }

    /// Asks to hear when the descriptor is ready for `events` (`POLLIN`, `POLLOUT`): once per
    /// answer, so after each `ready` the owner asks again for what it still wants.
    func request(_ events: Int16) {
        guard !isClosed else { return }
        do {
            try requests.request(events)
        } catch {
            fail(error)
        }
    }

    /// Stops: nothing more is heard, and the doorbell's channel closes.
    func close() {
        isClosed = true
        (ready, failed) = (nil, nil)
        channel?.close(promise: nil)
        channel = nil
    }

    private func registered(_ channel: any Channel) {
        if isClosed { channel.close(promise: nil) } else { self.channel = channel }
    }

    private func rang() {
        let events = requests.answered()
        if events != 0 { ready?(events) }
    }

    private func fail(_ error: any Error) {
        let failed = failed
        close()
        failed?(error)
    }
}

/// Reads the doorbell's count (which says nothing but "answered") and rings once per read.
private final class DoorbellHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let rang: () -> Void

    init(_ rang: @escaping () -> Void) { self.rang = rang }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func channelReadComplete(context: ChannelHandlerContext) { rang() }
}
