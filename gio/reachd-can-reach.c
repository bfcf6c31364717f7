/* reachd-can-reach.c: see reachd-can-reach.h.
 *
 * Answers (reachd-reply.c maps each CheckTarget reason):
 *   an address reachd calls reachable (or one that is not IP, a Unix socket's) → TRUE
 *   none reachable   → the first address's error (NETWORK_UNREACHABLE or HOST_UNREACHABLE)
 *   no address       → the enumeration's error (the app's resolver: G_RESOLVER_ERROR_*)
 *   reachd silent past the deadline, gone or refusing → GLib's base monitor's rule on the
 *                      monitor's answer: TRUE while network-available, else NETWORK_UNREACHABLE;
 *                      while reachd is not answering at all, the fallback monitor's can_reach. */
#include "reachd-can-reach.h"

#include "reachd-reply.h"
#include "reachd-socket.h"

#include <json-glib/json-glib.h>
#include <net/if.h>

void
reachd_reach_context_clear (ReachdReachContext *context)
{
  g_clear_pointer (&context->socket_path, g_free);
  g_clear_object (&context->fallback);
}

/* A CheckTarget call for one address, NUL included; NULL for an address that is not IP. */
static char *
check_target_call (GSocketAddress *address, gsize *length)
{
  GInetSocketAddress *inet;
  g_autofree char *text = NULL;
  g_autoptr (JsonBuilder) builder = NULL;
  g_autoptr (JsonGenerator) generator = NULL;
  g_autoptr (JsonNode) root = NULL;
  char interface[IF_NAMESIZE];
  char *call;
  gsize size;

  if (!G_IS_INET_SOCKET_ADDRESS (address))
    return NULL;
  inet = G_INET_SOCKET_ADDRESS (address);
  text = g_inet_address_to_string (g_inet_socket_address_get_address (inet));
  /* A link-local address means nothing without its link (reachd's fe80::1%eth0). Only
   * IPv6 has a scope (GLib's getter is critical on IPv4). */
  if (g_inet_address_get_family (g_inet_socket_address_get_address (inet)) == G_SOCKET_FAMILY_IPV6
      && g_inet_socket_address_get_scope_id (inet) != 0
      && if_indextoname (g_inet_socket_address_get_scope_id (inet), interface) != NULL)
    {
      char *scoped = g_strdup_printf ("%s%%%s", text, interface);

      g_free (text);
      text = scoped;
    }
  builder = json_builder_new ();
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "method");
  json_builder_add_string_value (builder, "io.reachd.Reachability.CheckTarget");
  json_builder_set_member_name (builder, "parameters");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "address");
  json_builder_add_string_value (builder, text);
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  generator = json_generator_new ();
  json_generator_set_root (generator, root);
  call = json_generator_to_data (generator, &size);
  *length = size + 1;  /* the string's own NUL frames the message */
  return call;
}

typedef enum {
  VERDICT_REACHABLE,
  VERDICT_UNREACHABLE,  /* reachd's reason, in the error */
  VERDICT_UNANSWERED,   /* reachd did not give one */
} Verdict;

/* What reachd's reply to one CheckTarget says. */
static Verdict
verdict_of (const char *message, gsize length, GError **error)
{
  g_autoptr (GError) local = NULL;

  if (reachd_reply_decode_target (message, length, &local))
    return VERDICT_REACHABLE;
  /* A decoded reason is reachd's answer; a malformed or refused reply is not. */
  if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_INVALID_DATA) || g_error_matches (local, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED))
    {
      g_debug ("CheckTarget unanswered: %s", local->message);
      return VERDICT_UNANSWERED;
    }
  g_propagate_error (error, g_steal_pointer (&local));
  return VERDICT_UNREACHABLE;
}

/* GLib's base monitor's rule, on the monitor's answer. */
static gboolean
base_rule (gboolean available, GError **error)
{
  if (!available)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE, "Network unreachable");
  return available;
}

/* The answer once every address was tried: the first one's reason, else the enumeration's error. */
static gboolean
none_reachable (GError *first, GError *enumeration, GError **error)
{
  if (enumeration != NULL && g_error_matches (enumeration, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_propagate_error (error, g_error_copy (enumeration));
  else if (first != NULL)
    g_propagate_error (error, g_error_copy (first));
  else if (enumeration != NULL)
    g_propagate_error (error, g_error_copy (enumeration));
  else
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE, "Host unreachable");
  return FALSE;
}

/* ---- The blocking call ---- */

/* Asks reachd about one address on `*socket` (connected on first use). */
static Verdict
ask_blocking (const char *socket_path, GSocket **socket, ReachdFramer *framer, GSocketAddress *address,
              gint64 deadline, GCancellable *cancellable, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree char *call = NULL;
  const char *message;
  gsize length, message_length;

  call = check_target_call (address, &length);
  if (call == NULL)
    return VERDICT_REACHABLE;  /* not IP: nothing for reachd to route */
  if (*socket == NULL)
    *socket = reachd_socket_connect (socket_path, &local);
  if (*socket == NULL || !reachd_socket_send (*socket, call, length, deadline, cancellable, &local)
      || !reachd_socket_receive (*socket, framer, deadline, cancellable, &message, &message_length, &local))
    {
      if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return VERDICT_UNREACHABLE;
        }
      g_debug ("CheckTarget unanswered: %s", local != NULL ? local->message : "?");
      return VERDICT_UNANSWERED;
    }
  return verdict_of (message, message_length, error);
}

