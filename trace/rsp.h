/* SPDX-License-Identifier: MIT */
/* rsp.h — a small client of the GDB remote serial protocol, enough to
 * trace a program that qemu-user runs under its gdbstub (`qemu-aarch64
 * -g PORT`): packets with checksums and acknowledgements, `?`, `g`, `m`,
 * `s`, `S`, `k`. Every read waits at most the connection's timeout: a
 * stub that stops answering fails the call (RSP_SILENT), never hangs it.
 * (The protocol: GDB manual, "Remote Protocol", "Overview" and "Packets".)
 */
#ifndef CFISEM_TRACE_RSP_H
#define CFISEM_TRACE_RSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rsp_status {
    RSP_OK,
    RSP_SILENT,       /* no answer within the timeout */
    RSP_CLOSED,       /* the connection ended */
    RSP_BAD_REPLY,    /* a reply the client cannot read */
    RSP_ERROR,        /* an "Enn" reply */
};

struct rsp {
    int fd;
    double timeout;   /* seconds, for each reply */
    bool no_ack;      /* QStartNoAckMode accepted */
    char *buf;        /* the last reply, NUL-terminated */
    size_t len;       /* its bytes (a binary reply may hold NULs) */
    size_t cap;
    char error[160];  /* one line: what went wrong */
    char in[4096];    /* bytes received, in[in_at .. in_len) not read */
    size_t in_at, in_len;
};

/* What a stop reply says. */
struct rsp_stop {
    enum { RSP_STOPPED, RSP_EXITED, RSP_KILLED } kind;
    int value;        /* signal (stopped, killed) or exit status */
};

/* AArch64's general registers as `g` sends them (qemu's aarch64-core.xml:
 * x0-x30, sp, pc, 64 bits each, then cpsr). */
#define RSP_A64_NREGS 33

/* Connects to 127.0.0.1:port, retrying until `timeout` seconds have
 * passed (the stub may not listen yet). */
enum rsp_status rsp_connect(struct rsp *c, int port, double timeout);
void rsp_close(struct rsp *c);

/* Sends `packet` and reads the reply into c->buf. */
enum rsp_status rsp_request(struct rsp *c, const char *packet);
/* "?", "s", "S sig": the stop reply parsed. */
enum rsp_status rsp_stop_reply(struct rsp *c, const char *packet,
                               struct rsp_stop *stop);
/* The 33 registers (x0-x30, sp, pc). */
enum rsp_status rsp_a64_regs(struct rsp *c, uint64_t regs[RSP_A64_NREGS]);
/* Up to len (<= 1024) bytes at addr: the count read (0: fault). */
size_t rsp_read_mem(struct rsp *c, uint64_t addr, void *out, size_t len);
/* Up to cap bytes of the object `name` of qXfer (`auxv`, ...), read
 * from offset 0 until the stub says it has no more; the count read, 0
 * when the stub has no such object. */
size_t rsp_xfer_read(struct rsp *c, const char *name, void *out, size_t cap);
/* A port on 127.0.0.1 free now (bound to 0 and released); 0: none. */
int rsp_free_port(void);
const char *rsp_status_text(enum rsp_status status);

#endif
