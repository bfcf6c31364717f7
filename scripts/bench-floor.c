/* The floor of reachd's shape, for scripts/bench-floor: the same threads and system calls per
 * change as reachd, and nothing else.
 *
 *   bench-floor daemon SOCKET           an engine thread (poll(2) on an rtnetlink event socket,
 *                                       drain it, two FIB lookups, an eventfd doorbell) and a loop
 *                                       thread (epoll, the doorbell, one 122-byte write to each
 *                                       connection on SOCKET)
 *   bench-floor one-thread SOCKET       the same work on one thread: epoll on the event socket and
 *                                       the listener, the writes right after the lookups
 *   bench-floor reader SOCKET [CALL]    a subscriber: connects, sends CALL and its NUL if given,
 *                                       then poll(2) and read(2) until the peer hangs up
 *
 * Built by scripts/bench-floor: cc -O2 -pthread. Bounds: 1,024 connections; reads discard.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

enum { MAX_CONNECTIONS = 1024, FRAME_BYTES = 122 };

static int doorbell, listener, connections[MAX_CONNECTIONS], connection_count;

static struct sockaddr_un unix_address(const char *path)
{
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "%s", path);
    return address;
}

/* What reachd asks per family on every change: RTM_GETROUTE for an address it never contacts. */
static void lookup(int requests, int family)
{
    struct {
        struct nlmsghdr header;
        struct rtmsg route;
        char attributes[64];
    } request = {0};
    request.header.nlmsg_type = RTM_GETROUTE;
    request.header.nlmsg_flags = NLM_F_REQUEST;
    request.route.rtm_family = (unsigned char)family;
    struct rtattr *destination = (struct rtattr *)request.attributes;
    destination->rta_type = RTA_DST;
    if (family == AF_INET) {
        destination->rta_len = RTA_LENGTH(4);
        inet_pton(AF_INET, "192.0.2.1", RTA_DATA(destination));
        request.route.rtm_dst_len = 32;
    } else {
        destination->rta_len = RTA_LENGTH(16);
        inet_pton(AF_INET6, "2001:db8::1", RTA_DATA(destination));
        request.route.rtm_dst_len = 128;
    }
    request.header.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg)) + RTA_ALIGN(destination->rta_len);
    char answer[4096];
    if (send(requests, &request, request.header.nlmsg_len, 0) > 0)
        (void)recv(requests, answer, sizeof answer, 0);
}

static void accept_one(void)
{
    int connection = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (connection >= 0 && connection_count < MAX_CONNECTIONS)
        connections[connection_count++] = connection;
    else if (connection >= 0)
        close(connection);
}

static void publish(void)
{
    static const char frame[FRAME_BYTES];
    for (int k = 0; k < connection_count; k++)
        (void)write(connections[k], frame, sizeof frame);
}

/* Waits in epoll_wait for `source` (and the listener); returns when `source` is readable. */
static void wait_for(int epoll, int source)
{
    for (;;) {
        struct epoll_event ready[64];
        int count = epoll_wait(epoll, ready, 64, -1);
        int found = 0;
        for (int i = 0; i < count; i++) {
            if (ready[i].data.fd == listener)
                accept_one();
            else if (ready[i].data.fd == source)
                found = 1;
        }
        if (found)
            return;
    }
}

static int watching(int source)
{
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event interest = {.events = EPOLLIN, .data.fd = source};
    epoll_ctl(epoll, EPOLL_CTL_ADD, source, &interest);
    interest.data.fd = listener;
    epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &interest);
    return epoll;
}

static void *event_loop(void *unused)
{
    int epoll = watching(doorbell);
    for (;;) {
        wait_for(epoll, doorbell);
        uint64_t rings;
        (void)read(doorbell, &rings, sizeof rings);
        publish();
    }
    return unused;
}

static int daemon_main(const char *path, int one_thread)
{
    doorbell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    /* Bound under another name and renamed once listening: a reader that finds SOCKET connects. */
    char bound[sizeof((struct sockaddr_un){0}.sun_path)];
    if (snprintf(bound, sizeof bound, "%s.new", path) >= (int)sizeof bound) {
        fprintf(stderr, "bench-floor: socket path too long\n");
        return 1;
    }
    struct sockaddr_un address = unix_address(bound);
    unlink(bound);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) < 0 || listen(listener, 64) < 0 || rename(bound, path) < 0) {
        perror("bench-floor: listen");
        return 1;
    }
    int events = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
    struct sockaddr_nl groups = {
        .nl_family = AF_NETLINK,
        .nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE,
    };
    int requests = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (events < 0 || requests < 0 || bind(events, (struct sockaddr *)&groups, sizeof groups) < 0) {
        perror("bench-floor: netlink");
        return 1;
    }
    static char datagram[65536];
    int epoll = one_thread ? watching(events) : -1;
    pthread_t loop;
    if (!one_thread)
        pthread_create(&loop, NULL, event_loop, NULL);
    for (;;) {
        if (one_thread) {
            wait_for(epoll, events);
        } else {
            struct pollfd readable = {.fd = events, .events = POLLIN};
            poll(&readable, 1, -1);
        }
        while (recv(events, datagram, sizeof datagram, 0) > 0) {
        }
        lookup(requests, AF_INET);
        lookup(requests, AF_INET6);
        if (one_thread) {
            publish();
        } else {
            uint64_t one = 1;
            (void)write(doorbell, &one, sizeof one);
        }
    }
}

static int reader_main(const char *path, const char *call)
{
    int connection = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = unix_address(path);
    if (connect(connection, (struct sockaddr *)&address, sizeof address) < 0) {
        perror("bench-floor: connect");
        return 1;
    }
    if (call && write(connection, call, strlen(call) + 1) < 0)
        return 1;
    static char buffer[65536];
    for (;;) {
        struct pollfd readable = {.fd = connection, .events = POLLIN};
        poll(&readable, 1, -1);
        if (read(connection, buffer, sizeof buffer) <= 0)
            return 0;
    }
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "daemon") == 0)
        return daemon_main(argv[2], 0);
    if (argc >= 3 && strcmp(argv[1], "one-thread") == 0)
        return daemon_main(argv[2], 1);
    if (argc >= 3 && strcmp(argv[1], "reader") == 0)
        return reader_main(argv[2], argc > 3 ? argv[3] : NULL);
    fprintf(stderr, "usage: bench-floor daemon|one-thread SOCKET | reader SOCKET [CALL]\n");
    return 2;
}
