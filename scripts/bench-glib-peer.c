/* The GLib party of scripts/bench: GNetworkMonitor as an application sees it.
 *
 * Prints "ready <type> <available>" once the default monitor is initialised (for the
 * netlink monitor, after its initial route dump), then "<CLOCK_MONOTONIC ns> <available>"
 * each time "network-changed" fires, stamped first thing in the handler.
 * Built by scripts/bench: cc -O2 $(pkg-config --cflags --libs gio-2.0).
 */
#include <gio/gio.h>
#include <stdio.h>
#include <time.h>

static void changed(GNetworkMonitor *monitor, gboolean available, gpointer data)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    printf("%lld %d\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec, available ? 1 : 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* one line per signal, read as it happens */
    GNetworkMonitor *monitor = g_network_monitor_get_default();
    g_signal_connect(monitor, "network-changed", G_CALLBACK(changed), NULL);
    printf("ready %s %d\n", G_OBJECT_TYPE_NAME(monitor), g_network_monitor_get_network_available(monitor) ? 1 : 0);
    g_main_loop_run(g_main_loop_new(NULL, FALSE));
    return 0;
}
