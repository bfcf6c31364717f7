/* reachd-network-monitor.c: a GNetworkMonitor that asks reachd.
 *
 * Loaded by GIO into every GLib program that asks for the default network monitor, as the
 * "reachd" implementation of the gio-network-monitor extension point at priority 35:
 * above NetworkManager's 30, below the portal's 40 (so sandboxed apps still ask the
 * portal, and the portal, outside the sandbox, asks this one).
 *
 * Life cycle
 *   init      connects to $REACHD_SOCKET (else /run/reachd/io.reachd.Reachability), sends
 *             SubscribeSummary (more=true) and waits for its first reply, the answer now, at
 *             most INIT_TIMEOUT_MS. A reachd without that method (MethodNotFound) is asked
 *             GetStatus instead, then Subscribe. No socket, no answer in time, another
 *             Varlink error (a reachd that refuses the call) or a reply without status: init
 *             fails and GIO takes the next implementation. The app never waits longer than
 *             that deadline.
 *   then      the stream on the same connection, read from a GSocket source on the
 *             thread-default main context of construction. SubscribeSummary replies only
 *             when status, connectivity, isExpensive or isConstrained moved, and a fraction
 *             of a Subscribe reply's size. Each reply that moves network-available,
 *             connectivity or network-metered updates them (notify::) and emits
 *             network-changed once; other changes (gateways, flags, …) emit nothing.
 *   restart   when the stream ends (reachd restarted, a reply over the bounds), the last
 *             answer is kept and nothing is emitted; a timeout on the same context
 *             reconnects after 0.1 s, doubling to 5 s (a stream that lived 5 s starts
 *             again from 0.1 s; one that dies at once does not), with SubscribeSummary and
 *             Subscribe after a MethodNotFound as at init. The new stream's first reply emits
 *             network-changed only if it differs from the kept answer: an app neither goes
 *             offline because a daemon restarted nor hears about the restart at all.
 *
 * Mapping (reachd's Path → GNetworkMonitor)
 *   network-available   path.status == "satisfied" (unsatisfied, requiresConnection: FALSE)
 *   connectivity        unsatisfied path                         → LOCAL
 *                       satisfied, connectivity "full"/"partial"/
 *                         "unknown" (not probed) or absent       → FULL (as GLib's backends)
 *                       "portal"                                 → PORTAL
 *                       "limited"                                → LIMITED
 *                       "none" / "local"                         → LOCAL
 *   network-metered     path.isExpensive || path.isConstrained
 *
 * can_reach (CheckTarget on a connection of its own, with the app's uid, so reachd's route
 * lookup sees per-user routing rules). Target: a GNetworkAddress's hostname, a
 * GInetSocketAddress's address text, else the first address the connectable enumerates
 * (a non-IP address, e.g. a Unix socket's, is reachable). Answer:
 *   status "satisfied"                                         → TRUE
 *   nameNotFound                                               → G_RESOLVER_ERROR_NOT_FOUND
 *   noDNSServer, resolutionFailed, resolutionTimedOut          → G_RESOLVER_ERROR_TEMPORARY_FAILURE
 *   noRoute, noInterface, blackholeRoute, prohibitedRoute      → G_IO_ERROR_NETWORK_UNREACHABLE
 *   any other reason (unreachableRoute, gatewayUnreachable,
 *     noCarrier, interfaceDown, noAddress, connectionRequired, …) → G_IO_ERROR_HOST_UNREACHABLE
 *   reachd gone, too slow (CHECK_TIMEOUT_MS) or refusing       → the kept answer: TRUE when
 *                                                                network-available, else
 *                                                                G_IO_ERROR_NETWORK_UNREACHABLE
 * can_reach_async runs that whole blocking exchange in a GTask thread (GIO's pool): it
 * never blocks the caller's context, and g_cancellable_cancel ends it at once.
 *
 * Cost in the app: one Unix socket and one GSource; no netlink socket, no route dump, no
 * timer while connected (0 system calls while nothing changes). Replies are bounded in
 * size and JSON depth (reachd-reply.c); a reply over the bounds drops the connection. */
#include "reachd-reply.h"

#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>
#include <json-glib/json-glib.h>
#include <string.h>

#define DEFAULT_SOCKET "/run/reachd/io.reachd.Reachability"
#define INIT_TIMEOUT_MS 500
#define CHECK_TIMEOUT_MS 10000
#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 5000
#define READ_CHUNK 65536

