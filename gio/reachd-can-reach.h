/* reachd-can-reach.h: g_network_monitor_can_reach as the app would reach.
 *
 * The connectable is enumerated in the app (g_socket_connectable_proxy_enumerate: its proxy
 * resolver, its GResolver, every address, as GLib's base monitor does); reachd is asked only
 * what it knows better: whether each address is reachable for this uid (CheckTarget with the
 * address, a link-local one with its interface). The first reachable address wins. */
#pragma once

#include <gio/gio.h>

/* How long reachd's part may take: the blocking call runs on apps' main threads. */
#define REACHD_CAN_REACH_SYNC_MS 500
#define REACHD_CAN_REACH_ASYNC_MS 2000

/* What a can_reach call needs of the monitor, taken at its start. */
typedef struct {
  char *socket_path;
  GNetworkMonitor *fallback;  /* GLib's monitor while reachd is not answering (a reference), else NULL */
  gboolean available;         /* the monitor's network-available now */
} ReachdReachContext;

G_GNUC_INTERNAL void reachd_reach_context_clear (ReachdReachContext *context);

/* The blocking call: the enumeration as the app's resolvers make it, then at most
 * REACHD_CAN_REACH_SYNC_MS for reachd's answers. Takes the context's contents. */
G_GNUC_INTERNAL gboolean reachd_can_reach (ReachdReachContext *context, GSocketConnectable *connectable,
                                           GCancellable *cancellable, GError **error);

/* The same without blocking: every step on the caller's thread-default main context, no
 * thread held; the task (source `monitor`) returns a boolean. Takes the context's contents. */
G_GNUC_INTERNAL void reachd_can_reach_async (GNetworkMonitor *monitor, ReachdReachContext *context,
                                             GSocketConnectable *connectable, GCancellable *cancellable,
                                             GAsyncReadyCallback callback, gpointer user_data);
