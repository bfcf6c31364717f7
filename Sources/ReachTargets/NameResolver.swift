import CLinux
import Glibc
import LinuxSystem
import NIOCore
import ReachabilityCore
import ReachProtocol
import SystemPackage

/// Resolves target names without blocking the event loop or the engine: through
/// systemd-resolved's Varlink API (`io.systemd.Resolve.ResolveHostname`) when its socket
/// exists, which tells a missing name from missing servers precisely; otherwise (or when
/// resolved cannot be asked) `getaddrinfo(3)`, so nsswitch and the resolver configuration
/// apply as for any program. Owned by the event loop: every method runs there.
///
/// Each blocking lookup runs on `BlockingWork`, in its owner's share, so that one uid's
/// lookups (stuck against a server that never answers: glibc cannot be interrupted) never
/// hold up another uid's or reachd's own. When
/// nsswitch.conf asks `files` first, a name of /etc/hosts is answered from the file at
/// once (`HostsTable`, re-read off the loop when the file changed), without any thread.
///
/// A name gets an answer within `timeout` whatever the resolver does (a server that drops
/// queries makes glibc wait 5 s per try); the late answer is still cached. Answers are
/// cached for a short fixed time (getaddrinfo reports no TTL), and the cache is emptied
/// when the path changes (another interface, other DNS servers). Concurrent asks of one
/// owner for one name share one lookup.
package final class NameResolver {
    /// What a name resolved to.
    package enum Outcome: Sendable, Equatable {
        /// The name's addresses, as the resolver ordered them (duplicates removed), a
        /// link-local IPv6 one with its interface.
        case addresses(ResolvedAddresses)
        /// Why it did not resolve: `nameNotFound`, `noDNSServer`, `resolutionFailed` or
        /// `resolutionTimedOut`.
        case failed(UnsatisfiedReason)
    }

    /// One blocking lookup (name, whether DNS servers are configured, interface index),
    /// run on a worker thread.
    package typealias BlockingLookup = @Sendable (_ name: String, _ hasNameserver: Bool, _ interfaceIndex: Int32?) -> Outcome

    /// The files a name is looked up in before any thread is asked.
    package struct LocalFiles: Sendable {
        /// hosts(5).
        var hosts = "/etc/hosts"
        /// nsswitch.conf(5): whether `files` comes first.
        var nsswitch = "/etc/nsswitch.conf"
    }

    /// How long an answer may take.
    package let timeout: TimeAmount
    private let eventLoop: any EventLoop
    private let work: BlockingWork
    private let blockingLookup: BlockingLookup
    private let localFiles: LocalFiles?
    /// Lookups queued or running, by ticket.
    private var jobs: [BlockingWork.Ticket: Job] = [:]
    /// The lookup of each owner's name (with its interface), queued or running.
    private var jobByName: [NameKey: BlockingWork.Ticket] = [:]
    private var cache: AnswerCache
    /// How long a found name's addresses are reused (a watched name is resolved again then).
    package var cacheLifetime: TimeAmount { cache.lifetime }
    private var hosts = HostsFileState()
    private var isShutDown = false

    /// The path where systemd-resolved serves Varlink.
    package static let systemdResolvedSocket = "/run/systemd/resolve/io.systemd.Resolve"

    /// A resolver whose blocking lookups run on `work`, asking systemd-resolved at
    /// `resolvedSocket` first when it exists (nil: never).
    package init(
        eventLoop: any EventLoop, work: BlockingWork, resolvedSocket: String? = NameResolver.systemdResolvedSocket,
        timeout: TimeAmount = .seconds(5), cacheLifetime: TimeAmount = .seconds(30),
        localFiles: LocalFiles? = LocalFiles(), blockingLookup: BlockingLookup? = nil
    ) {
        self.eventLoop = eventLoop
        self.work = work
        self.timeout = timeout
        self.cache = AnswerCache(lifetime: cacheLifetime)
        self.localFiles = localFiles
        self.blockingLookup = blockingLookup ?? { name, hasNameserver, interfaceIndex in
            if let resolvedSocket, FileSystem.exists(resolvedSocket),
               let answer = NameResolver.askResolved(name, interfaceIndex: interfaceIndex, socket: resolvedSocket) {
                return answer
            }
            return NameResolver.lookUp(name, hasNameserver: hasNameserver)
        }
    }

    /// The addresses of `name`, looked up for `owner` (whose share of the resolver threads
    /// it takes). `hasNameserver` tells a resolver failure with no DNS server configured
    /// (`noDNSServer`) from one with servers that failed. With `interfaceIndex`,
    /// systemd-resolved asks that interface's DNS servers (a probe's name is resolved as
    /// the network it checks would resolve it); `getaddrinfo` cannot, and ignores it.
    package func resolve(_ name: String, hasNameserver: Bool, interfaceIndex: Int32? = nil, owner: WorkOwner = .daemon) -> EventLoopFuture<Outcome> {
        if isShutDown { return eventLoop.makeSucceededFuture(.failed(.resolutionFailed)) }
        if let localFiles, !hosts.isCurrent(at: .now()) {
            return refreshHostsFile(localFiles).assumeIsolated().flatMap { [self] in
                answer(name, hasNameserver: hasNameserver, interfaceIndex: interfaceIndex, owner: owner)
            }.nonisolated()
        }
        return answer(name, hasNameserver: hasNameserver, interfaceIndex: interfaceIndex, owner: owner)
    }

    private func answer(_ name: String, hasNameserver: Bool, interfaceIndex: Int32?, owner: WorkOwner) -> EventLoopFuture<Outcome> {
        if let addresses = hosts.table.addresses(of: name) { return eventLoop.makeSucceededFuture(.addresses(ResolvedAddresses(addresses))) }
        let key = interfaceIndex.map { "\(name)%\($0)" } ?? name
        if let cached = cache.answer(for: key, at: .now()) { return eventLoop.makeSucceededFuture(cached) }
        let nameKey = NameKey(owner: owner, key: key)
        if let id = jobByName[nameKey], let job = jobs[id] {
            if let promise = job.promise { return promise.futureResult }
            // Its caller gave up, but the lookup still runs: wait for it rather than queue another.
            _ = work.callerReturned(id)
            return wait(for: id)
        }
        let lookup = blockingLookup
        // A ticket is known only once submitted; the completion never runs before that.
        var ticket: BlockingWork.Ticket?
        ticket = work.submit(for: owner, { lookup(name, hasNameserver, interfaceIndex) }) { [self] outcome in
            if let ticket { finished(ticket, outcome) }
        }
        let id = ticket!
        jobs[id] = Job(name: nameKey, generation: cache.generation)
        jobByName[nameKey] = id
        return wait(for: id)
    }

    /// A caller's promise for job `id`, answered `resolutionTimedOut` after `timeout`.
    private func wait(for id: Int) -> EventLoopFuture<Outcome> {
        let promise = eventLoop.makePromise(of: Outcome.self)
        jobs[id]?.promise = promise
        jobs[id]?.deadline = eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in callerGaveUp(id) }
        return promise.futureResult
    }

    private func callerGaveUp(_ id: Int) {
        guard let promise = jobs[id]?.promise else { return }
        jobs[id]?.promise = nil
        jobs[id]?.deadline = nil
        promise.succeed(.failed(.resolutionTimedOut))
        work.callerGaveUp(id)
    }

    /// Lookup `id` returned `outcome` (nil: it never ran).
    private func finished(_ id: BlockingWork.Ticket, _ outcome: Outcome?) {
        guard let job = forget(id) else { return }
        let outcome = outcome ?? .failed(.resolutionFailed)
        cache.remember(outcome, for: job.name.key, askedIn: job.generation, at: .now())
        job.promise?.succeed(outcome)
    }

    @discardableResult
    private func forget(_ id: BlockingWork.Ticket) -> Job? {
        guard let job = jobs.removeValue(forKey: id) else { return nil }
        job.deadline?.cancel()
        if jobByName[job.name] == id { jobByName[job.name] = nil }
        return job
    }

    /// Re-reads nsswitch.conf and hosts off the loop if they changed; at most once a second,
    /// however many names are asked meanwhile.
    private func refreshHostsFile(_ files: LocalFiles) -> EventLoopFuture<Void> {
        if let checking = hosts.checking { return checking }
        let known = hosts.stamps
        let reading = work.run { HostsFileState.read(files, known: known) }
            .recover { _ in HostsFileState.Reading(stamps: known, table: nil) }
        let checked = reading.assumeIsolated().map { [self] reading in
            hosts.checking = nil
            hosts.checked = .now()
            hosts.stamps = reading.stamps
            if let table = reading.table { hosts.table = table }
        }.nonisolated()
        hosts.checking = checked
        return checked
    }

    /// Forgets every cached answer (the path changed: another network may answer differently).
    package func forgetAnswers() {
        cache.forgetAll()
    }

    /// Answers every waiting caller and starts no more lookups. A lookup stuck in the
    /// resolver keeps its thread until it returns; nobody waits for it.
    package func shutdown() {
        isShutDown = true
        for id in Array(jobs.keys) {
            guard let job = forget(id) else { continue }
            job.promise?.succeed(.failed(.resolutionFailed))
            work.callerGaveUp(id)
        }
    }

    /// One blocking `getaddrinfo`, both families, addresses in the resolver's order.
    package static func lookUp(_ name: String, hasNameserver: Bool) -> Outcome {
        let (status, addresses) = getAddresses(name, family: AF_UNSPEC)
        guard status == 0 else { return .failed(reason(forError: status, hasNameserver: hasNameserver)) }
        return addresses.isEmpty ? .failed(.nameNotFound) : .addresses(addresses)
    }

    /// The one `getaddrinfo(3)` call: `name`'s addresses of `family` (`AF_UNSPEC`: both) in
    /// the resolver's order, or its `EAI_` error (`status` not 0). Blocking.
    package static func getAddresses(_ name: String, family: Int32) -> (status: Int32, addresses: ResolvedAddresses) {
        var hints = addrinfo()
        hints.ai_family = family
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)  // one entry per address, not per socket type
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name, nil, &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        var addresses = ResolvedAddresses()
        guard status == 0 else { return (status, addresses) }
        var entry = list
        while let current = entry?.pointee {
            if let socketAddress = current.ai_addr, let address = IPAddress(socketAddress: socketAddress) {
                // A link-local answer (mDNS's, say) comes with the interface it was found on.
                let scope = internetAddressScope(of: socketAddress) ?? 0
                addresses.append(address, interface: scope == 0 ? nil : interfaceName(ofIndex: scope))
            }
            entry = current.ai_next
        }
        return (status, addresses)
    }

    /// One `io.systemd.Resolve.ResolveHostname` call; nil when resolved cannot be asked
    /// (not running, refusing, not speaking Varlink), so the caller falls back.
    static func askResolved(_ name: String, interfaceIndex: Int32?, socket: String) -> Outcome? {
        var parameters: JSONObject = ["name": .string(name)]
        if let interfaceIndex { parameters["ifindex"] = .integer(Int(interfaceIndex)) }
        switch VarlinkConnection.call("io.systemd.Resolve.ResolveHostname", parameters: parameters, socket: socket, timeout: .seconds(6)) {
        case let .reply(reply): return outcome(ofResolvedReply: reply)
        case .timedOut: return .failed(.resolutionTimedOut)
        case .unavailable: return nil
        }
    }

    /// What systemd-resolved's answer means for a target; `interfaceName` names an answer's
    /// `ifindex` (kept for link-local addresses). Pure but for that.
    package static func outcome(
        ofResolvedReply reply: VarlinkReply<JSONObject>, interfaceName: (UInt32) -> String? = { LinuxSystem.interfaceName(ofIndex: $0) }
    ) -> Outcome {
        if let error = reply.error {
            if case let .integer(rcode)? = reply.parameters?["rcode"], error == "io.systemd.Resolve.DNSError" {
                return .failed(rcode == 3 ? .nameNotFound : .resolutionFailed)  // 3: NXDOMAIN
            }
            switch error {
            case "io.systemd.Resolve.NoNameServers": return .failed(.noDNSServer)
            case "io.systemd.Resolve.QueryTimedOut", "io.systemd.Resolve.MaxAttemptsReached": return .failed(.resolutionTimedOut)
            case "io.systemd.Resolve.NoSuchResourceRecord": return .failed(.nameNotFound)
            default: return .failed(.resolutionFailed)
            }
        }
        var addresses = ResolvedAddresses()
        for entry in reply.parameters?["addresses"]?.arrayValue ?? [] {
            let bytes = entry.objectValue?["address"]?.arrayValue?.compactMap { value -> UInt8? in
                if case let .integer(byte) = value { return UInt8(exactly: byte) }
                return nil
            }
            guard let bytes, let address = IPAddress(bytes: bytes) else { continue }
            var scope: UInt32?
            if case let .integer(index)? = entry.objectValue?["ifindex"] { scope = UInt32(exactly: index) }
            addresses.append(address, interface: scope.flatMap { $0 == 0 ? nil : interfaceName($0) })
        }
        return addresses.isEmpty ? .failed(.nameNotFound) : .addresses(addresses)
    }

    /// What a `getaddrinfo` error means for a target. The one place an EAI code becomes a reason.
    package static func reason(forError status: Int32, hasNameserver: Bool) -> UnsatisfiedReason {
        switch status {
        case EAI_NONAME, reachd_EAI_NODATA: return .nameNotFound
        // Temporary failure: the servers did not answer, or there are none to ask.
        case EAI_AGAIN: return hasNameserver ? .resolutionTimedOut : .noDNSServer
        default: return hasNameserver ? .resolutionFailed : .noDNSServer
        }
    }
}

