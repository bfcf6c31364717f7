/* reachd-network-monitor.c: a GNetworkMonitor that asks reachd.
 *
 * Loaded by GIO into every GLib program that asks for the default network monitor, as the
 * "reachd" implementation of the gio-network-monitor extension point at priority 35:
 * above NetworkManager's 30 (and GLib 2.89's systemd-networkd 25), below the portal's 40
 * (sandboxed apps ask the portal, and the portal, outside the sandbox, asks this one).
 * It runs in other people's processes, so it keeps GLib's contract to the letter: it never
 * blocks the app, never freezes or invents an answer, answers only for its own network
 * namespace, and makes no system call while nothing changes.
 *
 * Life cycle (the decisions are reachd-link.c's state machine; this file carries them out)
 *   init      chosen whenever reachd's socket exists ($REACHD_SOCKET, else
 *             /run/reachd/io.reachd.Reachability; no socket: init fails and GIO takes the next
 *             implementation). Connects (a Unix connect answers at once), sends
 *             GetNetworkNamespace and SubscribeSummary (more=true) in one write and waits at
 *             most INIT_WAIT_MS for both replies. reachd in another network namespace: init
 *             fails (GLib's own backend then answers for the app's namespace). No answer in
 *             time, or no listener: the app starts from the fallback's answer and takes
 *             reachd's when it comes (at most one network-changed, only if it moved).
 *   then      the stream on the same connection, read from a GSocket source on the
 *             thread-default main context of construction; every whole reply a read brought
 *             is handled (reachd-framing.c). SubscribeSummary replies only when status,
 *             connectivity, isExpensive or isConstrained moved. A reachd older than that
 *             method (MethodNotFound) is followed through Subscribe on the same connection.
 *   gone      when the stream ends the last answer is kept for REACHD_LINK_GRACE_MS (a
 *             restart is invisible) while one reconnect is tried at once; after that the
 *             fallback answers: GLib's next implementation (NetworkManager's where it runs,
 *             else netlink), made through the extension point as GLib's systemd-networkd
 *             backend makes its netlink fallback, living only while reachd does not answer.
 *             The socket's directory is watched with inotify (its nearest existing ancestor
 *             while it is gone): no timer, no wake-up while nothing changes. When the socket
 *             is back, reachd's answer takes over.
 *
 * Mapping (reachd's Path → GNetworkMonitor; reachd-reply.c): only the pairs GLib documents
 *   network-available   path.status == "satisfied" (unsatisfied, requiresConnection: FALSE)
 *   connectivity        unsatisfied path                              → LOCAL
 *                       satisfied, "full"/"partial"/"unknown"/absent  → FULL
 *                       satisfied, "portal"                           → PORTAL
 *                       satisfied, "limited"/"none"/"local"           → LIMITED (a route, no internet)
 *   network-metered     path.isExpensive || path.isConstrained
 *
 * can_reach: reachd-can-reach.c (enumerated in the app, CheckTarget per address).
 *
 * Cost in the app: one Unix socket and one GSource while reachd answers; no netlink socket,
 * no route dump, no timer. Replies are bounded in size and JSON depth (reachd-reply.c); a
 * reply over the bounds drops the connection. Debug lines: G_MESSAGES_DEBUG=reachd-gio.
 *
 * Over 500 lines because it is one GObject whose parts (the answer, the fallback, the
 * connection, the link's actions, GInitable, GObject) share its private struct; each
 * decision lives in a small pure file (reachd-link.c, reachd-framing.c, reachd-reply.c). */
#include "reachd-can-reach.h"
#include "reachd-framing.h"
#include "reachd-link.h"
#include "reachd-reply.h"
#include "reachd-socket.h"
#include "reachd-watch.h"

#include <sys/stat.h>

#define DEFAULT_SOCKET "/run/reachd/io.reachd.Reachability"
#define PRIORITY 35
/* The longest an app's first get_default() waits for reachd before starting from the fallback. */
#define INIT_WAIT_MS 40

static const char opening_calls[] = "{\"method\":\"io.reachd.Reachability.GetNetworkNamespace\"}\0"
                                     "{\"method\":\"io.reachd.Reachability.SubscribeSummary\",\"more\":true}";
static const char subscribe_call[] = "{\"method\":\"io.reachd.Reachability.Subscribe\",\"parameters\":{},\"more\":true}";