static const char get_status_call[] = "{\"method\":\"io.reachd.Reachability.GetStatus\"}";
static const char subscribe_call[] = "{\"method\":\"io.reachd.Reachability.Subscribe\",\"parameters\":{},\"more\":true}";
static const char summary_call[] = "{\"method\":\"io.reachd.Reachability.SubscribeSummary\",\"more\":true}";

#define REACHD_TYPE_NETWORK_MONITOR (reachd_network_monitor_get_type ())
G_DECLARE_FINAL_TYPE (ReachdNetworkMonitor, reachd_network_monitor, REACHD, NETWORK_MONITOR, GObject)

struct _ReachdNetworkMonitor
{
  GObject parent_instance;

  /* The answer: written on the monitor's context, read from any thread. */
  GMutex lock;
  gboolean available;
  gboolean metered;
  GNetworkConnectivity connectivity;

  /* Looked up once, not by name per change. */
  GParamSpec *available_pspec, *metered_pspec, *connectivity_pspec;
  guint changed_signal;

  /* Only touched on the monitor's context (and by init, before anyone else can). */
  char *socket_path;
  GMainContext *context;
  GSocket *socket;          /* the Subscribe stream; NULL while reconnecting */
  GSource *read_source;
  GSource *retry_source;
  GByteArray *buffer;       /* bytes of the reply being read */
  guint scanned;            /* bytes of buffer known to hold no NUL */
  gboolean summary;         /* the stream is SubscribeSummary's (FALSE: Subscribe's, an older reachd) */
  guint backoff_ms;         /* the next reconnect's delay */
  gint64 stream_since;      /* when the current stream was attached (monotonic µs) */
};

enum { PROP_0, PROP_NETWORK_AVAILABLE, PROP_NETWORK_METERED, PROP_CONNECTIVITY };

static void reachd_network_monitor_iface_init (GNetworkMonitorInterface *iface);
static void reachd_network_monitor_initable_iface_init (GInitableIface *iface);

G_DEFINE_TYPE_WITH_CODE (ReachdNetworkMonitor, reachd_network_monitor, G_TYPE_OBJECT,
                         G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, reachd_network_monitor_initable_iface_init)
                         G_IMPLEMENT_INTERFACE (G_TYPE_NETWORK_MONITOR, reachd_network_monitor_iface_init))

/* ---- Blocking exchanges with a deadline (init and can_reach) ---- */

static gint64
remaining_us (gint64 deadline)
{
  return MAX (deadline - g_get_monotonic_time (), 0);
}

static gboolean
wait_for (GSocket *socket, GIOCondition condition, gint64 deadline, GCancellable *cancellable, GError **error)
{
  gint64 left = remaining_us (deadline);

  if (left == 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "reachd did not answer in time");
      return FALSE;
    }
  return g_socket_condition_timed_wait (socket, condition, left, cancellable, error);
}

/* A non-blocking socket connected to reachd; connect(2) on a Unix socket answers at once
 * unless the listener's backlog is full, and then the deadline bounds the wait. */
static GSocket *
connect_reachd (const char *path, gint64 deadline, GCancellable *cancellable, GError **error)
{
  GSocket *socket;
  GSocketAddress *address;
  GError *local = NULL;
  gboolean connected;

  socket = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_DEFAULT, error);
  if (socket == NULL)
    return NULL;
  g_socket_set_blocking (socket, FALSE);
  address = g_unix_socket_address_new (path);
  connected = g_socket_connect (socket, address, cancellable, &local);
  g_object_unref (address);
  if (!connected && g_error_matches (local, G_IO_ERROR, G_IO_ERROR_PENDING))
    {
      g_clear_error (&local);
      connected = wait_for (socket, G_IO_OUT, deadline, cancellable, &local)
                  && g_socket_check_connect_result (socket, &local);
    }
  if (!connected)
    {
      g_propagate_prefixed_error (error, local, "%s: ", path);
      g_object_unref (socket);
      return NULL;
    }
  return socket;
}

