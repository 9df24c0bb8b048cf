/* SPDX-License-Identifier: MIT */
/* rsp.c — the GDB remote serial protocol client (rsp.h).
 *
 * A packet is `$data#cc`, cc the modulo-256 sum of data in two hex
 * digits; each side acknowledges a packet with `+` until no-ack mode
 * (QStartNoAckMode) is agreed. A reply is read byte by byte through a
 * buffer, each wait bounded by poll with the connection's timeout.
 * Run-length encoded replies (`*`) are expanded. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rsp.h"

/* A reply longer than this is not one this client asked for. */
#define RSP_MAX_REPLY (1u << 16)

const char *rsp_status_text(enum rsp_status status)
{
    switch (status) {
    case RSP_OK:
        return "ok";
    case RSP_SILENT:
        return "the gdbstub stopped answering";
    case RSP_CLOSED:
        return "the gdbstub closed the connection";
    case RSP_BAD_REPLY:
        return "the gdbstub sent a reply that cannot be read";
    case RSP_ERROR:
    default:
        return "the gdbstub answered an error";
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static enum rsp_status fail(struct rsp *c, enum rsp_status status)
{
    snprintf(c->error, sizeof c->error, "%s", rsp_status_text(status));
    return status;
}

/* One byte, waiting at most until `deadline`. */
static enum rsp_status get_byte(struct rsp *c, double deadline, char *out)
{
    if (c->in_at < c->in_len) {
        *out = c->in[c->in_at++];
        return RSP_OK;
    }
    /* Bounded: each round waits for the remaining time or reads. */
    for (;;) {
        double left = deadline - now();
        if (left <= 0)
            return RSP_SILENT;
        struct pollfd p = {c->fd, POLLIN, 0};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r == 0 ? RSP_SILENT : RSP_CLOSED;
        if (c->in_at < c->in_len) {
            *out = c->in[c->in_at++];
            return RSP_OK;
        }
        ssize_t n = read(c->fd, c->in, sizeof c->in);
        if (n > 0) {
            c->in_len = (size_t)n;
            c->in_at = 1;
            *out = c->in[0];
            return RSP_OK;
        }
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        return RSP_CLOSED;
    }
}

static bool put_all(struct rsp *c, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        len -= (size_t)n;
    }
    return true;
}

static bool append(struct rsp *c, size_t *len, char ch)
{
    if (*len + 2 > c->cap) {
        if (c->cap >= RSP_MAX_REPLY)
            return false;
        size_t cap = c->cap ? 2 * c->cap : 4096;
        char *grown = realloc(c->buf, cap);
        if (!grown)
            return false;
        c->buf = grown;
        c->cap = cap;
    }
    c->buf[(*len)++] = ch;
    c->buf[*len] = 0;
    return true;
}

static int hex_value(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* The body of one packet, after its `$`, into c->buf. */
static enum rsp_status read_body(struct rsp *c, double deadline)
{
    size_t len = 0;
    unsigned sum = 0;
    char ch;
    enum rsp_status s;
    if (!append(c, &len, 0))
        return RSP_BAD_REPLY;
    len = 0;
    /* Bounded by RSP_MAX_REPLY and the deadline. */
    while ((s = get_byte(c, deadline, &ch)) == RSP_OK && ch != '#') {
        sum += (unsigned char)ch;
        if (ch == '*' && len > 0) {
            char count;
            if ((s = get_byte(c, deadline, &count)) != RSP_OK)
                return s;
            sum += (unsigned char)count;
            char repeated = c->buf[len - 1];
            for (int i = 0; i < count - 29; i++)
                if (!append(c, &len, repeated))
                    return RSP_BAD_REPLY;
        } else if (!append(c, &len, ch)) {
            return RSP_BAD_REPLY;
        }
    }
    char digits[2];
    if (s != RSP_OK || (s = get_byte(c, deadline, &digits[0])) != RSP_OK ||
        (s = get_byte(c, deadline, &digits[1])) != RSP_OK)
        return s;
    int hi = hex_value(digits[0]), lo = hex_value(digits[1]);
    if (hi < 0 || lo < 0 || (unsigned)(hi * 16 + lo) != (sum & 0xff))
        return RSP_BAD_REPLY;
    c->len = len;
    return c->no_ack || put_all(c, "+", 1) ? RSP_OK : RSP_CLOSED;
}

/* The next packet (acks and noise before its `$` skipped). */
static enum rsp_status read_packet(struct rsp *c)
{
    double deadline = now() + c->timeout;
    char ch;
    enum rsp_status s;
    /* Bounded by the deadline. */
    while ((s = get_byte(c, deadline, &ch)) == RSP_OK && ch != '$')
        ;
    return s == RSP_OK ? read_body(c, deadline) : s;
}

/* The whole packet in one send: small writes in a row would wait for
 * the peer's delayed acknowledgement. */
static bool send_packet(struct rsp *c, const char *data)
{
    unsigned sum = 0;
    for (const char *p = data; *p; p++)
        sum += (unsigned char)*p;
    char packet[256];
    int n = snprintf(packet, sizeof packet, "$%s#%02x", data, sum & 0xff);
    return n > 0 && (size_t)n < sizeof packet &&
           put_all(c, packet, (size_t)n);
}

enum rsp_status rsp_request(struct rsp *c, const char *packet)
{
    if (!send_packet(c, packet))
        return fail(c, RSP_CLOSED);
    enum rsp_status s = read_packet(c);
    if (s != RSP_OK)
        return fail(c, s);
    if (c->buf[0] == 'E' && strlen(c->buf) == 3)
        return fail(c, RSP_ERROR);
    return RSP_OK;
}

static enum rsp_status handshake(struct rsp *c)
{
    enum rsp_status s = rsp_request(c, "QStartNoAckMode");
    if (s == RSP_OK && !strcmp(c->buf, "OK"))
        c->no_ack = true;
    return s == RSP_ERROR ? RSP_OK : s;
}

enum rsp_status rsp_connect(struct rsp *c, int port, double timeout)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->timeout = timeout;
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    double deadline = now() + timeout;
    /* Bounded by the deadline: the stub listens soon after it starts. */
    while (now() < deadline) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return fail(c, RSP_CLOSED);
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            c->fd = fd;
            return handshake(c);
        }
        close(fd);
        struct timespec pause = {0, 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    return fail(c, RSP_SILENT);
}

void rsp_close(struct rsp *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    free(c->buf);
    c->buf = NULL;
    c->cap = 0;
}

static uint64_t hex_u64(const char *text, size_t digits, bool *ok)
{
    uint64_t v = 0;
    for (size_t i = 0; i < digits; i++) {
        int d = hex_value(text[i]);
        if (d < 0)
            *ok = false;
        v = v << 4 | (uint64_t)(d < 0 ? 0 : d);
    }
    return v;
}

enum rsp_status rsp_stop_reply(struct rsp *c, const char *packet,
                               struct rsp_stop *stop)
{
    enum rsp_status s = rsp_request(c, packet);
    if (s != RSP_OK)
        return s;
    bool ok = strlen(c->buf) >= 3;
    int value = ok ? (int)hex_u64(c->buf + 1, 2, &ok) : 0;
    stop->value = value;
    switch (ok ? c->buf[0] : 0) {
    case 'T': case 'S':
        stop->kind = RSP_STOPPED;
        return RSP_OK;
    case 'W':
        stop->kind = RSP_EXITED;
        return RSP_OK;
    case 'X':
        stop->kind = RSP_KILLED;
        return RSP_OK;
    default:
        return fail(c, RSP_BAD_REPLY);
    }
}

/* A little-endian 64-bit value from 16 hex digits. */
static uint64_t hex_le64(const char *text, bool *ok)
{
    uint64_t v = 0;
    for (int byte = 7; byte >= 0; byte--)
        v = v << 8 | hex_u64(text + 2 * byte, 2, ok);
    return v;
}

enum rsp_status rsp_a64_regs(struct rsp *c, uint64_t regs[RSP_A64_NREGS])
{
    enum rsp_status s = rsp_request(c, "g");
    if (s != RSP_OK)
        return s;
    if (strlen(c->buf) < 16 * RSP_A64_NREGS)
        return fail(c, RSP_BAD_REPLY);
    bool ok = true;
    for (unsigned i = 0; i < RSP_A64_NREGS; i++)
        regs[i] = hex_le64(c->buf + 16 * i, &ok);
    return ok ? RSP_OK : fail(c, RSP_BAD_REPLY);
}

size_t rsp_read_mem(struct rsp *c, uint64_t addr, void *out, size_t len)
{
    char packet[64];
    if (len > 1024)
        len = 1024;
    snprintf(packet, sizeof packet, "m%llx,%zx", (unsigned long long)addr,
             len);
    if (rsp_request(c, packet) != RSP_OK)
        return 0;
    size_t got = strlen(c->buf) / 2;
    if (got > len)
        got = len;
    bool ok = true;
    for (size_t i = 0; i < got && ok; i++)
        ((uint8_t *)out)[i] = (uint8_t)hex_u64(c->buf + 2 * i, 2, &ok);
    return ok ? got : 0;
}

int rsp_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof addr;
    int port = 0;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0 &&
        getsockname(fd, (struct sockaddr *)&addr, &size) == 0)
        port = ntohs(addr.sin_port);
    close(fd);
    return port;
}

/* Binary data of a reply (escaped: `}` then the byte xor 0x20) into out;
 * the count, at most cap. */
static size_t unescape(const char *in, size_t len, uint8_t *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n < cap; i++)
        out[n++] = in[i] == '}' && i + 1 < len ? (uint8_t)(in[++i] ^ 0x20)
                                               : (uint8_t)in[i];
    return n;
}

size_t rsp_xfer_read(struct rsp *c, const char *name, void *out, size_t cap)
{
    size_t got = 0;
    /* Bounded by cap: each round reads at least one byte or ends. */
    while (got < cap) {
        char packet[128];
        size_t ask = cap - got < 0x400 ? cap - got : 0x400;
        snprintf(packet, sizeof packet, "qXfer:%s:read::%zx,%zx", name, got,
                 ask);
        if (rsp_request(c, packet) != RSP_OK || c->len == 0 ||
            (c->buf[0] != 'm' && c->buf[0] != 'l'))
            return got;
        size_t n = unescape(c->buf + 1, c->len - 1, (uint8_t *)out + got,
                            cap - got);
        got += n;
        if (c->buf[0] == 'l' || n == 0)
            return got;
    }
    return got;
}