/* Which reply the connection brings next. */
typedef enum {
  EXPECT_NAMESPACE,        /* GetNetworkNamespace's */
  EXPECT_SUMMARY_FIRST,    /* SubscribeSummary's first: the answer now */
  EXPECT_SUBSCRIBE_FIRST,  /* an older reachd's Subscribe's first */
  EXPECT_SUMMARY,
  EXPECT_SUBSCRIBE,
} Expect;

/* What one reply means to the link. */
typedef enum {
  REPLY_NOTHING,   /* nothing to publish yet */
  REPLY_ANSWER,    /* the first answer on this connection */
  REPLY_UPDATE,    /* a stream reply */
  REPLY_FOREIGN,   /* reachd answers for another network namespace */
  REPLY_REFUSED,   /* malformed, over the bounds, or a Varlink error */
} Reply;

#define REACHD_TYPE_NETWORK_MONITOR (reachd_network_monitor_get_type ())
G_DECLARE_FINAL_TYPE (ReachdNetworkMonitor, reachd_network_monitor, REACHD, NETWORK_MONITOR, GObject)

struct _ReachdNetworkMonitor
{
  GObject parent_instance;

  /* The answer and the fallback: written on the monitor's context, read from any thread. */
  GMutex lock;
  ReachdStatus answer;
  GNetworkMonitor *fallback;  /* GLib's next implementation, while reachd does not answer */

  /* Only touched on the monitor's context (and by init, before anyone else can). */
  char *socket_path;
  guint64 own_namespace;      /* the app's /proc/self/ns/net inode (0: unknown) */
  GMainContext *context;
  ReachdLink link;
  GSocket *socket;            /* the connection, while the link has one */
  GSource *read_source;
  ReachdFramer framer;
  Expect expect;
  gint64 answered_at;         /* when this connection's stream first answered (monotonic µs) */
  GSource *grace_source, *retry_source;
  ReachdWatch *watch;         /* while the link has no connection */
};

enum { PROP_0, PROP_NETWORK_AVAILABLE, PROP_NETWORK_METERED, PROP_CONNECTIVITY };

static GParamSpec *available_pspec, *metered_pspec, *connectivity_pspec;
static guint changed_signal;

static void reachd_network_monitor_iface_init (GNetworkMonitorInterface *iface);
static void reachd_network_monitor_initable_iface_init (GInitableIface *iface);

G_DEFINE_TYPE_WITH_CODE (ReachdNetworkMonitor, reachd_network_monitor, G_TYPE_OBJECT,
                         G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, reachd_network_monitor_initable_iface_init)
                         G_IMPLEMENT_INTERFACE (G_TYPE_NETWORK_MONITOR, reachd_network_monitor_iface_init))

static void carry_out (ReachdNetworkMonitor *self, ReachdLinkActions actions);

static void
step (ReachdNetworkMonitor *self, ReachdLinkEvent event)
{
  ReachdLinkState before = self->link.state;
  ReachdLinkActions actions = reachd_link_step (&self->link, event);

  if (self->link.state != before)
    g_debug ("%s: %s → %s", reachd_link_event_name (event), reachd_link_state_name (before),
             reachd_link_state_name (self->link.state));
  carry_out (self, actions);
}

/* ---- The answer ---- */

static void
publish (ReachdNetworkMonitor *self, const ReachdStatus *status)
{
  gboolean available_changed, metered_changed, connectivity_changed, available;

  g_mutex_lock (&self->lock);
  available_changed = self->answer.available != status->available;
  metered_changed = self->answer.metered != status->metered;
  connectivity_changed = self->answer.connectivity != status->connectivity;
  self->answer = *status;
  g_mutex_unlock (&self->lock);

  if (!available_changed && !metered_changed && !connectivity_changed)
    return;
  g_object_freeze_notify (G_OBJECT (self));
  if (available_changed)
    g_object_notify_by_pspec (G_OBJECT (self), available_pspec);
  if (metered_changed)
    g_object_notify_by_pspec (G_OBJECT (self), metered_pspec);
  if (connectivity_changed)
    g_object_notify_by_pspec (G_OBJECT (self), connectivity_pspec);
  g_object_thaw_notify (G_OBJECT (self));
  /* The value now: a handler above may have run a nested main loop that published again. */
  g_mutex_lock (&self->lock);
  available = self->answer.available;
  g_mutex_unlock (&self->lock);
  g_signal_emit (self, changed_signal, 0, available);
}

