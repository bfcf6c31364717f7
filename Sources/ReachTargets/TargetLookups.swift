import NIOCore
import ReachabilityCore

/// What answers about targets need of the engine, the thread that owns the kernel view.
package protocol TargetLookups: Sendable {
    /// Look up these target addresses (each with its caller's uid) now; `reply` gets them.
    func lookUp(_ keys: [TargetKey], reply: EventLoopPromise<[TargetLookup]>)
    /// Look up `add` with every snapshot from now on (counted: a key asked for twice is
    /// released twice) and stop looking up `remove`.
    func monitorTargets(add: [TargetKey], remove: [TargetKey])
}
