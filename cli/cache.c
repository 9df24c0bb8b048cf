/* SPDX-License-Identifier: MIT */
/* cache.c — `cfisem cache`: the eh_elf cache of libcfisem-unwind, keyed
 * by build-id, filled with compiled eh_elfs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "compile/cg.h"
#include "runtime/cfisem-unwind.h"
#include "semantics/sem.h"

static const char usage[] =
    "usage: cfisem cache FILE... [--cache DIR | --system] [--layout tree|table]\n"
    "                    [-j N] [--force] [--path]\n"
    "\n"
    "Fills the eh_elf cache of the run-time library (libcfisem-unwind):\n"
    "for each FILE with a GNU build-id, its eh_elf (the full ABI) is compiled\n"
    "into DIR/.build-id/xx/rest.eh_elf.so, xx the first byte of the build-id\n"
    "and rest the others in hex, where cfisem_prepare looks for the eh_elf\n"
    "of a loaded object with that build-id. An eh_elf already there that\n"
    "loads (cfisem's full ABI, a version this cfisem can call) and is\n"
    "stamped with FILE's build-id is kept; one stamped with another (or with\n"
    "none: ABI version 2 or 3) is compiled again. An eh_elf is written\n"
    "under a temporary name and renamed: a process that loads it meanwhile\n"
    "sees the old one or the new one, never half of one. Prints one line\n"
    "per file: FILE -> PATH (compiled, or kept); for an eh_elf there that\n"
    "was built from another file: (compiled; the eh_elf there was built\n"
    "from build-id ...).\n"
    "\n"
    "  --cache DIR   the cache (default: $CFISEM_CACHE, else\n"
    "                ${XDG_CACHE_HOME:-$HOME/.cache}/cfisem, as\n"
    "                cfisem_prepare)\n"
    "  --system      the run-time library's system folder,\n"
    "                PREFIX/lib/MULTIARCH/cfisem/eh_elf (make install\n"
    "                creates it; root fills it: every user's programs\n"
    "                use it, and setuid programs use no other)\n"
    "  --layout L    table (default) or tree, as for cfisem compile\n"
    "  -j N          compile N translation units at a time (default: the\n"
    "                number of CPUs)\n"
    "  --force       compile again when an eh_elf is already there\n"
    "  --path        print where each FILE's eh_elf goes; compile nothing\n"
    "\n"
    "A FILE without a build-id is skipped with a message on stderr (the\n"
    "run-time library then finds its eh_elf only beside it, as\n"
    "FILE.eh_elf.so: cfisem compile FILE -o FILE.eh_elf.so).\n"
    "\n"
    "Example:\n"
    "  cfisem cache /lib/x86_64-linux-gnu/libc.so.6 /usr/bin/myprogram\n"
    "\n"
        "The build-id is read from the file's PT_NOTE segments, as the run-time\n"
        "library reads it from the loaded object. --system is\n"
        "/usr/local/lib/x86_64-linux-gnu/cfisem/eh_elf, or under /usr for the Debian\n"
        "package; run it as root (the library loads only eh_elfs owned by root or the\n"
        "user and writable by no one else, below folders alike).\n"
        "\n"
        "  $ cfisem cache /lib/x86_64-linux-gnu/libc.so.6 build/workload/libcfisem-shapes-noeh.so\n"
        "  /lib/x86_64-linux-gnu/libc.so.6 -> /root/.cache/cfisem/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.eh_elf.so (compiled)\n"
        "  build/workload/libcfisem-shapes-noeh.so -> /root/.cache/cfisem/.build-id/77/0be5740629fe63c01f300f1e5b390c2fcd8a83.eh_elf.so (compiled)\n"
        "\n"
    "Exit status: 0 every FILE compiled, kept or skipped; 64 usage error; 2\n"
    "no cache folder, a FILE could not be read or its eh_elf not built, or\n"
    "it has FDEs that do not translate (named on stderr; the eh_elf is\n"
    "installed all the same, and answers their error at their addresses,\n"
    "as cfisem compile builds it).\n";

enum { BUILD_ID_MAX = 64 };

struct options {
    const char *dir;
    enum cg_search_kind layout;
    unsigned jobs;
    bool force;
    bool path_only;
};

static int parse_option(int argc, char **argv, int *i, struct options *o)
{
    const char *arg = argv[*i];
    if (!strcmp(arg, "--force")) {
        o->force = true;
        return CLI_OK;
    }
    if (!strcmp(arg, "--path")) {
        o->path_only = true;
        return CLI_OK;
    }
    if (!strcmp(arg, "--system")) {
        o->dir = cfisem_system_eh_elf_dir();
        return CLI_OK;
    }
    bool takes_value = !strcmp(arg, "--cache") || !strcmp(arg, "--layout") ||
                       !strcmp(arg, "-j");
    if (!takes_value)
        return cli_usage_error("cache", "unknown option", arg);
    if (*i + 1 >= argc)
        return cli_usage_error("cache", "missing value for", arg);
    const char *value = argv[++*i];
    uint64_t jobs;
    if (!strcmp(arg, "--cache")) {
        if (!*value)
            return cli_usage_error("cache", "empty folder for", arg);
        o->dir = value;
    } else if (!strcmp(arg, "--layout")) {
        if (!cg_search_kind_parse(value, &o->layout))
            return cli_usage_error("cache", "unknown layout", value);
    } else {
        if (!cli_parse_u64(value, &jobs) || jobs == 0 || jobs > 1024)
            return cli_usage_error("cache", "bad job count", value);
        o->jobs = (unsigned)jobs;
    }
    return CLI_OK;
}

/* The default folder, as cfisem_prepare chooses it. */
static bool default_dir(char *buf, size_t size)
{
    const char *env = getenv("CFISEM_CACHE");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (env && *env)
        n = snprintf(buf, size, "%s", env);
    else if (xdg && *xdg)
        n = snprintf(buf, size, "%s/cfisem", xdg);
    else if (home && *home)
        n = snprintf(buf, size, "%s/.cache/cfisem", home);
    else
        return false;
    return n > 0 && (size_t)n < size;
}

