#ifndef REACHD_CNETLINK_SHIM_H
#define REACHD_CNETLINK_SHIM_H
// libnl-3 and libnl-route-3, plus the kernel headers whose constants Swift needs.
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/cache.h>
#include <netlink/route/link.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>
#include <netlink/route/rule.h>
#include <netlink/route/nexthop.h>
#include <linux/rtnetlink.h>
#include <linux/if.h>
#include <linux/if_arp.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#endif
