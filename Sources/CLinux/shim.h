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
#endif
