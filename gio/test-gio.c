/* test-gio.c: the GIO module's pure decisions, table by table (make gio-test; the XCTest
 * GIOModuleUnitTests runs it with every `make test`).
 *
 *   /framing    bytes in, messages out: several in one read, one split at every byte, a
 *               message then the end of the stream, oversize ones
 *   /mapping    every status × connectivity reachd can send gives a pair GLib documents
 *   /link       every state × event of reachd-link.c, and the life cycles built on them */
#include "reachd-framing.h"
#include "reachd-link.h"
#include "reachd-reply.h"

#include <string.h>

/* ---- framing ---- */

/* Pushes `input` (length bytes) in pieces of `piece` bytes and returns every message taken,
 * joined by '|', with "!" for an oversize verdict. */
static char *
split (const char *input, gsize length, gsize piece, gsize limit)
{
  ReachdFramer framer;
  GString *out = g_string_new (NULL);
  gboolean over = FALSE;
  guint taken = 0;

  reachd_framer_init (&framer, limit);
  for (gsize at = 0; at < length && !over; at += piece)
    {
      gsize n = MIN (piece, length - at);
      guint8 *room = reachd_framer_reserve (&framer, 64);

      memcpy (room, input + at, n);
      reachd_framer_commit (&framer, 64, n);
      for (;;)
        {
          const char *message;
          gsize size;
          ReachdFrame frame = reachd_framer_next (&framer, &message, &size);

          if (frame == REACHD_FRAME_NONE)
            break;
          if (frame == REACHD_FRAME_OVERSIZE)
            {
              g_string_append (out, taken++ > 0 ? "|!" : "!");
              over = TRUE;
              break;
            }
          g_assert_cmpuint (strlen (message), ==, size);
          g_string_append_printf (out, "%s%s", taken++ > 0 ? "|" : "", message);
        }
    }
  reachd_framer_clear (&framer);
  return g_string_free (out, FALSE);
}