/* ---- The fallback: GLib's own next implementation ---- */

/* The fallback's answer, held to the pairs GLib documents as reachd's is. */
static void
publish_fallback (ReachdNetworkMonitor *self)
{
  ReachdStatus status = { 0 };
  GNetworkMonitor *fallback;

  g_mutex_lock (&self->lock);
  fallback = self->fallback != NULL ? g_object_ref (self->fallback) : NULL;
  g_mutex_unlock (&self->lock);
  if (fallback == NULL || !reachd_link_fallback_answers (&self->link))
    {
      g_clear_object (&fallback);
      return;
    }
  status.available = g_network_monitor_get_network_available (fallback);
  status.metered = g_network_monitor_get_network_metered (fallback);
  status.connectivity = g_network_monitor_get_connectivity (fallback);
  if (!status.available)
    status.connectivity = G_NETWORK_CONNECTIVITY_LOCAL;
  else if (status.connectivity == G_NETWORK_CONNECTIVITY_LOCAL)
    status.connectivity = G_NETWORK_CONNECTIVITY_LIMITED;
  g_object_unref (fallback);
  publish (self, &status);
}

static void
on_fallback_notify (GObject *fallback, GParamSpec *pspec, gpointer user_data)
{
  (void) fallback;
  (void) pspec;
  publish_fallback (user_data);
}

static void
on_fallback_changed (GNetworkMonitor *fallback, gboolean available, gpointer user_data)
{
  (void) fallback;
  (void) available;
  publish_fallback (user_data);
}

/* The first implementation below this one whose init succeeds, made on the monitor's
 * context (it attaches its sources to the thread-default one). */
static GNetworkMonitor *
make_fallback (ReachdNetworkMonitor *self)
{
  GIOExtensionPoint *point = g_io_extension_point_lookup (G_NETWORK_MONITOR_EXTENSION_POINT_NAME);
  GNetworkMonitor *monitor = NULL;

  g_main_context_push_thread_default (self->context);
  for (GList *l = g_io_extension_point_get_extensions (point); l != NULL && monitor == NULL; l = l->next)
    {
      GIOExtension *extension = l->data;
      g_autoptr (GError) error = NULL;
      GType type;

      if (g_io_extension_get_priority (extension) >= PRIORITY)
        continue;
      type = g_io_extension_get_type (extension);
      if (type == REACHD_TYPE_NETWORK_MONITOR || !g_type_is_a (type, G_TYPE_NETWORK_MONITOR))
        continue;
      monitor = g_initable_new (type, NULL, &error, NULL);
      if (monitor == NULL)
        g_debug ("fallback %s: %s", g_io_extension_get_name (extension), error != NULL ? error->message : "?");
    }
  g_main_context_pop_thread_default (self->context);
  return monitor;
}

static void
start_fallback (ReachdNetworkMonitor *self)
{
  GNetworkMonitor *fallback;

  if (self->fallback != NULL)
    return;
  fallback = make_fallback (self);
  if (fallback == NULL)
    {
      g_debug ("no other network monitor could start; keeping the last answer");
      return;
    }
  g_debug ("reachd is not answering; following %s", G_OBJECT_TYPE_NAME (fallback));
  g_signal_connect (fallback, "notify::network-available", G_CALLBACK (on_fallback_notify), self);
  g_signal_connect (fallback, "notify::network-metered", G_CALLBACK (on_fallback_notify), self);
  g_signal_connect (fallback, "notify::connectivity", G_CALLBACK (on_fallback_notify), self);
  g_signal_connect (fallback, "network-changed", G_CALLBACK (on_fallback_changed), self);
  g_mutex_lock (&self->lock);
  self->fallback = fallback;
  g_mutex_unlock (&self->lock);
  publish_fallback (self);
}

static void
stop_fallback (ReachdNetworkMonitor *self)
{
  GNetworkMonitor *fallback;

  g_mutex_lock (&self->lock);
  fallback = g_steal_pointer (&self->fallback);
  g_mutex_unlock (&self->lock);
  if (fallback == NULL)
    return;
  g_debug ("reachd answers again; %s stopped", G_OBJECT_TYPE_NAME (fallback));
  g_signal_handlers_disconnect_by_data (fallback, self);
  g_object_unref (fallback);
}

/* ---- The connection ---- */

