import LinuxSystem
import ReachTargets
import Synchronization
import SystemPackage

/// The engine's inbox: any thread posts, the engine takes the commands when its doorbell
/// (an eventfd it polls) rings. Once closed (the engine stopped), what is posted is
/// answered at once (`EngineCommand.abandon`).
package final class EngineMailbox: EngineRequests {
    private let commands = Mutex<(open: Bool, queued: [EngineCommand])>((true, []))
    let doorbell: EventDescriptor

    init() throws(Errno) {
        doorbell = try EventDescriptor()
    }

    /// Queues `command` and wakes the engine. Callable from any thread.
    package func post(_ command: EngineCommand) {
        let queued = commands.withLock { box -> Bool in
            guard box.open else { return false }
            box.queued.append(command)
            return true
        }
        if queued { doorbell.ring() } else { command.abandon() }
    }

    /// Everything posted so far, oldest first.
    func take() -> [EngineCommand] {
        doorbell.reset()
        return commands.withLock { box in
            defer { box.queued = [] }
            return box.queued
        }
    }

    /// The engine stops: answers what is still queued and everything posted from now on.
    package func close() {
        let left = commands.withLock { box in
            box.open = false
            defer { box.queued = [] }
            return box.queued
        }
        for command in left { command.abandon() }
    }
}