gboolean
reachd_can_reach (ReachdReachContext *context, GSocketConnectable *connectable, GCancellable *cancellable,
                  GError **error)
{
  g_autoptr (GSocketAddressEnumerator) enumerator = NULL;
  g_autoptr (GSocket) socket = NULL;
  g_autoptr (GError) first = NULL, enumeration = NULL;
  ReachdFramer framer;
  gint64 deadline = 0;
  gboolean answer;

  if (context->fallback != NULL)
    {
      answer = g_network_monitor_can_reach (context->fallback, connectable, cancellable, error);
      reachd_reach_context_clear (context);
      return answer;
    }
  reachd_framer_init (&framer, REACHD_REPLY_MAX_BYTES);
  enumerator = g_socket_connectable_proxy_enumerate (connectable);
  for (;;)
    {
      g_autoptr (GSocketAddress) address = g_socket_address_enumerator_next (enumerator, cancellable, &enumeration);
      g_autoptr (GError) reason = NULL;

      if (address == NULL)
        {
          answer = none_reachable (first, enumeration, error);
          break;
        }
      if (deadline == 0)  /* the deadline bounds reachd's part, not the app's own resolver */
        deadline = g_get_monotonic_time () + REACHD_CAN_REACH_SYNC_MS * G_TIME_SPAN_MILLISECOND;
      switch (ask_blocking (context->socket_path, &socket, &framer, address, deadline, cancellable, &reason))
        {
        case VERDICT_REACHABLE:
          answer = TRUE;
          goto done;
        case VERDICT_UNREACHABLE:
          if (g_error_matches (reason, G_IO_ERROR, G_IO_ERROR_CANCELLED))
            {
              g_propagate_error (error, g_steal_pointer (&reason));
              answer = FALSE;
              goto done;
            }
          if (first == NULL)
            first = g_steal_pointer (&reason);
          continue;
        case VERDICT_UNANSWERED:
          answer = base_rule (context->available, error);
          goto done;
        }
    }
done:
  reachd_framer_clear (&framer);
  reachd_reach_context_clear (context);
  return answer;
}

/* ---- The asynchronous call: every step a callback on the task's context ---- */

typedef struct {
  ReachdReachContext context;
  GSocketAddressEnumerator *enumerator;
  GSocket *socket;
  GSource *reply_source;   /* the socket readable (or the cancellable cancelled) */
  GSource *timeout;        /* reachd's answer overdue */
  ReachdFramer framer;
  GError *first;           /* the first address's reason */
  gboolean done;
} AsyncReach;

static void
stop_waiting (AsyncReach *reach)
{
  reachd_source_clear (&reach->reply_source);
  reachd_source_clear (&reach->timeout);
}

static void
async_reach_free (AsyncReach *reach)
{
  stop_waiting (reach);
  g_clear_object (&reach->enumerator);
  if (reach->socket != NULL)
    g_socket_close (reach->socket, NULL);
  g_clear_object (&reach->socket);
  reachd_framer_clear (&reach->framer);
  g_clear_error (&reach->first);
  reachd_reach_context_clear (&reach->context);
  g_free (reach);
}