/// One owner's lookup of one name (on one interface): what concurrent asks share.
private struct NameKey: Hashable {
    package var owner: WorkOwner
    /// The name, with `%` and the interface index when there is one.
    package var key: String
}

/// A blocking lookup queued or running, and who waits for it.
private struct Job {
    var name: NameKey
    /// `AnswerCache.generation` when it was asked: a lookup from before `forgetAnswers` is not cached.
    var generation: Int
    /// The waiting caller's promise; nil once it gave up.
    var promise: EventLoopPromise<NameResolver.Outcome>?
    var deadline: Scheduled<Void>?
}

/// What the resolver knows of /etc/hosts: the table (empty unless nsswitch.conf asks
/// `files` first), which files it came from, and when they were last looked at.
private struct HostsFileState {
    /// The result of one look at the files, made on a worker thread.
    struct Reading: Sendable {
        var stamps: [FileStamp?]
        /// nil: unchanged since `stamps` were taken.
        var table: HostsTable?
    }

    /// A file's identity and version: what changes when it is replaced or written.
    struct FileStamp: Sendable, Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var changed: Int64
    }

    /// hosts files larger than this are not indexed (their names go to `getaddrinfo`):
    /// a blocklist of a million names would otherwise stay in reachd's memory.
    static let largestIndexed = 1 << 20
    /// How long a look at the files is trusted.
    package static let recheckInterval = TimeAmount.seconds(1)

    package var table = HostsTable()
    var stamps: [FileStamp?] = []
    package var checked: NIODeadline?
    var checking: EventLoopFuture<Void>?

    package func isCurrent(at now: NIODeadline) -> Bool {
        guard let checked else { return false }
        return now < checked + Self.recheckInterval
    }

    /// Looks at nsswitch.conf and hosts; reads and parses them only when either changed
    /// since `known`. Blocking: on a worker thread.
    package static func read(_ files: NameResolver.LocalFiles, known: [FileStamp?]) -> Reading {
        let stamps = [stamp(files.nsswitch), stamp(files.hosts)]
        if stamps == known { return Reading(stamps: stamps, table: nil) }
        let nsswitch = try? FileSystem.contents(of: files.nsswitch, limit: 64 << 10)
        guard HostsTable.consultsFilesFirst(nsswitch: nsswitch.map { String(decoding: $0, as: UTF8.self) }),
              let hosts = try? FileSystem.contents(of: files.hosts, limit: largestIndexed)
        else { return Reading(stamps: stamps, table: HostsTable()) }
        return Reading(stamps: stamps, table: HostsTable(parsing: String(decoding: hosts, as: UTF8.self)))
    }

    private static func stamp(_ path: String) -> FileStamp? {
        guard let info = try? Stat(FilePath(path), followTargetSymlink: true) else { return nil }
        let nanoseconds = { (time: timespec) in Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec) }
        return FileStamp(
            device: UInt64(info.deviceID.rawValue), inode: UInt64(info.inode.rawValue), size: info.size,
            modified: nanoseconds(info.st_mtim), changed: nanoseconds(info.st_ctim)
        )
    }
}