/* Sends one Varlink message and its NUL terminator. */
static gboolean
send_call (GSocket *socket, const char *call, gsize length, gint64 deadline, GCancellable *cancellable, GError **error)
{
  gsize sent = 0, total = length + 1;  /* the string's own NUL frames the message */

  while (sent < total)
    {
      GError *local = NULL;
      gssize n = g_socket_send (socket, call + sent, total - sent, cancellable, &local);

      if (n < 0 && g_error_matches (local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        {
          g_clear_error (&local);
          if (!wait_for (socket, G_IO_OUT, deadline, cancellable, error))
            return FALSE;
          continue;
        }
      if (n < 0)
        {
          g_propagate_error (error, local);
          return FALSE;
        }
      sent += (gsize) n;
    }
  return TRUE;
}

/* Receives into buffer (appending) until it holds a NUL; returns the message's length. */
static gssize
receive_reply (GSocket *socket, GByteArray *buffer, gint64 deadline, GCancellable *cancellable, GError **error)
{
  gsize scanned = 0;

  for (;;)
    {
      const guint8 *nul = memchr (buffer->data + scanned, 0, buffer->len - scanned);
      GError *local = NULL;
      guint old = buffer->len;
      gssize n;

      if (nul != NULL)
        return nul - buffer->data;
      if (buffer->len > REACHD_REPLY_MAX_BYTES)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE, "reachd's reply is over the limit");
          return -1;
        }
      scanned = buffer->len;
      if (!wait_for (socket, G_IO_IN, deadline, cancellable, error))
        return -1;
      g_byte_array_set_size (buffer, old + READ_CHUNK);
      n = g_socket_receive (socket, (char *) buffer->data + old, READ_CHUNK, cancellable, &local);
      g_byte_array_set_size (buffer, old + MAX (n, 0));
      if (n < 0 && g_error_matches (local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        g_clear_error (&local);
      else if (n < 0)
        {
          g_propagate_error (error, local);
          return -1;
        }
      else if (n == 0)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED, "reachd closed the connection");
          return -1;
        }
    }
}

/* ---- The answer ---- */

static void
publish (ReachdNetworkMonitor *self, const ReachdStatus *status)
{
  gboolean available_changed, metered_changed, connectivity_changed, available;

  g_mutex_lock (&self->lock);
  available_changed = self->available != status->available;
  metered_changed = self->metered != status->metered;
  connectivity_changed = self->connectivity != status->connectivity;
  self->available = status->available;
  self->metered = status->metered;
  self->connectivity = status->connectivity;
  g_mutex_unlock (&self->lock);

  if (!available_changed && !metered_changed && !connectivity_changed)
    return;
  g_object_freeze_notify (G_OBJECT (self));
  if (available_changed)
    g_object_notify_by_pspec (G_OBJECT (self), self->available_pspec);
  if (metered_changed)
    g_object_notify_by_pspec (G_OBJECT (self), self->metered_pspec);
  if (connectivity_changed)
    g_object_notify_by_pspec (G_OBJECT (self), self->connectivity_pspec);
  g_object_thaw_notify (G_OBJECT (self));
  /* The value now: a handler above may have run a nested main loop that published again. */
  g_mutex_lock (&self->lock);
  available = self->available;
  g_mutex_unlock (&self->lock);
  g_signal_emit (self, self->changed_signal, 0, available);
}

/* ---- The Subscribe stream, on the monitor's context ---- */

static void schedule_reconnect (ReachdNetworkMonitor *self);

static void
drop_stream (ReachdNetworkMonitor *self)
{
  if (self->read_source != NULL)
    {
      g_source_destroy (self->read_source);
      g_clear_pointer (&self->read_source, g_source_unref);
    }
  if (self->socket != NULL)
    {
      g_socket_close (self->socket, NULL);
      g_clear_object (&self->socket);
    }
  g_byte_array_set_size (self->buffer, 0);
  self->scanned = 0;
}

/* Ends the stream and schedules the reconnect. */
static gboolean
end_stream (ReachdNetworkMonitor *self)
{
  drop_stream (self);
  /* A stream that lived is a restart: retry soon. One that died at once (a reachd in a
   * crash loop, or one sending what we refuse) keeps doubling the delay. */
  if (g_get_monotonic_time () - self->stream_since >= BACKOFF_MAX_MS * G_TIME_SPAN_MILLISECOND)
    self->backoff_ms = BACKOFF_FIRST_MS;
  schedule_reconnect (self);
  return G_SOURCE_REMOVE;
}

/* Reads what is there (one recv per wake-up) and handles each whole reply. The source may
 * recurse (attach_stream), so each reply leaves the buffer before it is published. */