/* What one reply means; `status` is filled for ANSWER and UPDATE. */
static Reply
read_reply (ReachdNetworkMonitor *self, const char *message, gsize length, ReachdStatus *status)
{
  g_autoptr (GError) error = NULL;
  guint64 inode;
  gboolean decoded = FALSE;

  switch (self->expect)
    {
    case EXPECT_NAMESPACE:
      if (!reachd_reply_decode_namespace (message, length, &inode, &error)
          && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))  /* older: cannot tell */
        break;
      self->expect = EXPECT_SUMMARY_FIRST;
      if (error == NULL && inode != 0 && self->own_namespace != 0 && inode != self->own_namespace)
        return REPLY_FOREIGN;
      return REPLY_NOTHING;
    case EXPECT_SUMMARY_FIRST:
      if (reachd_reply_decode_summary (message, length, status, &error))
        {
          self->expect = EXPECT_SUMMARY;
          return REPLY_ANSWER;
        }
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        break;
      /* A reachd older than SubscribeSummary: Subscribe on the same connection. */
      g_clear_error (&error);
      if (!reachd_socket_send (self->socket, subscribe_call, sizeof subscribe_call, g_get_monotonic_time (), NULL, &error))
        break;
      self->expect = EXPECT_SUBSCRIBE_FIRST;
      return REPLY_NOTHING;
    case EXPECT_SUBSCRIBE_FIRST:
      if (!reachd_reply_decode_status (message, length, status, &error))
        break;
      self->expect = EXPECT_SUBSCRIBE;
      return REPLY_ANSWER;
    case EXPECT_SUMMARY:
      decoded = reachd_reply_decode_summary (message, length, status, &error);
      return decoded ? REPLY_UPDATE : REPLY_REFUSED;
    case EXPECT_SUBSCRIBE:
      decoded = reachd_reply_decode_status (message, length, status, &error);
      return decoded ? REPLY_UPDATE : REPLY_REFUSED;
    }
  g_debug ("refusing reachd's reply: %s", error != NULL ? error->message : "?");
  return REPLY_REFUSED;
}

/* Handles every whole reply buffered. FALSE when the connection ended meanwhile (a reply
 * refused or foreign, a stream that said it is over, or a nested main loop in a handler). */
static gboolean
handle_replies (ReachdNetworkMonitor *self)
{
  GSocket *socket = self->socket;

  for (;;)
    {
      const char *message;  /* valid until the next framer call: decoded before anything is published */
      ReachdStatus status;
      gsize length;

      switch (reachd_framer_next (&self->framer, &message, &length))
        {
        case REACHD_FRAME_NONE:
          return TRUE;
        case REACHD_FRAME_OVERSIZE:
          g_debug ("refusing reachd's reply: over %d bytes", REACHD_REPLY_MAX_BYTES);
          step (self, REACHD_EVENT_REFUSED_REPLY);
          return FALSE;
        case REACHD_FRAME_MESSAGE:
          break;
        }
      switch (read_reply (self, message, length, &status))
        {
        case REPLY_NOTHING:
          continue;
        case REPLY_REFUSED:
          step (self, REACHD_EVENT_REFUSED_REPLY);
          return FALSE;
        case REPLY_FOREIGN:
          g_debug ("reachd answers for another network namespace; following GLib's monitor");
          step (self, REACHD_EVENT_FOREIGN);
          return FALSE;
        case REPLY_ANSWER:
          self->answered_at = g_get_monotonic_time ();
          step (self, REACHD_EVENT_ANSWERED);  /* the fallback stops before reachd's answer is published */
          publish (self, &status);
          break;
        case REPLY_UPDATE:
          publish (self, &status);
          break;
        }
      if (self->socket != socket)
        return FALSE;  /* a nested main loop in a handler ended this connection */
      if (!status.continues)
        {
          g_debug ("refusing reachd's reply: the stream said it is over");  /* it never ends (the IDL) */
          step (self, REACHD_EVENT_REFUSED_REPLY);
          return FALSE;
        }
    }
}

