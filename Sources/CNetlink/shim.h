#ifndef REACHD_CNETLINK_SHIM_H
#define REACHD_CNETLINK_SHIM_H
// libnl-3 (sockets, messages, attributes, objects) and libnl-route-3 (link, address,
// route and neighbour objects), plus the kernel headers for the structs and constants Swift reads.
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
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#endif
