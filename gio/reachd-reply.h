/* reachd-reply.h: reachd's Varlink replies → what a GNetworkMonitor says (no IO).
 *
 * Kept apart from the module so the fuzz target (gio/fuzz-reply.c) drives exactly the
 * code the module runs on every reply. */
#pragma once

#include <gio/gio.h>

/* A reply bigger than this drops the connection (the module then reconnects). */
#define REACHD_REPLY_MAX_BYTES (1024 * 1024)
/* Deeper JSON is refused before json-glib sees it (its parser recurses). */
#define REACHD_REPLY_MAX_DEPTH 64

/* What a GetStatus or Subscribe reply means to GLib. */
typedef struct {
  gboolean available;
  GNetworkConnectivity connectivity;
  gboolean metered;
  /* "continues": true: a Subscribe stream has more to come. */
  gboolean continues;
} ReachdStatus;

/* What reachd's facts say to GLib: only the pairs GLib documents (available FALSE is LOCAL;
 * available TRUE is FULL, LIMITED or PORTAL). `connectivity` may be NULL (absent). */
G_GNUC_INTERNAL void reachd_reply_map (const char *state, const char *connectivity, gboolean expensive,
                                       gboolean constrained, gboolean continues, ReachdStatus *status);

/* Decodes one message (the JSON text of one reply, without its NUL terminator).
 * FALSE with G_IO_ERROR_INVALID_DATA for text that is not a well-formed status reply
 * (too big, too deep, not JSON, no path or status), G_IO_ERROR_NOT_SUPPORTED for a
 * Varlink error reply (a reachd that refuses the call). */
G_GNUC_INTERNAL gboolean reachd_reply_decode_status (const char *text, gsize length, ReachdStatus *status, GError **error);

/* The same for a SubscribeSummary reply (status, connectivity, isExpensive and
 * isConstrained, without the path around them). A reachd older than that method answers
 * MethodNotFound: G_IO_ERROR_NOT_FOUND, so the caller can fall back to Subscribe.
 * reachd's own encoding of a stream reply is read without json-glib (a scan of ~120
 * bytes); any other text goes to reachd_reply_decode_summary_json. */
G_GNUC_INTERNAL gboolean reachd_reply_decode_summary (const char *text, gsize length, ReachdStatus *status, GError **error);
/* json-glib's reading of a SubscribeSummary reply, whatever its shape (the fuzz target
 * checks that it agrees with the scan wherever the scan accepts). */
G_GNUC_INTERNAL gboolean reachd_reply_decode_summary_json (const char *text, gsize length, ReachdStatus *status, GError **error);

/* Decodes a GetNetworkNamespace reply: TRUE with *inode (0 when reachd did not say). A
 * reachd older than the method answers MethodNotFound: FALSE with G_IO_ERROR_NOT_FOUND. */
G_GNUC_INTERNAL gboolean reachd_reply_decode_namespace (const char *text, gsize length, guint64 *inode, GError **error);

/* Decodes one CheckTarget reply: TRUE when the target is reachable; otherwise FALSE with
 * the reason mapped to a GResolverError or GIOError (table in reachd-network-monitor.c),
 * or the errors of reachd_reply_decode_status for text that is not a CheckTarget reply. */
G_GNUC_INTERNAL gboolean reachd_reply_decode_target (const char *text, gsize length, GError **error);
