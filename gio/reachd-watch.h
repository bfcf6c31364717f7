/* reachd-watch.h: wake when a socket path may have appeared, without a timer.
 *
 * inotify on the path's directory, or on its nearest existing ancestor while that
 * directory is gone (moving down as the directories on the way appear), so an app waiting
 * for reachd makes no system call until something on the way to its socket changes. */
#pragma once

#include <glib.h>

typedef struct _ReachdWatch ReachdWatch;

/* Called on the watch's context when the name leading to the path was created, moved in
 * or changed, or a directory on the way appeared. */
typedef void (*ReachdWatchChanged) (gpointer user_data);

/* Watches for `path` on `context`; NULL when inotify cannot be had (the per-user instance
 * limit, a directory the app may not read), said in the debug log. */
G_GNUC_INTERNAL ReachdWatch *reachd_watch_new (const char *path, GMainContext *context, ReachdWatchChanged changed,
                                               gpointer user_data);
G_GNUC_INTERNAL void reachd_watch_free (ReachdWatch *watch);