static gboolean
on_readable (GSocket *socket, GIOCondition condition, gpointer user_data)
{
  ReachdNetworkMonitor *self = user_data;
  g_autoptr (GError) error = NULL;
  gssize n;

  (void) condition;
  n = reachd_socket_read (socket, &self->framer, &error);
  if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
    return G_SOURCE_CONTINUE;
  if (n <= 0)
    {
      gboolean lived = g_get_monotonic_time () - self->answered_at >= REACHD_LINK_LIVED_MS * G_TIME_SPAN_MILLISECOND;

      g_debug ("reachd's stream ended: %s", error != NULL ? error->message : "closed");
      step (self, lived || self->link.state != REACHD_LINK_FOLLOWING ? REACHD_EVENT_ENDED : REACHD_EVENT_ENDED_EARLY);
      return G_SOURCE_REMOVE;
    }
  return handle_replies (self) ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static void
attach_reader (ReachdNetworkMonitor *self)
{
  self->read_source = g_socket_create_source (self->socket, G_IO_IN, NULL);
  /* GLib 2.74 takes a non-recursive source's descriptor out of the poll set around each
   * dispatch, and wakes its own context twice to do so: two eventfd writes and one more
   * main-loop turn per change. on_readable is safe to recurse. */
  g_source_set_can_recurse (self->read_source, TRUE);
  g_source_set_callback (self->read_source, G_SOURCE_FUNC (on_readable), self, NULL);
  g_source_set_name (self->read_source, "[reachd] stream");
  g_source_attach (self->read_source, self->context);
}

static void
drop_connection (ReachdNetworkMonitor *self)
{
  reachd_source_clear (&self->read_source);
  if (self->socket != NULL)
    g_socket_close (self->socket, NULL);
  g_clear_object (&self->socket);
  reachd_framer_reset (&self->framer);
}

/* Connects and sends the opening calls; the event that says how it went. */
static ReachdLinkEvent
open_connection (ReachdNetworkMonitor *self)
{
  g_autoptr (GError) error = NULL;

  self->socket = reachd_socket_connect (self->socket_path, &error);
  if (self->socket != NULL
      && !reachd_socket_send (self->socket, opening_calls, sizeof opening_calls, g_get_monotonic_time (), NULL, &error))
    g_clear_object (&self->socket);  /* a new connection's buffer takes ~120 bytes whole */
  if (self->socket == NULL)
    {
      g_debug ("connecting to %s: %s", self->socket_path, error->message);
      return g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED)
                 || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)
             ? REACHD_EVENT_CONNECT_REFUSED : REACHD_EVENT_CONNECT_MISSING;
    }
  self->expect = EXPECT_NAMESPACE;
  reachd_framer_reset (&self->framer);
  return REACHD_EVENT_CONNECTED;
}

static void
connect_now (ReachdNetworkMonitor *self)
{
  ReachdLinkEvent event = open_connection (self);

  if (event == REACHD_EVENT_CONNECTED)
    attach_reader (self);
  step (self, event);
}

/* ---- The directory watch (reachd-watch.c) ---- */

static void
on_socket_directory_changed (gpointer user_data)
{
  step (user_data, REACHD_EVENT_DIRECTORY_CHANGED);
}

static void
watch (ReachdNetworkMonitor *self)
{
  if (self->watch == NULL)
    self->watch = reachd_watch_new (self->socket_path, self->context, on_socket_directory_changed, self);
}

static void
unwatch (ReachdNetworkMonitor *self)
{
  g_clear_pointer (&self->watch, reachd_watch_free);
}

/* ---- Timers and carrying actions out ---- */

/* A one-shot timer fired: forget it, then feed its event. */
static gboolean
fire (ReachdNetworkMonitor *self, GSource **slot, ReachdLinkEvent event)
{
  g_clear_pointer (slot, g_source_unref);
  step (self, event);
  return G_SOURCE_REMOVE;
}

static gboolean
on_grace_expired (gpointer self)
{
  return fire (self, &REACHD_NETWORK_MONITOR (self)->grace_source, REACHD_EVENT_GRACE_EXPIRED);
}

static gboolean
on_retry_due (gpointer self)
{
  return fire (self, &REACHD_NETWORK_MONITOR (self)->retry_source, REACHD_EVENT_RETRY_DUE);
}

/* (Re)arms the one-shot timer in *slot. */
static void
arm (ReachdNetworkMonitor *self, GSource **slot, guint ms, GSourceFunc callback, const char *name)
{
  reachd_source_clear (slot);
  *slot = g_timeout_source_new (ms);
  g_source_set_callback (*slot, callback, self, NULL);
  g_source_set_name (*slot, name);
  g_source_attach (*slot, self->context);
}

