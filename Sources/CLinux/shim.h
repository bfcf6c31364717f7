#ifndef REACHD_CLINUX_SHIM_H
#define REACHD_CLINUX_SHIM_H
// Linux calls that Swift's Glibc module leaves out (it has no <sys/signalfd.h> or
// <sys/eventfd.h>, nor malloc_trim, nor EAI_NODATA). Header-only: everything here is in the C library itself.
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <signal.h>
#include <malloc.h>
#include <netdb.h>

// getaddrinfo's "no address for this name" (glibc defines it only under _GNU_SOURCE).
static const int reachd_EAI_NODATA =
#ifdef EAI_NODATA
    EAI_NODATA;
#else
    -5;
#endif
#endif
