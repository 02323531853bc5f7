/*
 * udp_floor: the raw floor under a DDS round trip on this machine. Two processes (this
 * one and a forked child) bounce one UDP datagram at a time over 127.0.0.1, as ping and
 * pong do, with no DDS in between. Part of the FerroDDS benchmark suite (scripts/bench).
 *
 *   udp_floor [-m block|busy] [-D seconds] [-w seconds] SIZE...
 *
 * -m block: both sides block in recv() (the kernel wakes them);
 * -m busy:  both sides spin on a non-blocking recv() (MSG_DONTWAIT) and never sleep.
 * For each SIZE (bytes, at most 65507, the largest IPv4 UDP datagram) it warms up for -w
 * seconds (default 0.5), then measures round trips for -D seconds (default 2) and prints
 * one JSON object per line:
 *
 *   {"mode":"block","size":64,"roundtrips":N,"seconds":S,"timeouts":T,
 *    "rtt_us":{"min":..,"mean":..,"p50":..,"p90":..,"p99":..,"p99_9":..,"max":..}}
 *
 * Round trips are full round trips in microseconds, timed with CLOCK_MONOTONIC from just
 * before send() to the return of the recv() that got the echo. Percentiles are nearest
 * rank over every round trip measured (the value at index ceil(q * n) - 1 when sorted).
 * A datagram carries its sequence number in its first 8 bytes; a stale echo is ignored,
 * and a lost one (1 s without an answer) is counted as a timeout and sent again.
 *
 * Exit status: 0 on success, 1 on a usage error, 2 on a system error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_DATAGRAM 65507
/* An empty datagram tells the echoing side to exit. */
#define STOP_SIZE 0
/* How long either side waits for a datagram before giving up on it. */
#define RECV_TIMEOUT_NS 1000000000LL
/* The echoing side exits after this long without any datagram. */
#define IDLE_EXIT_NS 30000000000LL

enum mode { MODE_BLOCK, MODE_BUSY };

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "udp_floor: %s: %s\n", what, strerror(errno));
    exit(2);
}

static int make_socket(struct sockaddr_in *bound)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0)
        die("socket");
    int buf = 4 * 1024 * 1024;
    /* Best effort: the kernel caps these at net.core.{r,w}mem_max. */
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    memset(bound, 0, sizeof *bound);
    bound->sin_family = AF_INET;
    bound->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bound->sin_port = 0;
    if (bind(fd, (struct sockaddr *)bound, sizeof *bound) < 0)
        die("bind");
    socklen_t len = sizeof *bound;
    if (getsockname(fd, (struct sockaddr *)bound, &len) < 0)
        die("getsockname");
    return fd;
}

static void set_recv_timeout(int fd, int64_t ns)
{
    struct timeval tv = {.tv_sec = ns / 1000000000LL, .tv_usec = (ns % 1000000000LL) / 1000};
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0)
        die("setsockopt SO_RCVTIMEO");
}

/* Receives one datagram: blocking (up to the socket's timeout) or spinning until
   `deadline`. Returns its length, or -1 when nothing came in time. */
static ssize_t receive(int fd, char *buf, enum mode mode, int64_t deadline)
{
    if (mode == MODE_BLOCK) {
        for (;;) {
            ssize_t n = recv(fd, buf, MAX_DATAGRAM, 0);
            if (n >= 0)
                return n;
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return -1;
            die("recv");
        }
    }
    unsigned spins = 0;
    for (;;) {
        ssize_t n = recv(fd, buf, MAX_DATAGRAM, MSG_DONTWAIT);
        if (n >= 0)
            return n;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            die("recv");
        /* Reading the clock on every spin would slow the spin down: every 1024th. */
        if ((++spins & 1023u) == 0 && now_ns() >= deadline)
            return -1;
    }
}

