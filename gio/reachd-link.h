/* reachd-link.h: whose answer the module gives, and what to do next (no IO).
 *
 * The module's life with reachd as one state machine: events in (reachd answered, the
 * stream ended, a connect was refused, the socket's directory changed, a timer fired),
 * actions out (connect, watch the directory, start or stop GLib's own monitor as the
 * fallback, arm a timer). gio/reachd-network-monitor.c carries the actions out; the table
 * in gio/test-gio.c drives every transition. */
#pragma once

#include <glib.h>

/* How long an answer is kept after reachd went away before the fallback's is taken: a
 * restart (an upgrade, systemd's Restart=) is not worth two changes. */
#define REACHD_LINK_GRACE_MS 1000
/* Each failure (a connect refused: a daemon binds before it listens; a reachd that died
 * or refused before answering, or soon after) is tried again after 50 ms, doubling to
 * 3.2 s: seven tries, 6.35 s in all, past reachd.service's RestartSec=2s. Only a stream
 * that lived REACHD_LINK_LIVED_MS, or a change in the socket's directory, earns them back,
 * so nothing retries for ever and nothing loops. */
#define REACHD_LINK_RETRIES 7
#define REACHD_LINK_RETRY_FIRST_MS 50
#define REACHD_LINK_LIVED_MS 1000

typedef enum {
  REACHD_LINK_FOLLOWING,          /* reachd's stream is the answer */
  REACHD_LINK_AWAITING_KEPT,      /* connected, asked, not answered yet; the last answer kept (grace armed) */
  REACHD_LINK_AWAITING_FALLBACK,  /* connected, asked, not answered yet; the fallback answers */
  REACHD_LINK_GONE_KEPT,          /* no connection, the directory watched; the last answer kept (grace armed) */
  REACHD_LINK_GONE_FALLBACK,      /* no connection, the directory watched; the fallback answers */
  REACHD_LINK_FOREIGN,            /* reachd answers for another network namespace: the fallback, for good */
} ReachdLinkState;

typedef enum {
  /* At init: reachd answered within the init wait / is connected but silent / refused the connect. */
  REACHD_EVENT_STARTED_ANSWERED,
  REACHD_EVENT_STARTED_SILENT,
  REACHD_EVENT_STARTED_REFUSED,
  REACHD_EVENT_ANSWERED,         /* the first reply on the connection, from reachd's namespace */
  REACHD_EVENT_ENDED,            /* the connection closed or failed (a stream: after REACHD_LINK_LIVED_MS) */
  REACHD_EVENT_ENDED_EARLY,      /* a stream that answered ended within REACHD_LINK_LIVED_MS */
  REACHD_EVENT_REFUSED_REPLY,    /* reachd sent what the module refuses (malformed, over the bounds,
                                    an error, a stream that says it is over) */
  REACHD_EVENT_FOREIGN,          /* reachd's namespace is not the app's */
  REACHD_EVENT_CONNECTED,        /* CONNECT worked; the calls are sent */
  REACHD_EVENT_CONNECT_REFUSED,  /* CONNECT found a socket with no listener (yet) */
  REACHD_EVENT_CONNECT_MISSING,  /* CONNECT found no socket */
  REACHD_EVENT_DIRECTORY_CHANGED,
  REACHD_EVENT_GRACE_EXPIRED,
  REACHD_EVENT_RETRY_DUE,
} ReachdLinkEvent;

typedef enum {
  REACHD_DO_NOTHING = 0,
  REACHD_DO_DROP = 1 << 0,            /* close the connection */
  REACHD_DO_CANCEL_GRACE = 1 << 1,
  REACHD_DO_CANCEL_RETRY = 1 << 2,
  REACHD_DO_UNWATCH = 1 << 3,         /* stop watching the socket's directory */
  REACHD_DO_STOP_FALLBACK = 1 << 4,
  REACHD_DO_START_FALLBACK = 1 << 5,  /* make GLib's next monitor and publish its answer */
  REACHD_DO_ARM_GRACE = 1 << 6,
  REACHD_DO_ARM_RETRY = 1 << 7,       /* after ReachdLink.retry_ms */
  REACHD_DO_WATCH = 1 << 8,
  REACHD_DO_CONNECT = 1 << 9,         /* feed back CONNECTED, CONNECT_REFUSED or CONNECT_MISSING */
} ReachdLinkActions;

typedef struct {
  ReachdLinkState state;
  guint retries_left;  /* refused connects still to retry */
  guint retry_ms;      /* the delay of the ARM_RETRY just returned */
} ReachdLink;

/* The actions to carry out, in the order of the flags above. */
G_GNUC_INTERNAL ReachdLinkActions reachd_link_step (ReachdLink *link, ReachdLinkEvent event);

/* Whether the fallback's answer is the one to publish now. */
G_GNUC_INTERNAL gboolean reachd_link_fallback_answers (const ReachdLink *link);
/* Whether a connection is open (its replies are to be read). */
G_GNUC_INTERNAL gboolean reachd_link_connected (const ReachdLink *link);

G_GNUC_INTERNAL const char *reachd_link_state_name (ReachdLinkState state);
G_GNUC_INTERNAL const char *reachd_link_event_name (ReachdLinkEvent event);