extension IPAddress {
    /// The address in a `sockaddr_in` or `sockaddr_in6`; nil for other families.
    package init?(socketAddress: UnsafeMutablePointer<sockaddr>) {
        guard let bytes = internetAddressBytes(of: socketAddress) else { return nil }
        self.init(bytes: bytes)
    }
}

/// A name's addresses in the resolver's order, without duplicates; a link-local IPv6 one
/// keeps the interface it was found on (`sin6_scope_id`, resolved's `ifindex`), by name.
/// A collection of the addresses themselves, for callers that need no scope.
package struct ResolvedAddresses: RandomAccessCollection, ExpressibleByArrayLiteral, Sendable, Hashable {
    /// Each address, with its interface when it is a scoped link-local IPv6 address.
    package private(set) var scoped: [(address: IPAddress, interface: String?)] = []

    /// No addresses.
    package init() {}

    /// Unscoped addresses (duplicates dropped).
    package init(_ addresses: some Sequence<IPAddress>) {
        for address in addresses { append(address, interface: nil) }
    }

    /// One address on one interface.
    package init(scoped address: IPAddress, interface: String) {
        append(address, interface: interface)
    }

    /// Unscoped addresses (duplicates dropped).
    package init(arrayLiteral addresses: IPAddress...) {
        self.init(addresses)
    }

    /// Adds `address` unless it is there already; the scope is kept for link-local IPv6
    /// addresses only (another's does not change where it is) and when it names an interface.
    package mutating func append(_ address: IPAddress, interface: String?) {
        let scope = address.family == .ipv6 && address.isLinkLocal ? interface.flatMap { InterfaceName.isValid($0) ? $0 : nil } : nil
        guard !scoped.contains(where: { $0.address == address && $0.interface == scope }) else { return }
        scoped.append((address, scope))
    }

    /// The position of the first address.
    package var startIndex: Int { scoped.startIndex }
    /// The position after the last address.
    package var endIndex: Int { scoped.endIndex }
    /// The address at `position`.
    package subscript(position: Int) -> IPAddress { scoped[position].address }

    /// Same addresses, same scopes, same order.
    package static func == (left: Self, right: Self) -> Bool {
        left.scoped.elementsEqual(right.scoped) { $0.address == $1.address && $0.interface == $1.interface }
    }

    /// Hashes what `==` compares.
    package func hash(into hasher: inout Hasher) {
        for entry in scoped {
            hasher.combine(entry.address)
            hasher.combine(entry.interface)
        }
    }
}