static gboolean
on_readable (GSocket *socket, GIOCondition condition, gpointer user_data)
{
  ReachdNetworkMonitor *self = user_data;
  GByteArray *buffer = self->buffer;
  guint old = buffer->len;
  GError *error = NULL;
  gssize n;

  (void) condition;
  g_byte_array_set_size (buffer, old + READ_CHUNK);
  n = g_socket_receive (socket, (char *) buffer->data + old, READ_CHUNK, NULL, &error);
  g_byte_array_set_size (buffer, old + MAX (n, 0));
  if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
    {
      g_error_free (error);
      return G_SOURCE_CONTINUE;
    }
  g_clear_error (&error);
  if (n <= 0)
    return end_stream (self);

  for (;;)
    {
      const guint8 *nul = memchr (buffer->data + self->scanned, 0, buffer->len - self->scanned);
      ReachdStatus status;
      gboolean decoded;
      gsize length;

      if (nul == NULL)
        break;
      length = nul - buffer->data;
      decoded = self->summary ? reachd_reply_decode_summary ((const char *) buffer->data, length, &status, &error)
                              : reachd_reply_decode_status ((const char *) buffer->data, length, &status, &error);
      g_byte_array_remove_range (buffer, 0, length + 1);
      self->scanned = 0;
      if (!decoded && self->summary && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        {
          /* A reachd older than SubscribeSummary: Subscribe on the same connection. */
          g_clear_error (&error);
          self->summary = FALSE;
          if (send_call (socket, subscribe_call, strlen (subscribe_call), g_get_monotonic_time (), NULL, NULL))
            continue;
          g_debug ("reachd: dropping the stream: cannot send Subscribe");
          return end_stream (self);
        }
      if (!decoded)
        {
          g_debug ("reachd: dropping the stream: %s", error->message);
          g_clear_error (&error);
          return end_stream (self);
        }
      publish (self, &status);
      if (self->socket != socket)
        return G_SOURCE_REMOVE;  /* a nested main loop in a handler ended this stream */
      if (!status.continues)
        return end_stream (self);  /* a stream that says it is over is over */
    }
  self->scanned = buffer->len;
  if (buffer->len <= REACHD_REPLY_MAX_BYTES)
    return G_SOURCE_CONTINUE;
  g_debug ("reachd: dropping the stream: a reply over %d bytes", REACHD_REPLY_MAX_BYTES);
  return end_stream (self);
}

static void
attach_stream (ReachdNetworkMonitor *self, GSocket *socket)
{
  self->socket = socket;
  self->stream_since = g_get_monotonic_time ();
  self->read_source = g_socket_create_source (socket, G_IO_IN, NULL);
  /* GLib 2.74 takes a non-recursive source's descriptor out of the poll set around each
   * dispatch, and wakes its own context twice to do so: two eventfd writes and one more
   * main-loop turn per change. on_readable is safe to recurse. */
  g_source_set_can_recurse (self->read_source, TRUE);
  g_source_set_callback (self->read_source, G_SOURCE_FUNC (on_readable), self, NULL);
  g_source_set_name (self->read_source, "[reachd] Subscribe stream");
  g_source_attach (self->read_source, self->context);
}

static gboolean
on_retry (gpointer user_data)
{
  ReachdNetworkMonitor *self = user_data;
  gint64 now = g_get_monotonic_time ();  /* as deadline: never wait on the app's context */
  GSocket *socket;

  g_clear_pointer (&self->retry_source, g_source_unref);
  socket = connect_reachd (self->socket_path, now, NULL, NULL);
  self->summary = TRUE;
  if (socket != NULL && send_call (socket, summary_call, strlen (summary_call), now, NULL, NULL))
    attach_stream (self, socket);  /* its first reply says whether anything changed */
  else
    {
      g_clear_object (&socket);
      schedule_reconnect (self);
    }
  return G_SOURCE_REMOVE;
}

/* Retries after the current delay, and doubles it (up to BACKOFF_MAX_MS) for the next. */
static void
schedule_reconnect (ReachdNetworkMonitor *self)
{
  self->retry_source = g_timeout_source_new (self->backoff_ms);
  self->backoff_ms = MIN (self->backoff_ms * 2, BACKOFF_MAX_MS);
  g_source_set_callback (self->retry_source, on_retry, self, NULL);
  g_source_set_name (self->retry_source, "[reachd] reconnect");
  g_source_attach (self->retry_source, self->context);
}

/* ---- GInitable ---- */

/* Sends SubscribeSummary and returns the length of its first reply in the buffer (the
 * answer now); from a reachd without that method, of GetStatus's, and sends Subscribe.
 * -1 with an error when neither answered. */
static gssize
first_answer (ReachdNetworkMonitor *self, GSocket *socket, gint64 deadline, GCancellable *cancellable,
              ReachdStatus *status, GError **error)
{
  GError *local = NULL;
  gssize length;

  if (!send_call (socket, summary_call, strlen (summary_call), deadline, cancellable, error)
      || (length = receive_reply (socket, self->buffer, deadline, cancellable, error)) < 0)
    return -1;
  self->summary = reachd_reply_decode_summary ((const char *) self->buffer->data, length, status, &local);
  if (self->summary)
    return length;
  if (!g_error_matches (local, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
    {
      g_propagate_error (error, local);
      return -1;
    }
  g_error_free (local);
  g_byte_array_remove_range (self->buffer, 0, length + 1);
  if (!send_call (socket, get_status_call, strlen (get_status_call), deadline, cancellable, error)
      || (length = receive_reply (socket, self->buffer, deadline, cancellable, error)) < 0
      || !reachd_reply_decode_status ((const char *) self->buffer->data, length, status, error)
      || !send_call (socket, subscribe_call, strlen (subscribe_call), deadline, cancellable, error))
    return -1;
  return length;
}

static gboolean
reachd_network_monitor_initable_init (GInitable *initable, GCancellable *cancellable, GError **error)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (initable);
  gint64 deadline = g_get_monotonic_time () + INIT_TIMEOUT_MS * G_TIME_SPAN_MILLISECOND;
  const char *path = g_getenv ("REACHD_SOCKET");
  ReachdStatus status;
  GSocket *socket;
  gssize length;

  self->socket_path = g_strdup (path != NULL && path[0] != '\0' ? path : DEFAULT_SOCKET);
  socket = connect_reachd (self->socket_path, deadline, cancellable, error);
  if (socket == NULL)
    return FALSE;
  length = first_answer (self, socket, deadline, cancellable, &status, error);
  if (length < 0)
    {
      g_object_unref (socket);
      return FALSE;
    }
  /* Anything after this reply already belongs to the stream. */
  g_byte_array_remove_range (self->buffer, 0, length + 1);
  self->available = status.available;
  self->metered = status.metered;
  self->connectivity = status.connectivity;
  self->context = g_main_context_ref_thread_default ();
  attach_stream (self, socket);
  return TRUE;
}

/* ---- can_reach ---- */

/* The host to ask reachd about; "" for an address that is not IP (nothing to route). */
static char *
target_host (GSocketConnectable *connectable, GCancellable *cancellable, GError **error)
{
  GSocketAddressEnumerator *enumerator;
  GSocketAddress *address;
  char *host = NULL;

  if (G_IS_NETWORK_ADDRESS (connectable))
    return g_strdup (g_network_address_get_hostname (G_NETWORK_ADDRESS (connectable)));
  if (G_IS_INET_SOCKET_ADDRESS (connectable))
    return g_inet_address_to_string (g_inet_socket_address_get_address (G_INET_SOCKET_ADDRESS (connectable)));
  enumerator = g_socket_connectable_enumerate (connectable);
  address = g_socket_address_enumerator_next (enumerator, cancellable, error);
  g_object_unref (enumerator);
  if (address != NULL && G_IS_INET_SOCKET_ADDRESS (address))
    host = g_inet_address_to_string (g_inet_socket_address_get_address (G_INET_SOCKET_ADDRESS (address)));
  else if (address != NULL)
    host = g_strdup ("");  /* not an IP address: nothing for reachd to route */
  else if (error != NULL && *error == NULL)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_HOST_NOT_FOUND, "no address to reach");
  g_clear_object (&address);
  return host;
}

static char *
check_target_call (const char *host)
{
  JsonBuilder *builder = json_builder_new ();
  JsonGenerator *generator = json_generator_new ();
  JsonNode *root;
  char *call;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "method");
  json_builder_add_string_value (builder, "io.reachd.Reachability.CheckTarget");
  json_builder_set_member_name (builder, "parameters");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "host");
  json_builder_add_string_value (builder, host);
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  call = json_generator_to_data (generator, NULL);
  json_node_unref (root);
  g_object_unref (generator);
  g_object_unref (builder);
  return call;
}