/* Returns the answer (error: NULL for TRUE); the task holds no more callbacks after. */
static void
finish (GTask *task, gboolean reachable, GError *error)
{
  AsyncReach *reach = g_task_get_task_data (task);

  reach->done = TRUE;
  stop_waiting (reach);
  if (reachable)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void finish_base_rule (GTask *task);
static void ask_next (GTask *task);

static gboolean
on_timeout (gpointer user_data)
{
  GTask *task = user_data;

  g_debug ("CheckTarget unanswered within %d ms", REACHD_CAN_REACH_ASYNC_MS);
  finish_base_rule (task);
  return G_SOURCE_REMOVE;
}

static void
finish_base_rule (GTask *task)
{
  AsyncReach *reach = g_task_get_task_data (task);
  GError *error = NULL;
  gboolean reachable = base_rule (reach->context.available, &error);

  finish (task, reachable, error);
}

static gboolean
on_reply (GSocket *socket, GIOCondition condition, gpointer user_data)
{
  GTask *task = user_data;
  AsyncReach *reach = g_task_get_task_data (task);
  GError *error = NULL;
  const char *message;
  gsize length;
  gssize n;

  (void) condition;
  if (g_cancellable_set_error_if_cancelled (g_task_get_cancellable (task), &error))
    {
      finish (task, FALSE, error);
      return G_SOURCE_REMOVE;
    }
  n = reachd_socket_read (socket, &reach->framer, &error);
  if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
    {
      g_clear_error (&error);
      return G_SOURCE_CONTINUE;
    }
  switch (n > 0 ? reachd_framer_next (&reach->framer, &message, &length) : REACHD_FRAME_OVERSIZE)
    {
    case REACHD_FRAME_NONE:
      return G_SOURCE_CONTINUE;
    case REACHD_FRAME_OVERSIZE:  /* or closed, or failed */
      g_debug ("CheckTarget unanswered: %s", error != NULL ? error->message : "reachd closed the connection");
      g_clear_error (&error);
      finish_base_rule (task);
      return G_SOURCE_REMOVE;
    case REACHD_FRAME_MESSAGE:
      break;
    }
  stop_waiting (reach);
  switch (verdict_of (message, length, &error))
    {
    case VERDICT_REACHABLE:
      finish (task, TRUE, NULL);
      break;
    case VERDICT_UNREACHABLE:
      if (reach->first == NULL)
        reach->first = error;
      else
        g_error_free (error);
      ask_next (task);
      break;
    case VERDICT_UNANSWERED:
      finish_base_rule (task);
      break;
    }
  return G_SOURCE_REMOVE;
}

/* Sends one CheckTarget and waits for its reply on the task's context. */
static void
ask_async (GTask *task, GSocketAddress *address)
{
  AsyncReach *reach = g_task_get_task_data (task);
  g_autoptr (GError) error = NULL;
  g_autofree char *call = NULL;
  gsize length;

  call = check_target_call (address, &length);
  if (call == NULL)
    {
      finish (task, TRUE, NULL);
      return;
    }
  if (reach->socket == NULL)
    reach->socket = reachd_socket_connect (reach->context.socket_path, &error);
  /* A fresh Unix socket's buffer takes a small call whole: never wait to send. */
  if (reach->socket == NULL
      || !reachd_socket_send (reach->socket, call, length, g_get_monotonic_time (), NULL, &error))
    {
      g_debug ("CheckTarget unanswered: %s", error->message);
      finish_base_rule (task);
      return;
    }
  reach->reply_source = g_socket_create_source (reach->socket, G_IO_IN, g_task_get_cancellable (task));
  /* Each source holds the task until it is destroyed (stop_waiting). */
  g_source_set_callback (reach->reply_source, G_SOURCE_FUNC (on_reply), g_object_ref (task), g_object_unref);
  g_source_set_name (reach->reply_source, "[reachd] CheckTarget");
  g_source_attach (reach->reply_source, g_task_get_context (task));
  reach->timeout = g_timeout_source_new (REACHD_CAN_REACH_ASYNC_MS);
  g_source_set_callback (reach->timeout, on_timeout, g_object_ref (task), g_object_unref);
  g_source_set_name (reach->timeout, "[reachd] CheckTarget deadline");
  g_source_attach (reach->timeout, g_task_get_context (task));
}

static void
on_next (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GTask) task = user_data;  /* the reference next_async held */
  AsyncReach *reach = g_task_get_task_data (task);
  g_autoptr (GError) error = NULL;
  g_autoptr (GSocketAddress) address = NULL;

  address = g_socket_address_enumerator_next_finish (G_SOCKET_ADDRESS_ENUMERATOR (source), result, &error);
  if (reach->done)
    return;
  if (address != NULL)
    {
      ask_async (task, address);
      return;
    }
  {
    GError *answer = NULL;

    none_reachable (reach->first, error, &answer);
    finish (task, FALSE, answer);
  }
}

static void
ask_next (GTask *task)
{
  AsyncReach *reach = g_task_get_task_data (task);

  g_socket_address_enumerator_next_async (reach->enumerator, g_task_get_cancellable (task), on_next,
                                          g_object_ref (task));
}

static void
on_fallback_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GTask) task = user_data;
  GError *error = NULL;

  if (g_network_monitor_can_reach_finish (G_NETWORK_MONITOR (source), result, &error))
    finish (task, TRUE, NULL);
  else
    finish (task, FALSE, error);
}

void
reachd_can_reach_async (GNetworkMonitor *monitor, ReachdReachContext *context, GSocketConnectable *connectable,
                        GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (monitor, cancellable, callback, user_data);
  AsyncReach *reach = g_new0 (AsyncReach, 1);

  g_task_set_source_tag (task, reachd_can_reach_async);
  reach->context = *context;
  *context = (ReachdReachContext) { 0 };
  reachd_framer_init (&reach->framer, REACHD_REPLY_MAX_BYTES);
  g_task_set_task_data (task, reach, (GDestroyNotify) async_reach_free);
  if (reach->context.fallback != NULL)
    {
      g_network_monitor_can_reach_async (reach->context.fallback, connectable, cancellable, on_fallback_done,
                                         g_object_ref (task));
      return;
    }
  reach->enumerator = g_socket_connectable_proxy_enumerate (connectable);
  ask_next (task);
}