static void
test_framing (void)
{
  static const struct {
    const char *name;
    const char *input;
    gsize length;  /* 0: strlen + 1 */
    gsize limit;
    const char *want;
  } cases[] = {
    { "one message", "{\"a\":1}", 0, 1024, "{\"a\":1}" },
    { "two in one read", "{\"a\":1}\0{\"b\":2}", 16, 1024, "{\"a\":1}|{\"b\":2}" },
    { "three in one read, the third unfinished", "A\0B\0C", 5, 1024, "A|B" },
    { "an empty message", "\0x", 3, 1024, "|x" },
    { "at the limit", "0123456789", 0, 10, "0123456789" },
    { "over the limit, finished", "01234567890", 0, 10, "!" },
    { "over the limit, unfinished", "01234567890", 11, 10, "!" },
    { "a message, then one over the limit", "ok\0" "0123456789012", 16, 10, "ok|!" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      gsize length = cases[i].length != 0 ? cases[i].length : strlen (cases[i].input) + 1;

      /* The same messages whatever the reads' sizes: all at once, then a byte at a time. */
      for (gsize piece = length; piece >= 1; piece = piece > 1 ? 1 : 0)
        {
          g_autofree char *got = split (cases[i].input, length, piece, cases[i].limit);

          if (g_strcmp0 (got, cases[i].want) != 0)
            g_error ("framing, %s, read %" G_GSIZE_FORMAT " at a time: got \"%s\", want \"%s\"", cases[i].name,
                     piece, got, cases[i].want);
        }
    }
}

/* A reply split at every byte: nothing until its NUL, then exactly it. */
static void
test_framing_every_split (void)
{
  static const char reply[] = "{\"continues\":true,\"parameters\":{\"connectivity\":\"full\",\"isConstrained\":false,"
                              "\"isExpensive\":false,\"status\":\"satisfied\"}}";

  for (gsize cut = 1; cut < sizeof reply; cut++)
    {
      ReachdFramer framer;
      const char *message;
      gsize size;

      reachd_framer_init (&framer, REACHD_REPLY_MAX_BYTES);
      reachd_framer_push (&framer, reply, cut);
      g_assert_cmpint (reachd_framer_next (&framer, &message, &size), ==, REACHD_FRAME_NONE);
      reachd_framer_push (&framer, reply + cut, sizeof reply - cut);
      g_assert_cmpint (reachd_framer_next (&framer, &message, &size), ==, REACHD_FRAME_MESSAGE);
      g_assert_cmpstr (message, ==, reply);
      g_assert_cmpint (reachd_framer_next (&framer, &message, &size), ==, REACHD_FRAME_NONE);
      reachd_framer_clear (&framer);
    }
}

/* ---- mapping ---- */

static void
test_mapping (void)
{
  static const char *const states[] = { "satisfied", "unsatisfied", "requiresConnection", "someNewerStatus" };
  static const char *const connectivities[] = { NULL, "unknown", "none", "local", "portal", "limited", "partial", "full", "someNewerValue" };
  /* Per connectivity above, what a satisfied path gives. */
  static const GNetworkConnectivity satisfied[] = {
    G_NETWORK_CONNECTIVITY_FULL, G_NETWORK_CONNECTIVITY_FULL, G_NETWORK_CONNECTIVITY_LIMITED, G_NETWORK_CONNECTIVITY_LIMITED,
    G_NETWORK_CONNECTIVITY_PORTAL, G_NETWORK_CONNECTIVITY_LIMITED, G_NETWORK_CONNECTIVITY_FULL, G_NETWORK_CONNECTIVITY_FULL,
    G_NETWORK_CONNECTIVITY_FULL,
  };

  for (gsize s = 0; s < G_N_ELEMENTS (states); s++)
    for (gsize c = 0; c < G_N_ELEMENTS (connectivities); c++)
      for (int cost = 0; cost < 4; cost++)
        {
          ReachdStatus status, decoded;
          g_autofree char *reply = NULL;
          gboolean available = s == 0;

          reachd_reply_map (states[s], connectivities[c], cost & 1, cost & 2, TRUE, &status);
          /* GLib's invariant: available FALSE is LOCAL; available TRUE is FULL, LIMITED or PORTAL. */
          g_assert_true (status.available == (status.connectivity != G_NETWORK_CONNECTIVITY_LOCAL));
          g_assert_cmpint (status.available, ==, available);
          g_assert_cmpint (status.connectivity, ==, available ? satisfied[c] : G_NETWORK_CONNECTIVITY_LOCAL);
          g_assert_cmpint (status.metered, ==, cost != 0);
          /* The same through the reply decoders: reachd's canonical summary (the scan) and
           * the path of a Subscribe reply (json-glib). */
          if (connectivities[c] == NULL)
            continue;
          reply = g_strdup_printf ("{\"continues\":true,\"parameters\":{\"connectivity\":\"%s\",\"isConstrained\":%s,"
                                   "\"isExpensive\":%s,\"status\":\"%s\"}}",
                                   connectivities[c], cost & 2 ? "true" : "false", cost & 1 ? "true" : "false", states[s]);
          g_assert_true (reachd_reply_decode_summary (reply, strlen (reply), &decoded, NULL));
          g_assert_true (decoded.available == status.available && decoded.connectivity == status.connectivity
                         && decoded.metered == status.metered);
          g_free (reply);
          reply = g_strdup_printf ("{\"parameters\":{\"path\":{\"connectivity\":\"%s\",\"isConstrained\":%s,"
                                   "\"isExpensive\":%s,\"status\":\"%s\"}}}",
                                   connectivities[c], cost & 2 ? "true" : "false", cost & 1 ? "true" : "false", states[s]);
          g_assert_true (reachd_reply_decode_status (reply, strlen (reply), &decoded, NULL));
          g_assert_true (decoded.available == status.available && decoded.connectivity == status.connectivity
                         && decoded.metered == status.metered);
        }
}

static void
test_namespace_reply (void)
{
  static const struct {
    const char *reply;
    gboolean decoded;
    guint64 inode;
    gint code;  /* when not decoded */
  } cases[] = {
    { "{\"parameters\":{\"inode\":4026531840}}", TRUE, 4026531840u, 0 },
    { "{\"parameters\":{}}", TRUE, 0, 0 },
    { "{\"parameters\":{\"inode\":null}}", TRUE, 0, 0 },
    { "{\"parameters\":{\"inode\":\"4026531840\"}}", TRUE, 0, 0 },
    { "{\"parameters\":{\"inode\":-5}}", TRUE, 0, 0 },
    { "{\"error\":\"org.varlink.service.MethodNotFound\",\"parameters\":{}}", FALSE, 0, G_IO_ERROR_NOT_FOUND },
    { "{\"error\":\"io.reachd.Reachability.LimitReached\",\"parameters\":{}}", FALSE, 0, G_IO_ERROR_NOT_SUPPORTED },
    { "not json", FALSE, 0, G_IO_ERROR_INVALID_DATA },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      guint64 inode = 7;
      gboolean decoded = reachd_reply_decode_namespace (cases[i].reply, strlen (cases[i].reply), &inode, &error);

      g_assert_cmpint (decoded, ==, cases[i].decoded);
      if (decoded)
        g_assert_cmpuint (inode, ==, cases[i].inode);
      else
        g_assert_error (error, G_IO_ERROR, cases[i].code);
    }
}

/* ---- link ---- */

#define FOLLOWING REACHD_LINK_FOLLOWING
#define AWAIT_KEPT REACHD_LINK_AWAITING_KEPT
#define AWAIT_FB REACHD_LINK_AWAITING_FALLBACK
#define GONE_KEPT REACHD_LINK_GONE_KEPT
#define GONE_FB REACHD_LINK_GONE_FALLBACK
#define FOREIGN REACHD_LINK_FOREIGN

static void
test_link_table (void)
{
  static const struct {
    ReachdLinkState from;
    ReachdLinkEvent event;
    ReachdLinkState to;
    ReachdLinkActions actions;
  } cases[] = {
    /* init */
    { FOLLOWING, REACHD_EVENT_STARTED_ANSWERED, FOLLOWING, REACHD_DO_NOTHING },
    { FOLLOWING, REACHD_EVENT_STARTED_SILENT, AWAIT_FB, REACHD_DO_START_FALLBACK },
    { FOLLOWING, REACHD_EVENT_STARTED_REFUSED, GONE_FB, REACHD_DO_START_FALLBACK | REACHD_DO_WATCH | REACHD_DO_ARM_RETRY },
    /* reachd answers */
    { AWAIT_KEPT, REACHD_EVENT_ANSWERED, FOLLOWING, REACHD_DO_CANCEL_GRACE },
    { AWAIT_FB, REACHD_EVENT_ANSWERED, FOLLOWING, REACHD_DO_STOP_FALLBACK },
    { GONE_FB, REACHD_EVENT_ANSWERED, GONE_FB, REACHD_DO_NOTHING },
    /* the stream ends: a restart (a stream that lived) is reconnected at once; anything
     * else takes a retry */
    { FOLLOWING, REACHD_EVENT_ENDED, GONE_KEPT,
      REACHD_DO_DROP | REACHD_DO_ARM_GRACE | REACHD_DO_WATCH | REACHD_DO_CONNECT },
    { FOLLOWING, REACHD_EVENT_ENDED_EARLY, GONE_KEPT,
      REACHD_DO_DROP | REACHD_DO_ARM_GRACE | REACHD_DO_WATCH | REACHD_DO_ARM_RETRY },
    { FOLLOWING, REACHD_EVENT_REFUSED_REPLY, GONE_KEPT,
      REACHD_DO_DROP | REACHD_DO_ARM_GRACE | REACHD_DO_WATCH | REACHD_DO_ARM_RETRY },
    { AWAIT_KEPT, REACHD_EVENT_ENDED, GONE_KEPT, REACHD_DO_DROP | REACHD_DO_WATCH | REACHD_DO_ARM_RETRY },
    { AWAIT_FB, REACHD_EVENT_ENDED, GONE_FB, REACHD_DO_DROP | REACHD_DO_WATCH | REACHD_DO_ARM_RETRY },
    { AWAIT_FB, REACHD_EVENT_REFUSED_REPLY, GONE_FB, REACHD_DO_DROP | REACHD_DO_WATCH | REACHD_DO_ARM_RETRY },
    { GONE_KEPT, REACHD_EVENT_ENDED, GONE_KEPT, REACHD_DO_NOTHING },
    /* connecting */
    { GONE_KEPT, REACHD_EVENT_CONNECTED, AWAIT_KEPT, REACHD_DO_UNWATCH | REACHD_DO_CANCEL_RETRY },
    { GONE_FB, REACHD_EVENT_CONNECTED, AWAIT_FB, REACHD_DO_UNWATCH | REACHD_DO_CANCEL_RETRY },
    { GONE_FB, REACHD_EVENT_CONNECT_MISSING, GONE_FB, REACHD_DO_NOTHING },
    { GONE_FB, REACHD_EVENT_CONNECT_REFUSED, GONE_FB, REACHD_DO_ARM_RETRY },
    { FOLLOWING, REACHD_EVENT_CONNECT_REFUSED, FOLLOWING, REACHD_DO_NOTHING },
    { GONE_KEPT, REACHD_EVENT_DIRECTORY_CHANGED, GONE_KEPT, REACHD_DO_CANCEL_RETRY | REACHD_DO_CONNECT },
    { GONE_FB, REACHD_EVENT_DIRECTORY_CHANGED, GONE_FB, REACHD_DO_CANCEL_RETRY | REACHD_DO_CONNECT },
    { FOLLOWING, REACHD_EVENT_DIRECTORY_CHANGED, FOLLOWING, REACHD_DO_NOTHING },
    { AWAIT_FB, REACHD_EVENT_DIRECTORY_CHANGED, AWAIT_FB, REACHD_DO_NOTHING },
    { GONE_FB, REACHD_EVENT_RETRY_DUE, GONE_FB, REACHD_DO_CONNECT },
    { AWAIT_FB, REACHD_EVENT_RETRY_DUE, AWAIT_FB, REACHD_DO_NOTHING },
    /* the grace ends: the fallback answers */
    { GONE_KEPT, REACHD_EVENT_GRACE_EXPIRED, GONE_FB, REACHD_DO_START_FALLBACK },
    { AWAIT_KEPT, REACHD_EVENT_GRACE_EXPIRED, AWAIT_FB, REACHD_DO_START_FALLBACK },
    { FOLLOWING, REACHD_EVENT_GRACE_EXPIRED, FOLLOWING, REACHD_DO_NOTHING },
    /* another namespace: the fallback for good */
    { FOLLOWING, REACHD_EVENT_FOREIGN, FOREIGN,
      REACHD_DO_DROP | REACHD_DO_CANCEL_GRACE | REACHD_DO_CANCEL_RETRY | REACHD_DO_UNWATCH | REACHD_DO_START_FALLBACK },
    { AWAIT_FB, REACHD_EVENT_FOREIGN, FOREIGN,
      REACHD_DO_DROP | REACHD_DO_CANCEL_GRACE | REACHD_DO_CANCEL_RETRY | REACHD_DO_UNWATCH },
    { AWAIT_KEPT, REACHD_EVENT_FOREIGN, FOREIGN,
      REACHD_DO_DROP | REACHD_DO_CANCEL_GRACE | REACHD_DO_CANCEL_RETRY | REACHD_DO_UNWATCH | REACHD_DO_START_FALLBACK },
    { FOREIGN, REACHD_EVENT_DIRECTORY_CHANGED, FOREIGN, REACHD_DO_NOTHING },
    { FOREIGN, REACHD_EVENT_ANSWERED, FOREIGN, REACHD_DO_NOTHING },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      ReachdLink link = { .state = cases[i].from, .retries_left = REACHD_LINK_RETRIES };
      ReachdLinkActions actions = reachd_link_step (&link, cases[i].event);

      if (link.state != cases[i].to || actions != cases[i].actions)
        g_error ("link: %s + %s: got %s, actions %#x; want %s, actions %#x", reachd_link_state_name (cases[i].from),
                 reachd_link_event_name (cases[i].event), reachd_link_state_name (link.state), actions,
                 reachd_link_state_name (cases[i].to), cases[i].actions);
      g_assert_cmpint (reachd_link_fallback_answers (&link), ==,
                       link.state == AWAIT_FB || link.state == GONE_FB || link.state == FOREIGN);
    }
}

/* Life cycles: each step's event, and the state and actions it must give. */
typedef struct {
  ReachdLinkEvent event;
  ReachdLinkState to;
  ReachdLinkActions actions;
  guint retry_ms;  /* with ARM_RETRY */
} Step;

static void
run_cycle (const char *name, const Step *steps, gsize count)
{
  ReachdLink link = { 0 };

  for (gsize i = 0; i < count; i++)
    {
      ReachdLinkActions actions = reachd_link_step (&link, steps[i].event);

      if (link.state != steps[i].to || actions != steps[i].actions
          || ((actions & REACHD_DO_ARM_RETRY) && link.retry_ms != steps[i].retry_ms))
        g_error ("%s, step %" G_GSIZE_FORMAT " (%s): got %s, actions %#x, retry %u ms", name, i,
                 reachd_link_event_name (steps[i].event), reachd_link_state_name (link.state), actions, link.retry_ms);
    }
}

static void
test_link_cycles (void)
{
  /* A restart: the stream ends, the connect at once finds nobody, reachd binds (the watch
   * sees it) before it listens, then listens: answered within the grace, no fallback. */
  static const Step restart[] = {
    { REACHD_EVENT_STARTED_ANSWERED, FOLLOWING, 0, 0 },
    { REACHD_EVENT_ENDED, GONE_KEPT, REACHD_DO_DROP | REACHD_DO_ARM_GRACE | REACHD_DO_WATCH | REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECT_MISSING, GONE_KEPT, 0, 0 },
    { REACHD_EVENT_DIRECTORY_CHANGED, GONE_KEPT, REACHD_DO_CANCEL_RETRY | REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECT_REFUSED, GONE_KEPT, REACHD_DO_ARM_RETRY, 50 },
    { REACHD_EVENT_RETRY_DUE, GONE_KEPT, REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECTED, AWAIT_KEPT, REACHD_DO_UNWATCH | REACHD_DO_CANCEL_RETRY, 0 },
    { REACHD_EVENT_ANSWERED, FOLLOWING, REACHD_DO_CANCEL_GRACE, 0 },
  };
  /* A stop: the grace ends, the fallback follows the kernel; no timer repeats while reachd
   * is gone; when it is back, the fallback stops. */
  static const Step stop[] = {
    { REACHD_EVENT_STARTED_ANSWERED, FOLLOWING, 0, 0 },
    { REACHD_EVENT_ENDED, GONE_KEPT, REACHD_DO_DROP | REACHD_DO_ARM_GRACE | REACHD_DO_WATCH | REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECT_MISSING, GONE_KEPT, 0, 0 },
    { REACHD_EVENT_GRACE_EXPIRED, GONE_FB, REACHD_DO_START_FALLBACK, 0 },
    { REACHD_EVENT_DIRECTORY_CHANGED, GONE_FB, REACHD_DO_CANCEL_RETRY | REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECTED, AWAIT_FB, REACHD_DO_UNWATCH | REACHD_DO_CANCEL_RETRY, 0 },
    { REACHD_EVENT_ANSWERED, FOLLOWING, REACHD_DO_STOP_FALLBACK, 0 },
  };
  /* A listener that never comes: seven retries (50 ms doubling to 3.2 s), then only the watch. */
  static const Step never_listens[] = {
    { REACHD_EVENT_STARTED_REFUSED, GONE_FB, REACHD_DO_START_FALLBACK | REACHD_DO_WATCH | REACHD_DO_ARM_RETRY, 50 },
    { REACHD_EVENT_RETRY_DUE, GONE_FB, REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECT_REFUSED, GONE_FB, REACHD_DO_ARM_RETRY, 100 },
    { REACHD_EVENT_RETRY_DUE, GONE_FB, REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECT_REFUSED, GONE_FB, REACHD_DO_ARM_RETRY, 200 },
    { REACHD_EVENT_RETRY_DUE, GONE_FB, REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECT_REFUSED, GONE_FB, REACHD_DO_ARM_RETRY, 400 },
    { REACHD_EVENT_RETRY_DUE, GONE_FB, REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECT_REFUSED, GONE_FB, REACHD_DO_ARM_RETRY, 800 },
    { REACHD_EVENT_RETRY_DUE, GONE_FB, REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECT_REFUSED, GONE_FB, REACHD_DO_ARM_RETRY, 1600 },
    { REACHD_EVENT_RETRY_DUE, GONE_FB, REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECT_REFUSED, GONE_FB, REACHD_DO_ARM_RETRY, 3200 },
    { REACHD_EVENT_RETRY_DUE, GONE_FB, REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECT_REFUSED, GONE_FB, REACHD_DO_NOTHING, 0 },
    /* the socket made again: the retries are earned back */
    { REACHD_EVENT_DIRECTORY_CHANGED, GONE_FB, REACHD_DO_CANCEL_RETRY | REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECT_REFUSED, GONE_FB, REACHD_DO_ARM_RETRY, 50 },
  };
  /* Under reachd.socket: systemd accepts for reachd, which dies before answering and is
   * started again 2 s later (RestartSec=2s); the retries reach past that. */
  static const Step crash_at_start[] = {
    { REACHD_EVENT_STARTED_ANSWERED, FOLLOWING, 0, 0 },
    { REACHD_EVENT_ENDED, GONE_KEPT, REACHD_DO_DROP | REACHD_DO_ARM_GRACE | REACHD_DO_WATCH | REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECTED, AWAIT_KEPT, REACHD_DO_UNWATCH | REACHD_DO_CANCEL_RETRY, 0 },
    { REACHD_EVENT_ENDED, GONE_KEPT, REACHD_DO_DROP | REACHD_DO_WATCH | REACHD_DO_ARM_RETRY, 50 },
    { REACHD_EVENT_GRACE_EXPIRED, GONE_FB, REACHD_DO_START_FALLBACK, 0 },
    { REACHD_EVENT_RETRY_DUE, GONE_FB, REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECTED, AWAIT_FB, REACHD_DO_UNWATCH | REACHD_DO_CANCEL_RETRY, 0 },
    { REACHD_EVENT_ANSWERED, FOLLOWING, REACHD_DO_STOP_FALLBACK, 0 },
  };
  /* A hung reachd at init: the fallback at once; reachd's answer when it comes. */
  static const Step hung[] = {
    { REACHD_EVENT_STARTED_SILENT, AWAIT_FB, REACHD_DO_START_FALLBACK, 0 },
    { REACHD_EVENT_ANSWERED, FOLLOWING, REACHD_DO_STOP_FALLBACK, 0 },
  };
  /* A reachd that answers and then closes or sends what is refused, again and again: each
   * time a longer retry, never an at-once reconnect, so no loop. */
  static const Step refusing[] = {
    { REACHD_EVENT_STARTED_ANSWERED, FOLLOWING, 0, 0 },
    { REACHD_EVENT_REFUSED_REPLY, GONE_KEPT, REACHD_DO_DROP | REACHD_DO_ARM_GRACE | REACHD_DO_WATCH | REACHD_DO_ARM_RETRY, 50 },
    { REACHD_EVENT_RETRY_DUE, GONE_KEPT, REACHD_DO_CONNECT, 0 },
    { REACHD_EVENT_CONNECTED, AWAIT_KEPT, REACHD_DO_UNWATCH | REACHD_DO_CANCEL_RETRY, 0 },
    { REACHD_EVENT_ANSWERED, FOLLOWING, REACHD_DO_CANCEL_GRACE, 0 },
    { REACHD_EVENT_ENDED_EARLY, GONE_KEPT, REACHD_DO_DROP | REACHD_DO_ARM_GRACE | REACHD_DO_WATCH | REACHD_DO_ARM_RETRY, 100 },
    { REACHD_EVENT_GRACE_EXPIRED, GONE_FB, REACHD_DO_START_FALLBACK, 0 },
  };

  run_cycle ("restart", restart, G_N_ELEMENTS (restart));
  run_cycle ("stop", stop, G_N_ELEMENTS (stop));
  run_cycle ("never listens", never_listens, G_N_ELEMENTS (never_listens));
  run_cycle ("hung at init", hung, G_N_ELEMENTS (hung));
  run_cycle ("crash at start", crash_at_start, G_N_ELEMENTS (crash_at_start));
  run_cycle ("refusing", refusing, G_N_ELEMENTS (refusing));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/framing/table", test_framing);
  g_test_add_func ("/framing/every-split", test_framing_every_split);
  g_test_add_func ("/mapping/glib-pairs", test_mapping);
  g_test_add_func ("/mapping/namespace-reply", test_namespace_reply);
  g_test_add_func ("/link/table", test_link_table);
  g_test_add_func ("/link/cycles", test_link_cycles);
  return g_test_run ();
}
