#ifndef REACHD_CLINUX_SHIM_H
#define REACHD_CLINUX_SHIM_H
// Linux calls that Swift's Glibc module leaves out (it has no <sys/signalfd.h> or
// <sys/eventfd.h>, nor malloc_trim). Header-only: everything here is in the C library itself.
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <signal.h>
#include <malloc.h>
#endif
