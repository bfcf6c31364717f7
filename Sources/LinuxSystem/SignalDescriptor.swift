import CLinux
import Glibc
import SystemPackage

/// Signals delivered through a descriptor (`signalfd(2)`) instead of a handler, so the
/// thread that polls it takes them between its other work: nothing runs asynchronously
/// and nothing can race the Swift runtime.
///
/// The signals are blocked in the creating thread; create it before any other thread
/// exists so every later thread inherits the mask and the signals reach only this descriptor.
package final class SignalDescriptor {
    /// The descriptor to poll for input.
    package let descriptor: FileDescriptor

    /// Blocks `signals` in the calling thread and opens a descriptor that reports them.
    package init(_ signals: [Int32]) throws(Errno) {
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        // pthread_sigmask returns the error number instead of setting errno.
        let blocked = pthread_sigmask(SIG_BLOCK, &set, nil)
        if blocked != 0 { throw Errno(rawValue: blocked) }
        descriptor = FileDescriptor(rawValue: try systemCall { signalfd(-1, &set, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) })
    }

    deinit { try? descriptor.close() }

    /// The next pending signal, or nil when none is pending.
    package func next() throws(Errno) -> Int32? {
        var info = signalfd_siginfo()
        do {
            _ = try systemCall { read(descriptor.rawValue, &info, MemoryLayout<signalfd_siginfo>.size) }
        } catch .resourceTemporarilyUnavailable {
            return nil
        }
        return Int32(bitPattern: info.ssi_signo)
    }
}
