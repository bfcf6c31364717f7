/* reachd-link.c: the transitions of reachd-link.h.
 *
 * Rules, each for a reason:
 * - Reconnect at once only when a stream that had lived simply ended (a restart); any
 *   other failure takes one of REACHD_LINK_RETRIES doubling delays, so a reachd that
 *   misbehaves cannot make every app loop.
 * - No timer repeats for ever: the directory watch says when reachd is back; the retries
 *   cover a socket's bind before its listen and a daemon that systemd restarts.
 * - The watch is set up before the connect it backs, so a socket made in between is seen. */
#include "reachd-link.h"

static ReachdLinkActions
arm_retry (ReachdLink *link)
{
  if (link->retries_left == 0)
    return REACHD_DO_NOTHING;
  link->retry_ms = REACHD_LINK_RETRY_FIRST_MS << (REACHD_LINK_RETRIES - link->retries_left);
  link->retries_left--;
  return REACHD_DO_ARM_RETRY;
}

static gboolean
is_gone (ReachdLinkState state)
{
  return state == REACHD_LINK_GONE_KEPT || state == REACHD_LINK_GONE_FALLBACK;
}

ReachdLinkActions
reachd_link_step (ReachdLink *link, ReachdLinkEvent event)
{
  ReachdLinkState state = link->state;
  gboolean kept = state == REACHD_LINK_AWAITING_KEPT || state == REACHD_LINK_GONE_KEPT;

  if (state == REACHD_LINK_FOREIGN)
    return REACHD_DO_NOTHING;
  switch (event)
    {
    case REACHD_EVENT_STARTED_ANSWERED:
      link->state = REACHD_LINK_FOLLOWING;
      link->retries_left = REACHD_LINK_RETRIES;
      return REACHD_DO_NOTHING;
    case REACHD_EVENT_STARTED_SILENT:
      link->state = REACHD_LINK_AWAITING_FALLBACK;
      link->retries_left = REACHD_LINK_RETRIES;
      return REACHD_DO_START_FALLBACK;
    case REACHD_EVENT_STARTED_REFUSED:
      link->state = REACHD_LINK_GONE_FALLBACK;
      link->retries_left = REACHD_LINK_RETRIES;  /* reachd may be between its bind and its listen */
      return REACHD_DO_START_FALLBACK | REACHD_DO_WATCH | arm_retry (link);

    case REACHD_EVENT_ANSWERED:
      if (state == REACHD_LINK_AWAITING_KEPT || state == REACHD_LINK_AWAITING_FALLBACK)
        {
          link->state = REACHD_LINK_FOLLOWING;
          return kept ? REACHD_DO_CANCEL_GRACE : REACHD_DO_STOP_FALLBACK;
        }
      return REACHD_DO_NOTHING;

    case REACHD_EVENT_ENDED:
    case REACHD_EVENT_ENDED_EARLY:
    case REACHD_EVENT_REFUSED_REPLY:
      if (state == REACHD_LINK_FOLLOWING)
        {
          link->state = REACHD_LINK_GONE_KEPT;
          if (event != REACHD_EVENT_ENDED)
            return REACHD_DO_DROP | REACHD_DO_ARM_GRACE | REACHD_DO_WATCH | arm_retry (link);
          link->retries_left = REACHD_LINK_RETRIES;  /* it lived: a restart */
          return REACHD_DO_DROP | REACHD_DO_ARM_GRACE | REACHD_DO_WATCH | REACHD_DO_CONNECT;
        }
      if (state == REACHD_LINK_AWAITING_KEPT || state == REACHD_LINK_AWAITING_FALLBACK)
        {
          link->state = kept ? REACHD_LINK_GONE_KEPT : REACHD_LINK_GONE_FALLBACK;
          return REACHD_DO_DROP | REACHD_DO_WATCH | arm_retry (link);
        }
      return REACHD_DO_NOTHING;

    case REACHD_EVENT_FOREIGN:
      link->state = REACHD_LINK_FOREIGN;
      return REACHD_DO_DROP | REACHD_DO_CANCEL_GRACE | REACHD_DO_CANCEL_RETRY | REACHD_DO_UNWATCH
             | (state == REACHD_LINK_FOLLOWING || kept ? REACHD_DO_START_FALLBACK : REACHD_DO_NOTHING);

    case REACHD_EVENT_CONNECTED:
      if (!is_gone (state))
        return REACHD_DO_NOTHING;
      link->state = kept ? REACHD_LINK_AWAITING_KEPT : REACHD_LINK_AWAITING_FALLBACK;
      return REACHD_DO_UNWATCH | REACHD_DO_CANCEL_RETRY;
    case REACHD_EVENT_CONNECT_REFUSED:
      return is_gone (state) ? arm_retry (link) : REACHD_DO_NOTHING;
    case REACHD_EVENT_CONNECT_MISSING:
      return REACHD_DO_NOTHING;  /* the watch says when it is there */
    case REACHD_EVENT_DIRECTORY_CHANGED:
      if (!is_gone (state))
        return REACHD_DO_NOTHING;
      link->retries_left = REACHD_LINK_RETRIES;
      return REACHD_DO_CANCEL_RETRY | REACHD_DO_CONNECT;
    case REACHD_EVENT_RETRY_DUE:
      return is_gone (state) ? REACHD_DO_CONNECT : REACHD_DO_NOTHING;

    case REACHD_EVENT_GRACE_EXPIRED:
      if (state == REACHD_LINK_AWAITING_KEPT)
        link->state = REACHD_LINK_AWAITING_FALLBACK;
      else if (state == REACHD_LINK_GONE_KEPT)
        link->state = REACHD_LINK_GONE_FALLBACK;
      else
        return REACHD_DO_NOTHING;
      return REACHD_DO_START_FALLBACK;
    }
  return REACHD_DO_NOTHING;
}

gboolean
reachd_link_fallback_answers (const ReachdLink *link)
{
  return link->state == REACHD_LINK_AWAITING_FALLBACK || link->state == REACHD_LINK_GONE_FALLBACK
         || link->state == REACHD_LINK_FOREIGN;
}

gboolean
reachd_link_connected (const ReachdLink *link)
{
  return link->state == REACHD_LINK_FOLLOWING || link->state == REACHD_LINK_AWAITING_KEPT
         || link->state == REACHD_LINK_AWAITING_FALLBACK;
}

const char *
reachd_link_state_name (ReachdLinkState state)
{
  static const char *const names[] = { "following", "awaiting (answer kept)", "awaiting (fallback)",
                                       "gone (answer kept)", "gone (fallback)", "foreign namespace" };

  return (guint) state < G_N_ELEMENTS (names) ? names[state] : "?";
}

const char *
reachd_link_event_name (ReachdLinkEvent event)
{
  static const char *const names[] = { "started, answered", "started, silent", "started, refused", "answered",
                                       "ended", "ended early", "refused reply", "foreign", "connected", "connect refused",
                                       "connect missing", "directory changed", "grace expired", "retry due" };

  return (guint) event < G_N_ELEMENTS (names) ? names[event] : "?";
}
