/* reachd-watch.c: see reachd-watch.h. */
#include "reachd-watch.h"

#include <errno.h>
#include <glib-unix.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

struct _ReachdWatch
{
  char *path;
  int fd;              /* the inotify instance */
  int wd;              /* the watch on the nearest existing directory; -1 */
  char *child;         /* the name in that directory that leads to the path */
  GSource *source;
  ReachdWatchChanged changed;
  gpointer user_data;
};

/* Watches the path's directory, or its nearest existing ancestor. A watch on the same
 * directory keeps its descriptor (inotify_add_watch amends it). */
static gboolean
watch_nearest (ReachdWatch *watch)
{
  g_autofree char *below = g_strdup (watch->path);
  int old = watch->wd;

  for (;;)
    {
      g_autofree char *directory = g_path_get_dirname (below);

      g_free (watch->child);
      watch->child = g_path_get_basename (below);
      watch->wd = inotify_add_watch (watch->fd, directory,
                                     IN_CREATE | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR);
      if (watch->wd >= 0)
        break;
      if ((errno != ENOENT && errno != ENOTDIR) || strcmp (directory, below) == 0 || strcmp (directory, ".") == 0)
        {
          g_debug ("cannot watch %s: %s; reachd's return will go unnoticed", directory, g_strerror (errno));
          return FALSE;
        }
      g_free (below);
      below = g_steal_pointer (&directory);
    }
  if (old >= 0 && old != watch->wd)
    inotify_rm_watch (watch->fd, old);  /* its IN_IGNORED names the old descriptor: passed over */
  return TRUE;
}

static gboolean
on_events (int fd, GIOCondition condition, gpointer user_data)
{
  ReachdWatch *watch = user_data;
  _Alignas (struct inotify_event) char events[4096];
  gboolean relevant = FALSE, rewatch = FALSE;
  g_autofree char *child = NULL;
  ssize_t n;

  (void) condition;
  while ((n = read (fd, events, sizeof events)) > 0)
    for (char *at = events; at < events + n; at += sizeof (struct inotify_event) + ((struct inotify_event *) at)->len)
      {
        const struct inotify_event *event = (const struct inotify_event *) at;

        if (event->mask & IN_Q_OVERFLOW)
          rewatch = TRUE;  /* events were lost: look again */
        else if (event->wd != watch->wd)
          continue;
        else if (event->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF))
          rewatch = TRUE;  /* the watched directory went */
        else if (event->len > 0 && strcmp (event->name, watch->child) == 0)
          relevant = TRUE;
      }
  if (!relevant && !rewatch)
    return G_SOURCE_CONTINUE;
  child = g_strdup (watch->child);
  if (!watch_nearest (watch))
    {
      /* Nothing left to watch: stay quiet for good (the caller keeps its fallback). */
      g_clear_pointer (&watch->source, g_source_unref);
      return G_SOURCE_REMOVE;
    }
  /* A directory on the way appeared (the watch moved down), or the name itself changed. */
  if (relevant || g_strcmp0 (child, watch->child) != 0)
    watch->changed (watch->user_data);  /* last: it may free the watch */
  return G_SOURCE_CONTINUE;
}

ReachdWatch *
reachd_watch_new (const char *path, GMainContext *context, ReachdWatchChanged changed, gpointer user_data)
{
  ReachdWatch *watch = g_new0 (ReachdWatch, 1);

  watch->path = g_strdup (path);
  watch->wd = -1;
  watch->changed = changed;
  watch->user_data = user_data;
  watch->fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  if (watch->fd < 0)
    g_debug ("inotify: %s; reachd's return will go unnoticed", g_strerror (errno));
  if (watch->fd < 0 || !watch_nearest (watch))
    {
      reachd_watch_free (watch);
      return NULL;
    }
  watch->source = g_unix_fd_source_new (watch->fd, G_IO_IN);
  g_source_set_callback (watch->source, G_SOURCE_FUNC (on_events), watch, NULL);
  g_source_set_name (watch->source, "[reachd] socket watch");
  g_source_attach (watch->source, context);
  return watch;
}

void
reachd_watch_free (ReachdWatch *watch)
{
  if (watch->source != NULL)
    g_source_destroy (watch->source);
  g_clear_pointer (&watch->source, g_source_unref);
  if (watch->fd >= 0)
    close (watch->fd);
  g_free (watch->child);
  g_free (watch->path);
  g_free (watch);
}