/* DIR/.build-id/xx/rest.eh_elf.so; false when too long. */
static bool cache_path(const char *dir, const uint8_t *id, size_t len,
                       char *out, size_t size)
{
    int n = snprintf(out, size, "%s/.build-id/%02x/", dir, id[0]);
    for (size_t i = 1; i < len && n > 0 && (size_t)n < size; i++)
        n += snprintf(out + n, size - (size_t)n, "%02x", id[i]);
    if (n <= 0 || (size_t)n >= size)
        return false;
    n += snprintf(out + n, size - (size_t)n, ".eh_elf.so");
    return n > 0 && (size_t)n < size;
}

/* An eh_elf of the full ABI built from `file` (its stamp) that loads is
 * at `path`. One of another file (whose build-id collides, or copied
 * there) is not: *stale then says what it was built from. */
static bool usable(const char *path, const char *file, char *stale,
                   size_t size)
{
    struct stat st;
    stale[0] = 0;
    if (stat(path, &st) != 0)
        return false;
    struct eh_elf_object_id object;
    struct cg_stale mismatch;
    struct cg_eh_elf *eh;
    struct cfi_diag diag;
    if (cg_object_id(file, &object, &diag) != CFI_OK)
        return false;
    if (cg_load_for(path, &object, &eh, &mismatch, &diag) != CFI_OK) {
        if (mismatch.ours && mismatch.stamped &&
            !cg_object_id_equal(&mismatch.built_from, &object))
            cg_object_id_text(&mismatch.built_from, stale, size);
        return false;
    }
    bool full = cg_eh_elf_abi(eh) == CG_ABI_FULL;
    cg_unload(eh);
    return full;
}

