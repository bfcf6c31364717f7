/* reachd-socket.c: see reachd-socket.h. */
#include "reachd-socket.h"

#include <gio/gunixsocketaddress.h>

GSocket *
reachd_socket_connect (const char *path, GError **error)
{
  g_autoptr (GSocket) socket = NULL;
  g_autoptr (GSocketAddress) address = NULL;

  socket = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_DEFAULT, error);
  if (socket == NULL)
    return NULL;
  g_socket_set_blocking (socket, FALSE);
  address = g_unix_socket_address_new (path);
  if (!g_socket_connect (socket, address, NULL, error))
    return NULL;
  return g_steal_pointer (&socket);
}

static gboolean
wait_for (GSocket *socket, GIOCondition condition, gint64 deadline, GCancellable *cancellable, GError **error)
{
  gint64 left = deadline - g_get_monotonic_time ();

  if (left <= 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "reachd did not answer in time");
      return FALSE;
    }
  return g_socket_condition_timed_wait (socket, condition, left, cancellable, error);
}

gboolean
reachd_socket_send (GSocket *socket, const char *data, gsize length, gint64 deadline, GCancellable *cancellable,
                    GError **error)
{
  gsize sent = 0;

  while (sent < length)
    {
      g_autoptr (GError) local = NULL;
      gssize n = g_socket_send (socket, data + sent, length - sent, cancellable, &local);

      if (n < 0 && g_error_matches (local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        {
          if (!wait_for (socket, G_IO_OUT, deadline, cancellable, error))
            return FALSE;
          continue;
        }
      if (n < 0)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      sent += (gsize) n;
    }
  return TRUE;
}

gssize
reachd_socket_read (GSocket *socket, ReachdFramer *framer, GError **error)
{
  guint8 *room = reachd_framer_reserve (framer, REACHD_READ_CHUNK);
  gssize n = g_socket_receive (socket, (char *) room, REACHD_READ_CHUNK, NULL, error);

  reachd_framer_commit (framer, REACHD_READ_CHUNK, n > 0 ? (gsize) n : 0);
  return n;
}

gboolean
reachd_socket_receive (GSocket *socket, ReachdFramer *framer, gint64 deadline, GCancellable *cancellable,
                       const char **message, gsize *length, GError **error)
{
  for (;;)
    {
      g_autoptr (GError) local = NULL;
      gssize n;

      switch (reachd_framer_next (framer, message, length))
        {
        case REACHD_FRAME_MESSAGE:
          return TRUE;
        case REACHD_FRAME_OVERSIZE:
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE, "reachd's reply is over the limit");
          return FALSE;
        case REACHD_FRAME_NONE:
          break;
        }
      if (!wait_for (socket, G_IO_IN, deadline, cancellable, error))
        return FALSE;
      n = reachd_socket_read (socket, framer, &local);
      if (n == 0)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED, "reachd closed the connection");
          return FALSE;
        }
      if (n < 0 && !g_error_matches (local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
    }
}

void
reachd_source_clear (GSource **source)
{
  if (*source != NULL)
    g_source_destroy (*source);
  g_clear_pointer (source, g_source_unref);
}