/* The whole blocking exchange: in the caller's thread for can_reach, in a GTask thread for
 * can_reach_async. */
static gboolean
reachd_network_monitor_can_reach (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                  GCancellable *cancellable, GError **error)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (monitor);
  gint64 deadline = g_get_monotonic_time () + CHECK_TIMEOUT_MS * G_TIME_SPAN_MILLISECOND;
  GByteArray *buffer;
  GSocket *socket;
  GError *local = NULL;
  gboolean answered = FALSE, reachable = FALSE, available;
  char *host, *call;
  gssize length;

  host = target_host (connectable, cancellable, error);
  if (host == NULL)
    return FALSE;
  if (host[0] == '\0')
    {
      g_free (host);
      return TRUE;
    }
  call = check_target_call (host);
  buffer = g_byte_array_new ();
  socket = connect_reachd (self->socket_path, deadline, cancellable, &local);
  if (socket != NULL && send_call (socket, call, strlen (call), deadline, cancellable, &local)
      && (length = receive_reply (socket, buffer, deadline, cancellable, &local)) >= 0)
    {
      reachable = reachd_reply_decode_target ((const char *) buffer->data, length, &local);
      /* A decoded reason is reachd's answer; a malformed or refused reply is not. */
      answered = reachable || (local != NULL && !g_error_matches (local, G_IO_ERROR, G_IO_ERROR_INVALID_DATA)
                                              && !g_error_matches (local, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED));
    }
  g_clear_object (&socket);
  g_byte_array_unref (buffer);
  g_free (call);
  g_free (host);
  if (answered || g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      if (local != NULL)
        g_propagate_error (error, local);
      return reachable;
    }
  /* reachd is gone or refused: the kept answer, as network-available says it. */
  g_debug ("reachd: CheckTarget unanswered (%s); using the last answer", local != NULL ? local->message : "?");
  g_clear_error (&local);
  g_mutex_lock (&self->lock);
  available = self->available;
  g_mutex_unlock (&self->lock);
  if (!available)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE, "Network unreachable");
  return available;
}

