#ifndef REACHD_CLINUX_SHIM_H
#define REACHD_CLINUX_SHIM_H
// Linux calls that Swift's Glibc module leaves out (it has no <sys/signalfd.h> or
// <sys/eventfd.h>, nor malloc_trim, nor EAI_NODATA, nor classic BPF's socket filter
// structs). Header-only: everything here is in the C library or the kernel headers.
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
// The executable's read-only mappings, from its first byte to the end of its code, as the
// linker marks them (GNU ld and gold define both symbols).
extern const char __executable_start[];
extern const char etext[];

/// Unmaps the executable's read-only pages (headers, read-only data, code) from this
/// process: they are clean copies of the file, so the next touch maps them back from the
/// page cache. Returns madvise's result.
static inline int reachd_release_executable_pages(void) {
    uintptr_t start = (uintptr_t)__executable_start & ~(uintptr_t)4095;
    uintptr_t end = ((uintptr_t)etext + 4095) & ~(uintptr_t)4095;
    return madvise((void *)start, end - start, MADV_DONTNEED);
}
#endif
