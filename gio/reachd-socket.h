/* reachd-socket.h: the module's few socket calls to reachd, with deadlines.
 *
 * A Unix stream connect answers at once: it connects, or fails (ENOENT: no socket;
 * ECONNREFUSED: nobody listens; EAGAIN: the backlog is full); it is never pending. */
#pragma once

#include "reachd-framing.h"

#include <gio/gio.h>

/* Bytes read per recv: a summary is ~120 bytes, the largest reply reachd sends a few KiB. */
#define REACHD_READ_CHUNK 65536

/* A non-blocking socket connected to `path`, or NULL with g_socket_connect's error
 * (G_IO_ERROR_NOT_FOUND, G_IO_ERROR_CONNECTION_REFUSED, G_IO_ERROR_WOULD_BLOCK, ...). */
G_GNUC_INTERNAL GSocket *reachd_socket_connect (const char *path, GError **error);

/* Sends `length` bytes (Varlink messages with their NULs), waiting for room until `deadline`
 * (monotonic µs). */
G_GNUC_INTERNAL gboolean reachd_socket_send (GSocket *socket, const char *data, gsize length, gint64 deadline,
                                             GCancellable *cancellable, GError **error);

/* One recv into the framer. > 0: bytes read; 0: the peer closed; -1: an error
 * (G_IO_ERROR_WOULD_BLOCK when there was nothing to read). */
G_GNUC_INTERNAL gssize reachd_socket_read (GSocket *socket, ReachdFramer *framer, GError **error);

/* The next whole message (as reachd_framer_next), reading and waiting until `deadline`
 * for it: FALSE with G_IO_ERROR_TIMED_OUT, _CONNECTION_CLOSED, _MESSAGE_TOO_LARGE, ... */
G_GNUC_INTERNAL gboolean reachd_socket_receive (GSocket *socket, ReachdFramer *framer, gint64 deadline,
                                                GCancellable *cancellable, const char **message, gsize *length,
                                                GError **error);

/* Destroys and releases *source, if any, and clears the pointer. */
G_GNUC_INTERNAL void reachd_source_clear (GSource **source);
