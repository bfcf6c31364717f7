#ifndef REACHD_CLINUX_SHIM_H
#define REACHD_CLINUX_SHIM_H
// Linux calls that Swift's Glibc module leaves out (it has no <sys/signalfd.h> or
// <sys/eventfd.h>, nor timerfd, nor malloc_trim, nor EAI_NODATA, nor classic BPF's socket filter
// structs, nor the kernel's AIO calls, which glibc does not wrap). Header-only: everything here is in the C library or the kernel headers.
#include <sys/eventfd.h>
#include <linux/filter.h>
#include <sys/signalfd.h>
#include <signal.h>
#include <malloc.h>
// getaddrinfo's EAI_NODATA ("the name has no address"): glibc's <netdb.h> has it only
// under _GNU_SOURCE. Its value there; <netdb.h> itself is not included, so that socket
// constants stay in the Glibc module.
static const int reachd_EAI_NODATA = -5;

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
// The executable's first byte and the end of its code, as the linker marks them (GNU ld,
// gold and lld define both). Everything between is read-only and never written: ELF and
// symbol tables, relocation records, code. Relocated data (RELRO) and data come after it.
extern const char __executable_start[];
extern const char etext[];

/// Unmaps the executable's pages up to the end of its code from this process: they are
/// clean copies of the file, so the next touch maps them back from the page cache.
/// Returns madvise's result.
static inline int reachd_release_executable_pages(void) {
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)__executable_start & ~(page - 1);
    uintptr_t end = ((uintptr_t)etext + page - 1) & ~(page - 1);
    return madvise((void *)start, end - start, MADV_DONTNEED);
}

#include <linux/aio_abi.h>
#include <sys/syscall.h>
#include <time.h>
// The kernel's AIO calls (io_setup(2) and its kin), which glibc does not wrap and Swift cannot
// reach through variadic syscall(2). reachd submits only IOCB_CMD_POLL requests (PollRequests).
static inline int reachd_io_setup(unsigned int events, aio_context_t *context) {
    return (int)syscall(SYS_io_setup, events, context);
}
static inline int reachd_io_destroy(aio_context_t context) { return (int)syscall(SYS_io_destroy, context); }
static inline int reachd_io_submit(aio_context_t context, struct iocb *request) {
    struct iocb *requests[1] = {request};
    return (int)syscall(SYS_io_submit, context, 1L, requests);
}
// The completions already there, at most `count`; never waits.
static inline int reachd_io_getevents_now(aio_context_t context, long count, struct io_event *events) {
    struct timespec now = {0, 0};
    return (int)syscall(SYS_io_getevents, context, 0L, count, events, &now);
}
// timerfd(2) through syscall(2): <sys/timerfd.h> would bring <time.h> into this module,
// whose types Swift would then take as this module's (MemberImportVisibility) in every
// file that uses them. struct itimerspec is two timespecs of two longs on LP64 Linux.
static inline int reachd_timerfd_create(int clock, int flags) { return (int)syscall(SYS_timerfd_create, clock, flags); }
/// Arms `fd` to fire once, `seconds` and `nanoseconds` from now (both 0: disarms).
static inline int reachd_timerfd_arm(int fd, long seconds, long nanoseconds) {
    long value[4] = {0, 0, seconds, nanoseconds};
    return (int)syscall(SYS_timerfd_settime, fd, 0, value, (void *)0);
}

#endif