static void
carry_out (ReachdNetworkMonitor *self, ReachdLinkActions actions)
{
  if (actions & REACHD_DO_DROP)
    drop_connection (self);
  if (actions & REACHD_DO_CANCEL_GRACE)
    reachd_source_clear (&self->grace_source);
  if (actions & REACHD_DO_CANCEL_RETRY)
    reachd_source_clear (&self->retry_source);
  if (actions & REACHD_DO_UNWATCH)
    unwatch (self);
  if (actions & REACHD_DO_STOP_FALLBACK)
    stop_fallback (self);
  if (actions & REACHD_DO_START_FALLBACK)
    start_fallback (self);
  if (actions & REACHD_DO_ARM_GRACE)
    arm (self, &self->grace_source, REACHD_LINK_GRACE_MS, on_grace_expired, "[reachd] grace");
  if (actions & REACHD_DO_ARM_RETRY)
    arm (self, &self->retry_source, self->link.retry_ms, on_retry_due, "[reachd] retry");
  if (actions & REACHD_DO_WATCH)
    watch (self);
  if (actions & REACHD_DO_CONNECT)
    connect_now (self);
}

/* ---- GInitable ---- */

static guint64
own_namespace (void)
{
  struct stat info;

  return stat ("/proc/self/ns/net", &info) == 0 ? (guint64) info.st_ino : 0;
}

/* The first answer within INIT_WAIT_MS: the event that starts the link. */
static ReachdLinkEvent
first_answer (ReachdNetworkMonitor *self, GCancellable *cancellable, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + INIT_WAIT_MS * G_TIME_SPAN_MILLISECOND;
  ReachdLinkEvent opened = open_connection (self);

  if (opened == REACHD_EVENT_CONNECT_MISSING)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "%s: no reachd socket", self->socket_path);
      return opened;
    }
  if (opened == REACHD_EVENT_CONNECT_REFUSED)
    return REACHD_EVENT_STARTED_REFUSED;
  while (self->expect == EXPECT_NAMESPACE || self->expect == EXPECT_SUMMARY_FIRST || self->expect == EXPECT_SUBSCRIBE_FIRST)
    {
      g_autoptr (GError) local = NULL;
      const char *message;
      ReachdStatus status;
      gsize length;

      if (!reachd_socket_receive (self->socket, &self->framer, deadline, cancellable, &message, &length, &local))
        {
          if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
            return REACHD_EVENT_STARTED_SILENT;
          g_debug ("reachd at start: %s", local->message);
          drop_connection (self);
          return REACHD_EVENT_STARTED_REFUSED;
        }
      switch (read_reply (self, message, length, &status))
        {
        case REPLY_NOTHING:
          continue;
        case REPLY_ANSWER:
        case REPLY_UPDATE:
          self->answer = status;
          self->answered_at = g_get_monotonic_time ();
          return REACHD_EVENT_STARTED_ANSWERED;
        case REPLY_FOREIGN:
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "reachd answers for another network namespace");
          return REACHD_EVENT_FOREIGN;
        case REPLY_REFUSED:
          drop_connection (self);
          return REACHD_EVENT_STARTED_REFUSED;
        }
    }
  return REACHD_EVENT_STARTED_ANSWERED;
}

static gboolean
reachd_network_monitor_initable_init (GInitable *initable, GCancellable *cancellable, GError **error)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (initable);
  const char *path = g_getenv ("REACHD_SOCKET");
  ReachdLinkEvent started;

  self->socket_path = g_strdup (path != NULL && path[0] != '\0' ? path : DEFAULT_SOCKET);
  self->own_namespace = own_namespace ();
  self->context = g_main_context_ref_thread_default ();
  started = first_answer (self, cancellable, error);
  if (started == REACHD_EVENT_CONNECT_MISSING || started == REACHD_EVENT_FOREIGN)
    {
      drop_connection (self);
      return FALSE;
    }
  if (self->socket != NULL)
    {
      attach_reader (self);
      /* Replies that came with the first answer belong to the stream: handle them now, as
       * the source wakes only for new bytes. */
      if (started == REACHD_EVENT_STARTED_ANSWERED)
        {
          step (self, started);
          handle_replies (self);
          return TRUE;
        }
    }
  step (self, started);
  return TRUE;
}

/* ---- can_reach ---- */

