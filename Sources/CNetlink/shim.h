#ifndef REACHD_CNETLINK_SHIM_H
#define REACHD_CNETLINK_SHIM_H
// libnl-3 (sockets, messages, attributes, objects), libnl-route-3 (link, address,
// route and neighbour objects) and libnl-genl-3 (generic netlink: nl80211), plus the kernel headers for the structs and constants Swift reads.
#include <netlink/netlink.h>
#include <netlink/errno.h>
#include <netlink/socket.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/addr.h>
#include <netlink/object.h>
#include <netlink/route/link.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>
#include <netlink/route/neighbour.h>
#include <netlink/route/nexthop.h>
#include <netlink/route/link/vxlan.h>
#include <netlink/genl/genl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/genetlink.h>
// nl80211: a Wi-Fi station's signal and bit rate.
#include <linux/nl80211.h>
// sock_diag: the TCP sockets' state (inet_diag_req_v2, inet_diag_msg, tcp_info).
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>
#include <stdint.h>
#include <netinet/tcp.h>
// The kernel's struct tcp_info (<linux/tcp.h>) as far as tcpi_delivery_rate. <linux/tcp.h> cannot be
// included beside <netinet/tcp.h> (libnl includes it), whose tcp_info stops at tcpi_total_retrans.
struct reachd_tcp_info {
    struct tcp_info head;
    uint64_t tcpi_pacing_rate;
    uint64_t tcpi_max_pacing_rate;
    uint64_t tcpi_bytes_acked;
    uint64_t tcpi_bytes_received;
    uint32_t tcpi_segs_out;
    uint32_t tcpi_segs_in;
    uint32_t tcpi_notsent_bytes;
    uint32_t tcpi_min_rtt;
    uint32_t tcpi_data_segs_in;
    uint32_t tcpi_data_segs_out;
    uint64_t tcpi_delivery_rate;
};
_Static_assert(sizeof(struct tcp_info) == 104, "glibc's tcp_info ends where the kernel's tcpi_pacing_rate begins");
_Static_assert(__builtin_offsetof(struct reachd_tcp_info, tcpi_delivery_rate) == 160, "the kernel's tcpi_delivery_rate is at 160");
// The kernel's tcpi_delivery_rate_app_limited: bit 0 of the byte after tcpi_snd_wscale/tcpi_rcv_wscale
// (offset 7), which glibc's tcp_info leaves as padding.
static inline int reachd_tcp_info_app_limited(const struct reachd_tcp_info *info) {
    return (((const uint8_t *)info)[7] & 1) != 0;
}
#endif
