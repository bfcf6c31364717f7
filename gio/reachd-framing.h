/* reachd-framing.h: Varlink's NUL-terminated messages out of a byte stream (no IO).
 *
 * One read may bring several messages, or a part of one: every whole message is taken out
 * before the caller waits for more bytes, so none is left behind in the buffer. */
#pragma once

#include <glib.h>

typedef struct {
  GByteArray *buffer;  /* bytes received and not yet taken */
  gsize scanned;       /* bytes of buffer known to hold no NUL */
  gsize limit;         /* the longest message accepted, without its NUL */
  gsize taken;         /* the message handed out last, with its NUL: dropped at the next call */
} ReachdFramer;

typedef enum {
  REACHD_FRAME_NONE,      /* no whole message buffered: read more */
  REACHD_FRAME_MESSAGE,   /* *message points at one */
  REACHD_FRAME_OVERSIZE,  /* the message being received is over the limit: drop the stream */
} ReachdFrame;

G_GNUC_INTERNAL void reachd_framer_init (ReachdFramer *framer, gsize limit);
G_GNUC_INTERNAL void reachd_framer_clear (ReachdFramer *framer);
/* Forgets every buffered byte (a new connection starts empty). */
G_GNUC_INTERNAL void reachd_framer_reset (ReachdFramer *framer);

/* Room for `size` more bytes at the end of the buffer; `reachd_framer_commit` then says how
 * many of them a read filled (0 or more). */
G_GNUC_INTERNAL guint8 *reachd_framer_reserve (ReachdFramer *framer, gsize size);
G_GNUC_INTERNAL void reachd_framer_commit (ReachdFramer *framer, gsize reserved, gsize filled);
/* Appends bytes (reserve and commit in one). */
G_GNUC_INTERNAL void reachd_framer_push (ReachdFramer *framer, const void *data, gsize length);

/* The oldest whole message: *message points at it in the buffer (NUL-terminated), *length
 * is its length without the NUL. It stays valid until the next call on the framer, which
 * drops it: decode it first, then publish (a handler's nested main loop may read again).
 * No copy: this runs once per change in every app. */
G_GNUC_INTERNAL ReachdFrame reachd_framer_next (ReachdFramer *framer, const char **message, gsize *length);