/* The echoing side: sends every datagram back to `peer` until the empty one. */
static void echo(int fd, const struct sockaddr_in *peer, enum mode mode)
{
    static char buf[MAX_DATAGRAM];
    if (mode == MODE_BLOCK)
        set_recv_timeout(fd, IDLE_EXIT_NS);
    for (;;) {
        ssize_t n = receive(fd, buf, mode, now_ns() + IDLE_EXIT_NS);
        if (n < 0) {
            fprintf(stderr, "udp_floor: echo side idle for too long, exiting\n");
            _exit(2);
        }
        if (n == STOP_SIZE)
            _exit(0);
        if (sendto(fd, buf, (size_t)n, 0, (const struct sockaddr *)peer, sizeof *peer) < 0)
            die("sendto (echo)");
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double percentile_us(const int64_t *sorted, size_t n, double q)
{
    size_t rank = (size_t)(q * (double)n + 0.999999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return (double)sorted[rank - 1] / 1e3;
}

/* Round trips of `size` bytes for `seconds` (after `warmup` seconds unmeasured). */
static void measure(int fd, const struct sockaddr_in *peer, enum mode mode, size_t size,
                    double warmup, double seconds, uint64_t *seq)
{
    static char out[MAX_DATAGRAM], in[MAX_DATAGRAM];
    memset(out, 0xa5, sizeof out);
    size_t cap = 1 << 16, n = 0;
    int64_t *rtts = malloc(cap * sizeof *rtts);
    if (rtts == NULL)
        die("malloc");
    uint64_t timeouts = 0;
    const int64_t t0 = now_ns();
    const int64_t measure_from = t0 + (int64_t)(warmup * 1e9);
    const int64_t end = measure_from + (int64_t)(seconds * 1e9);
    int64_t measured_start = 0, measured_end = 0;
    for (;;) {
        int64_t start = now_ns();
        if (start >= end)
            break;
        ++*seq;
        memcpy(out, seq, sizeof *seq);
        if (sendto(fd, out, size, 0, (const struct sockaddr *)peer, sizeof *peer) < 0)
            die("sendto (ping)");
        int64_t stop;
        for (;;) {
            ssize_t got = receive(fd, in, mode, start + RECV_TIMEOUT_NS);
            stop = now_ns();
            if (got < 0) {
                stop = -1;
                break;
            }
            uint64_t echoed;
            if ((size_t)got == size && size >= sizeof echoed) {
                memcpy(&echoed, in, sizeof echoed);
                if (echoed == *seq)
                    break;
            }
            /* A stale echo (of a ping that timed out): wait on. */
        }
        if (stop < 0) {
            timeouts++;
            continue;
        }
        if (start < measure_from)
            continue;
        if (measured_start == 0)
            measured_start = start;
        measured_end = stop;
        if (n == cap) {
            cap *= 2;
            int64_t *grown = realloc(rtts, cap * sizeof *rtts);
            if (grown == NULL)
                die("realloc");
            rtts = grown;
        }
        rtts[n++] = stop - start;
    }
    printf("{\"mode\":\"%s\",\"size\":%zu,\"roundtrips\":%zu,\"seconds\":%.3f,\"timeouts\":%llu",
           mode == MODE_BLOCK ? "block" : "busy", size, n,
           n ? (double)(measured_end - measured_start) / 1e9 : 0.0, (unsigned long long)timeouts);
    if (n > 0) {
        qsort(rtts, n, sizeof *rtts, cmp_i64);
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += (double)rtts[i];
        printf(",\"rtt_us\":{\"min\":%.3f,\"mean\":%.3f,\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,"
               "\"p99_9\":%.3f,\"max\":%.3f}",
               (double)rtts[0] / 1e3, sum / (double)n / 1e3, percentile_us(rtts, n, 0.50),
               percentile_us(rtts, n, 0.90), percentile_us(rtts, n, 0.99),
               percentile_us(rtts, n, 0.999), (double)rtts[n - 1] / 1e3);
    }
    printf("}\n");
    fflush(stdout);
    free(rtts);
}

static void usage(void)
{
    fprintf(stderr, "usage: udp_floor [-m block|busy] [-D seconds] [-w seconds] SIZE...\n"
                    "  SIZE in bytes, 8 to %d\n",
            MAX_DATAGRAM);
    exit(1);
}

int main(int argc, char **argv)
{
    enum mode mode = MODE_BLOCK;
    double seconds = 2.0, warmup = 0.5;
    int opt;
    while ((opt = getopt(argc, argv, "m:D:w:")) != -1) {
        switch (opt) {
        case 'm':
            if (strcmp(optarg, "block") == 0)
                mode = MODE_BLOCK;
            else if (strcmp(optarg, "busy") == 0)
                mode = MODE_BUSY;
            else
                usage();
            break;
        case 'D':
            seconds = atof(optarg);
            break;
        case 'w':
            warmup = atof(optarg);
            break;
        default:
            usage();
        }
    }
    if (optind >= argc || !(seconds > 0) || !(warmup >= 0) || seconds > 3600 || warmup > 3600)
        usage();
    size_t sizes[64];
    int nsizes = 0;
    for (int i = optind; i < argc; i++) {
        char *end;
        long v = strtol(argv[i], &end, 10);
        if (*end != '\0' || v < 8 || v > MAX_DATAGRAM || nsizes == 64)
            usage();
        sizes[nsizes++] = (size_t)v;
    }

    struct sockaddr_in ping_addr, pong_addr;
    int ping_fd = make_socket(&ping_addr);
    int pong_fd = make_socket(&pong_addr);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) {
        /* The echoing side dies with its parent, whatever happens to the parent. */
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(ping_fd);
        echo(pong_fd, &ping_addr, mode);
    }
    close(pong_fd);
    if (mode == MODE_BLOCK)
        set_recv_timeout(ping_fd, RECV_TIMEOUT_NS);
    uint64_t seq = 0;
    for (int i = 0; i < nsizes; i++)
        measure(ping_fd, &pong_addr, mode, sizes[i], warmup, seconds, &seq);
    (void)sendto(ping_fd, "", STOP_SIZE, 0, (const struct sockaddr *)&pong_addr, sizeof pong_addr);
    int status = 0;
    /* The echo side exits at the empty datagram; if that was lost, do not wait forever. */
    for (int tries = 0; tries < 100; tries++) {
        pid_t w = waitpid(child, &status, WNOHANG);
        if (w == child)
            return 0;
        usleep(10000);
    }
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    return 0;
}
