/* SPDX-License-Identifier: MIT */
/* support.c — see support.h. */
#include "support.h"

#include "compile/cg.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *join(const char *base_env, const char *fallback, const char *rel)
{
    const char *base = getenv(base_env);
    if (!base)
        base = fallback;
    size_t n = strlen(base) + strlen(rel) + 2;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s", base, rel);
    return path;
}

char *test_src_path(const char *rel)
{
    return join("CFISEM_SRC", ".", rel);
}

char *test_build_path(const char *rel)
{
    return join("CFISEM_BUILD", "build", rel);
}

char *test_object_id_flag(const char *object)
{
    struct eh_elf_object_id id;
    struct cfi_diag diag;
    if (cg_object_id(object, &id, &diag) != CFI_OK)
        return strdup("");
    size_t size = 64 + 5 * (size_t)EH_ELF_OBJECT_ID_MAX;
    char *flag = malloc(size);
    if (!flag)
        return NULL;
    int n = snprintf(flag, size, "'-DOBJECT_ID={%u,%u,{%s", (unsigned)id.kind,
                     (unsigned)id.size, id.size ? "" : "0");
    for (uint32_t i = 0; i < id.size && i < EH_ELF_OBJECT_ID_MAX; i++)
        n += snprintf(flag + n, size - (size_t)n, "%s0x%02x", i ? "," : "",
                      id.id[i]);
    snprintf(flag + n, size - (size_t)n, "}}'");
    return flag;
}

struct sink {
    char *buf;
    size_t len, cap;
};

static void sink_add(struct sink *s, const char *data, size_t n)
{
    if (s->len + n + 1 > s->cap) {
        s->cap = (s->len + n + 1) * 2;
        s->buf = realloc(s->buf, s->cap);
    }
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    s->buf[s->len] = 0;
}

/* Reads both pipes until both close, so neither child write blocks. */
static void drain(int out_fd, int err_fd, struct sink *out, struct sink *err)
{
    struct pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    struct sink *sinks[2] = {out, err};
    int open_fds = 2;
    char buf[65536];
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0)
            break;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP)))
                continue;
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                sink_add(sinks[i], buf, (size_t)n);
            } else {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
}

void test_run_cfisem(const char *const *args, struct test_run *run)
{
    const char *tool = getenv("CFISEM");
    if (!tool)
        tool = "build/cfisem";
    size_t n = 0;
    while (args[n])
        n++;
    char **argv = calloc(n + 2, sizeof *argv);
    argv[0] = (char *)tool;
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = (char *)args[i];
    int out_pipe[2], err_pipe[2];
    if (pipe(out_pipe) || pipe(err_pipe))
        abort();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out_pipe[1], 1);
        dup2(err_pipe[1], 2);
        close(out_pipe[0]);
        close(err_pipe[0]);
        const char *leaks = getenv("CFISEM_CHILD_LEAKS");
        if (leaks && !strcmp(leaks, "0"))
            setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
        execv(tool, argv);
        _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    struct sink out = {0}, err = {0};
    sink_add(&out, "", 0);
    sink_add(&err, "", 0);
    drain(out_pipe[0], err_pipe[0], &out, &err);
    int status = 0;
    waitpid(pid, &status, 0);
    free(argv);
    run->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    run->out = out.buf;
    run->out_len = out.len;
    run->err = err.buf;
    run->err_len = err.len;
}

void test_run_free(struct test_run *run)
{
    free(run->out);
    free(run->err);
    run->out = run->err = NULL;
}

size_t test_count_lines(const char *text)
{
    size_t n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

char *test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct sink s = {0};
    sink_add(&s, "", 0);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        sink_add(&s, buf, n);
    fclose(f);
    if (len)
        *len = s.len;
    return s.buf;
}

int test_write_file(const char *path, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(bytes, 1, len, f);
    return fclose(f) == 0 && n == len ? 0 : -1;
}

char *test_temp_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    char *path = malloc(4096);
    snprintf(path, 4096, "%s/cfisem-test-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(path))
        abort();
    return path;
}

char *test_system_lib(const char *name)
{
    static const char *const dirs[] = {"/lib/x86_64-linux-gnu",
                                       "/usr/lib/x86_64-linux-gnu"};
    for (size_t i = 0; i < 2; i++) {
        char *path = malloc(4096);
        snprintf(path, 4096, "%s/%s", dirs[i], name);
        if (access(path, R_OK) == 0)
            return path;
        free(path);
    }
    return NULL;
}