static void
can_reach_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  GError *error = NULL;

  if (reachd_network_monitor_can_reach (source, task_data, cancellable, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
reachd_network_monitor_can_reach_async (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                        GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task = g_task_new (monitor, cancellable, callback, user_data);

  g_task_set_source_tag (task, reachd_network_monitor_can_reach_async);
  g_task_set_task_data (task, g_object_ref (connectable), g_object_unref);
  g_task_run_in_thread (task, can_reach_thread);
  g_object_unref (task);
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
      g_value_set_boolean (value, self->available);
      break;
    case PROP_NETWORK_METERED:
      g_value_set_boolean (value, self->metered);
      break;
    case PROP_CONNECTIVITY:
      g_value_set_enum (value, self->connectivity);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
  g_mutex_unlock (&self->lock);
}

static void
reachd_network_monitor_init (ReachdNetworkMonitor *self)
{
  GObjectClass *klass = G_OBJECT_GET_CLASS (self);

  g_mutex_init (&self->lock);
  self->available_pspec = g_object_class_find_property (klass, "network-available");
  self->metered_pspec = g_object_class_find_property (klass, "network-metered");
  self->connectivity_pspec = g_object_class_find_property (klass, "connectivity");
  self->changed_signal = g_signal_lookup ("network-changed", G_TYPE_NETWORK_MONITOR);
  self->buffer = g_byte_array_new ();
  self->backoff_ms = BACKOFF_FIRST_MS;
  self->connectivity = G_NETWORK_CONNECTIVITY_LOCAL;
}

static void
reachd_network_monitor_finalize (GObject *object)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (object);

  drop_stream (self);
  if (self->retry_source != NULL)
    {
      g_source_destroy (self->retry_source);
      g_clear_pointer (&self->retry_source, g_source_unref);
    }
  g_byte_array_unref (self->buffer);
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

/* ---- The module ---- */

G_MODULE_EXPORT void g_io_module_load (GIOModule *module);
G_MODULE_EXPORT void g_io_module_unload (GIOModule *module);
G_MODULE_EXPORT char **g_io_module_query (void);

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  /* The type is registered statically, so the module must never be unloaded. */
  g_type_module_use (G_TYPE_MODULE (module));
  g_io_extension_point_implement (G_NETWORK_MONITOR_EXTENSION_POINT_NAME, REACHD_TYPE_NETWORK_MONITOR, "reachd", 35);
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