/* FILE's eh_elf built into `out`. */
static int build(const struct options *o, const char *path, const char *out,
                 const char *stale)
{
    struct cfi_file *file;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (cfi_file_open(path, &file, &diag) != CFI_OK) {
        cli_report_file_error(path, &diag);
        return CLI_BAD_INPUT;
    }
    struct sem_file_il *il;
    if (sem_file_il_build(file, &il) != CFI_OK) {
        fprintf(stderr, "cfisem: out of memory\n");
        cfi_file_close(file);
        return CLI_BAD_INPUT;
    }
    int result = CLI_OK;
    for (size_t i = 0; i < il->nfdes && result == CLI_OK; i++)
        if (il->status[i] != CFI_OK) {
            cli_report_fde_error(path, &file->fdes[i], &il->diags[i],
                                 il->nfailed);
            result = CLI_BAD_INPUT; /* built all the same */
        }
    struct cg_program *program = NULL;
    if (cg_generate_search(il, CG_ABI_FULL, o->layout, &program, &diag) !=
        CFI_OK) {
        cli_report_file_error(path, &diag);
        result = CLI_BAD_INPUT;
    } else {
        struct cg_build_options options = {NULL, o->jobs, false};
        if (cg_build(program, out, &options, NULL, &diag) != CFI_OK) {
            cli_report_file_error(out, &diag);
            result = CLI_BAD_INPUT;
        } else {
            printf("%s -> %s (compiled%s%s)\n", path, out,
                   *stale ? "; the eh_elf there was built from " : "", stale);
        }
    }
    cg_program_free(program);
    sem_file_il_free(il);
    cfi_file_close(file);
    return result;
}

static int cache_file(const struct options *o, const char *path)
{
    uint8_t id[BUILD_ID_MAX];
    size_t len;
    struct cfi_diag diag;
    if (cg_build_id(path, id, sizeof id, &len, &diag) != CFI_OK) {
        cli_report_file_error(path, &diag);
        return CLI_BAD_INPUT;
    }
    if (len < 2) { /* cfisem_prepare takes none shorter */
        fprintf(stderr, "cfisem: %s: no build-id, skipped\n", path);
        return CLI_OK;
    }
    char out[8192];
    if (!cache_path(o->dir, id, len, out, sizeof out)) {
        fprintf(stderr, "cfisem: %s: cache path too long\n", path);
        return CLI_BAD_INPUT;
    }
    if (o->path_only) {
        printf("%s -> %s\n", path, out);
        return CLI_OK;
    }
    char stale[2 * EH_ELF_OBJECT_ID_MAX + 32] = "";
    if (!o->force && usable(out, path, stale, sizeof stale)) {
        printf("%s -> %s (kept)\n", path, out);
        return CLI_OK;
    }
    char folder[8192];
    snprintf(folder, sizeof folder, "%s", out);
    *strrchr(folder, '/') = 0;
    if (!cfi_make_dirs(folder)) {
        fprintf(stderr, "cfisem: %s: cannot create the folder: %s\n", folder,
                cfi_errno_text(errno));
        return CLI_BAD_INPUT;
    }
    return build(o, path, out, stale);
}

int cli_cache(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    struct options o = {NULL, CG_SEARCH_TABLE, 0, false, false};
    const char **files = calloc((size_t)argc, sizeof *files);
    if (!files) {
        fprintf(stderr, "cfisem: out of memory\n");
        return CLI_BAD_INPUT;
    }
    int nfiles = 0, result = CLI_OK;
    for (int i = 1; i < argc && result == CLI_OK; i++) {
        if (argv[i][0] != '-')
            files[nfiles++] = argv[i];
        else
            result = parse_option(argc, argv, &i, &o);
    }
    if (result == CLI_OK && nfiles == 0)
        result = cli_usage_error("cache", "missing FILE", NULL);
    char dir[4096];
    if (result == CLI_OK && !o.dir) {
        if (default_dir(dir, sizeof dir)) {
            o.dir = dir;
        } else {
            fprintf(stderr, "cfisem cache: no cache folder: set CFISEM_CACHE, "
                            "XDG_CACHE_HOME or HOME, or give --cache\n");
            result = CLI_BAD_INPUT;
        }
    }
    for (int i = 0; i < nfiles && result != CLI_USAGE && o.dir; i++)
        if (cache_file(&o, files[i]) != CLI_OK)
            result = CLI_BAD_INPUT;
    free(files);
    return result;
}