static void
reach_context (ReachdNetworkMonitor *self, ReachdReachContext *context)
{
  context->socket_path = g_strdup (self->socket_path);
  g_mutex_lock (&self->lock);
  context->fallback = self->fallback != NULL ? g_object_ref (self->fallback) : NULL;
  context->available = self->answer.available;
  g_mutex_unlock (&self->lock);
}

static gboolean
reachd_network_monitor_can_reach (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                  GCancellable *cancellable, GError **error)
{
  ReachdReachContext context;

  reach_context (REACHD_NETWORK_MONITOR (monitor), &context);
  return reachd_can_reach (&context, connectable, cancellable, error);
}

static void
reachd_network_monitor_can_reach_async (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                        GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  ReachdReachContext context;

  reach_context (REACHD_NETWORK_MONITOR (monitor), &context);
  reachd_can_reach_async (monitor, &context, connectable, cancellable, callback, user_data);
}

static gboolean
reachd_network_monitor_can_reach_finish (GNetworkMonitor *monitor, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, monitor), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* ---- GObject ---- */

static void
reachd_network_monitor_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (object);

  g_mutex_lock (&self->lock);
  switch (prop_id)
    {
    case PROP_NETWORK_AVAILABLE:
      g_value_set_boolean (value, self->answer.available);
      break;
    case PROP_NETWORK_METERED:
      g_value_set_boolean (value, self->answer.metered);
      break;
    case PROP_CONNECTIVITY:
      g_value_set_enum (value, self->answer.connectivity);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
  g_mutex_unlock (&self->lock);
}

static void
reachd_network_monitor_init (ReachdNetworkMonitor *self)
{
  g_mutex_init (&self->lock);
  reachd_framer_init (&self->framer, REACHD_REPLY_MAX_BYTES);
  self->answer.connectivity = G_NETWORK_CONNECTIVITY_LOCAL;
}

static void
reachd_network_monitor_finalize (GObject *object)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (object);

  drop_connection (self);
  reachd_source_clear (&self->grace_source);
  reachd_source_clear (&self->retry_source);
  unwatch (self);
  stop_fallback (self);
  reachd_framer_clear (&self->framer);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_free (self->socket_path);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (reachd_network_monitor_parent_class)->finalize (object);
}

static void
reachd_network_monitor_class_init (ReachdNetworkMonitorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = reachd_network_monitor_get_property;
  object_class->finalize = reachd_network_monitor_finalize;
  g_object_class_override_property (object_class, PROP_NETWORK_AVAILABLE, "network-available");
  g_object_class_override_property (object_class, PROP_NETWORK_METERED, "network-metered");
  g_object_class_override_property (object_class, PROP_CONNECTIVITY, "connectivity");
  /* Looked up once, not by name per change. */
  available_pspec = g_object_class_find_property (object_class, "network-available");
  metered_pspec = g_object_class_find_property (object_class, "network-metered");
  connectivity_pspec = g_object_class_find_property (object_class, "connectivity");
  changed_signal = g_signal_lookup ("network-changed", G_TYPE_NETWORK_MONITOR);
}

static void
reachd_network_monitor_iface_init (GNetworkMonitorInterface *iface)
{
  iface->can_reach = reachd_network_monitor_can_reach;
  iface->can_reach_async = reachd_network_monitor_can_reach_async;
  iface->can_reach_finish = reachd_network_monitor_can_reach_finish;
}

static void
reachd_network_monitor_initable_iface_init (GInitableIface *iface)
{
  iface->init = reachd_network_monitor_initable_init;
}

/* ---- The module: only these three are exported (-fvisibility=hidden) ---- */

G_MODULE_EXPORT void g_io_module_load (GIOModule *module);
G_MODULE_EXPORT void g_io_module_unload (GIOModule *module);
G_MODULE_EXPORT char **g_io_module_query (void);

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  /* The type is registered statically, so the module must never be unloaded. */
  g_type_module_use (G_TYPE_MODULE (module));
  g_io_extension_point_implement (G_NETWORK_MONITOR_EXTENSION_POINT_NAME, REACHD_TYPE_NETWORK_MONITOR, "reachd", PRIORITY);
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
  (void) module;
}

G_MODULE_EXPORT char **
g_io_module_query (void)
{
  char *extension_points[] = { (char *) G_NETWORK_MONITOR_EXTENSION_POINT_NAME, NULL };

  return g_strdupv (extension_points);
}
