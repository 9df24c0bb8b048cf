/* SPDX-License-Identifier: MIT */
/* check_install.c — cfisem as a user installs it: `make install` into a
 * temporary DESTDIR, then the installed binary, manual pages, ABI header,
 * bash completion and run-time library (through its pkg-config file) are
 * used as installed; `make uninstall` removes
 * them all. A program builds against the build tree as against an
 * install (build/cfisem-unwind-uninstalled.pc). The Debian packages
 * (`dpkg-buildpackage -b` on a copy of the source tree, and its source
 * package) pass lintian with no error or warning, install into a scratch
 * root (dpkg --root), are used there the same way, and their removal
 * leaves nothing (in the plain pass: the packages are built plain). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

/* Runs a shell command; its exit status. */
static int shell(const char *command)
{
    int status = system(command);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The output of a shell command (at most 64 KiB), malloc'd. */
static char *shell_output(const char *command)
{
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    char *text = calloc(1, 65536);
    size_t n = fread(text, 1, 65535, pipe);
    text[n] = 0;
    pclose(pipe);
    return text;
}

/* make TARGET in the source tree, with this build's BUILD and SANITIZE,
 * and the Makefile's default PREFIX: another one would rebuild the
 * run-time library's objects.o (it names its system folder) in the
 * build the other suites use. */
static int make(const char *target, const char *destdir)
{
    char *src = test_src_path("");
    char *build = test_build_path("");
    const char *sanitize = getenv("CFISEM_SANITIZE");
    char command[13000];
    snprintf(command, sizeof command,
             "make -s -C '%s' BUILD='%s' SANITIZE='%s' DESTDIR='%s' "
             "PREFIX=/usr/local %s > /dev/null", src, build, sanitize ? sanitize : "",
             destdir, target);
    free(src);
    free(build);
    return shell(command);
}

/* The installed binary prints a case's IL exactly as its golden file. */
static void assert_runs(const char *binary)
{
    char *so = test_build_path("corpus/cases/prologue.so");
    char *golden_path = test_src_path("corpus/cases/prologue.il");
    char command[9000];
    snprintf(command, sizeof command, "'%s' il '%s'", binary, so);
    char *printed = shell_output(command);
    char *golden = test_read_file(golden_path, NULL);
    ck_assert_ptr_nonnull(golden);
    ck_assert_msg(!strcmp(golden, printed), "%s printed [%s]", binary,
                  printed);
    free(printed);
    free(golden);
    free(golden_path);
    free(so);
}

/* Every command `cfisem --help` lists has its manual page, which man
 * renders with no warning and whose synopsis is the command's. */
static void assert_man_pages(const char *root, const char *binary)
{
    char command[9000];
    snprintf(command, sizeof command,
             "'%s' --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF "
             "{ print $1 }'", binary);
    char *commands = shell_output(command);
    size_t pages = 0;
    for (char *name = strtok(commands, "\n"); name; name = strtok(NULL, "\n")) {
        /* the SYNOPSIS section of the page as man prints it (its
         * warnings, on stderr, are the next check's) */
        snprintf(command, sizeof command,
                 "LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "
                 "'%s/usr/local/share/man/man1/cfisem-%s.1' 2>/dev/null | "
                 "sed -n '/^SYNOPSIS/,/^[A-Z]/p' | "
                 "grep -c 'cfisem %s FILE\\|cfisem %s --seed\\|cfisem %s \\[\\|"
                 "cfisem %s merge RESULT\\|cfisem %s PID'",
                 root, name, name, name, name, name, name);
        char *count = shell_output(command);
        ck_assert_msg(atoi(count) >= 1, "cfisem-%s.1: no synopsis", name);
        free(count);
        snprintf(command, sizeof command,
                 "LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "
                 "'%s/usr/local/share/man/man1/cfisem-%s.1' 2>&1 >/dev/null", root,
                 name);
        char *warnings = shell_output(command);
        ck_assert_msg(warnings[0] == 0, "cfisem-%s.1: %s", name, warnings);
        free(warnings);
        pages++;
    }
    ck_assert_uint_ge(pages, 6);
    free(commands);
}

/* The pages of sections 3 and 5 render with no warning, and every
 * function runtime/cfisem-unwind.h declares has its page in section 3
 * (a link to cfisem-unwind(3)), which names it. `man`: the folder of
 * man3 and man5; `suffix`: "" or ".gz". */
static void assert_api_pages(const char *man, const char *suffix)
{
    char command[13000];
    snprintf(command, sizeof command,
             "cd '%s' && for p in man3/cfisem-unwind.3 man5/cfisem-il-format.5 "
             "man5/cfisem-eh-elf.5; do test -f $p%s || echo \"no $p\"; "
             "LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l $p%s 2>&1 "
             ">/dev/null; done", man, suffix, suffix);
    char *said = shell_output(command);
    ck_assert_msg(said[0] == 0, "sections 3 and 5: %s", said);
    free(said);
    snprintf(command, sizeof command,
             "cd '%s' && tr '()' '<>' < "
             "\"$CFISEM_SRC/runtime/cfisem-unwind.h\" | "
             "sed -n -e '/^typedef/d' "
             "-e 's/^[a-z].*[ *]\\(cfisem_[a-z_]*\\)<.*/\\1/p' | "
             "while read -r f; do test -e man3/$f.3%s || echo \"no $f.3\"; "
             "LC_ALL=C.UTF-8 MANWIDTH=200 man -l man3/$f.3%s 2>/dev/null | "
             "grep -q \"$f(\" || echo \"$f.3 does not name $f\"; "
             "echo \"$f\" >> functions; done; grep -c . functions; "
             "rm -f functions",
             man, suffix, suffix);
    said = shell_output(command);
    ck_assert_msg(atoi(said) >= 13 && !strstr(said, "no ") &&
                  !strstr(said, "does not"), "section 3: %s", said);
    free(said);
}

/* The completion, sourced in bash, completes commands, options and
 * engine names. */
static void assert_completion(const char *root)
{
    char command[9000];
    snprintf(command, sizeof command,
             "bash -c 'source \"%s/usr/local/share/bash-completion/completions/"
             "cfisem\"; t() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); "
             "_cfisem; echo \"${COMPREPLY[*]}\"; }; t cfisem un; "
             "t cfisem diff --eng; t cfisem unwind x --engine libd; "
             "t cfisem il x --format j'", root);
    char *out = shell_output(command);
    ck_assert_str_eq(out, "unwind\n--engines\nlibdwarf libdw\njson\n");
    free(out);
}

/* The AArch64 eh_elf runner as installed (`prefix`: DESTDIR/PREFIX, or
 * the unpacked package's usr): PREFIX/lib/cfisem/aarch64,
 * where the installed cfisem finds it from where it runs (the build
 * tree's is out of its reach, and nothing in the environment names
 * one): an AArch64 case compiled by the installed cfisem validates at
 * every PC, its eh_elf called by that runner under qemu-aarch64; with
 * the runner gone, validate says so in one line. */
static void assert_aarch64_runner(const char *prefix, const char *binary)
{
    char runner[4200], eh_elf[4200], command[13000];
    snprintf(runner, sizeof runner, "%s/lib/cfisem/aarch64/eh_elf_runner",
             prefix);
    snprintf(eh_elf, sizeof eh_elf, "%s/pac_ret.eh_elf.so", prefix);
    ck_assert_msg(access(runner, X_OK) == 0, "no runner at %s", runner);
    char *so = test_build_path("corpus/cases-aarch64/pac_ret.so");
    snprintf(command, sizeof command,
             "unset CFISEM_AARCH64_RUNNER CFISEM_QEMU_AARCH64; "
             "'%s' compile '%s' -o '%s' > /dev/null && "
             "'%s' validate '%s' '%s' > /dev/null", binary, so, eh_elf,
             binary, so, eh_elf);
    ck_assert_msg(shell(command) == 0, "the installed runner does not "
                  "validate an AArch64 eh_elf");
    snprintf(command, sizeof command, "%s.away", runner);
    ck_assert_int_eq(rename(runner, command), 0);
    snprintf(command, sizeof command,
             "unset CFISEM_AARCH64_RUNNER; '%s' validate '%s' '%s' "
             "2>&1 >/dev/null", binary, so, eh_elf);
    char *said = shell_output(command);
    ck_assert_msg(strstr(said, "no AArch64 eh_elf runner") &&
                  strchr(said, '\n') == said + strlen(said) - 1,
                  "without its runner, validate said [%s]", said);
    free(said);
    snprintf(command, sizeof command, "%s.away", runner);
    ck_assert_int_eq(rename(command, runner), 0);
    unlink(eh_elf);
    free(so);
}

/* libcfisem-unwind as installed (or in the build tree): a program that
 * includes cfisem-unwind.h and eh_elf.h, built in `dir` with the flags
 * the pkg-config file gives (`pkg_env`: PKG_CONFIG_* settings that find
 * it), links against the shared library of `libdir` by its soname and
 * prints a backtrace of at least its own three frames. `sanitized`: the
 * library is an ASan+UBSan build, and the program must be one too. */
static void assert_unwind_library(const char *dir, const char *pkg_env,
                                  const char *libdir, int sanitized)
{
    char source[4200], command[13000];
    snprintf(source, sizeof source, "%s/bt.c", dir);
    const char *program =
        "#include <cfisem-unwind.h>\n#include <eh_elf.h>\n"
        "#include <stdio.h>\n"
        "static int depth(int n) { void *pcs[64]; if (n > 0) return "
        "depth(n - 1) + 1; return cfisem_backtrace(pcs, 64); }\n"
        "int main(void) { cfisem_prepare(NULL); int n = depth(2);"
        " printf(\"%d %u\\n\", n, EH_ELF_ABI_VERSION);"
        " return n >= 3 ? 0 : 1; }\n";
    ck_assert_int_eq(test_write_file(source, program, strlen(program)), 0);
    const char *flags = sanitized ? "-fsanitize=address,undefined" : "";
    snprintf(command, sizeof command,
             "cd '%s' && export %s && "
             "cc -O0 -Wall -Werror %s -o bt bt.c $(pkg-config --cflags --libs "
             "cfisem-unwind) && export LD_LIBRARY_PATH='%s' && "
             "./bt > /dev/null "
             "&& ldd bt | grep -q '^[[:space:]]*libcfisem-unwind.so.1 => %s/' "
             "&& rm -f bt bt.c",
             dir, pkg_env, flags, libdir, libdir);
    ck_assert_msg(shell(command) == 0,
                  "a program does not build, link or run with libcfisem-unwind "
                  "(%s, %s)", pkg_env, libdir);
}

START_TEST(test_make_install_and_uninstall)
{
    char *root = test_temp_dir();
    ck_assert_int_eq(make("install", root), 0);
    char binary[4200];
    snprintf(binary, sizeof binary, "%s/usr/local/bin/cfisem", root);
    assert_runs(binary);
    char command[9000];
    assert_man_pages(root, binary);
    snprintf(command, sizeof command, "%s/usr/local/share/man", root);
    assert_api_pages(command, "");
    assert_completion(root);
    snprintf(command, sizeof command,
             "echo '#include <eh_elf.h>' | cc -fsyntax-only -Wall -Werror "
             "-I'%s/usr/local/include/cfisem' -x c -", root);
    ck_assert_msg(shell(command) == 0, "eh_elf.h does not compile alone");
    const char *sanitize = getenv("CFISEM_SANITIZE");
    snprintf(command, sizeof command,
             "PKG_CONFIG_SYSROOT_DIR='%s' "
             "PKG_CONFIG_PATH='%s/usr/local/lib/pkgconfig'", root, root);
    char libdir[4200];
    snprintf(libdir, sizeof libdir, "%s/usr/local/lib", root);
    assert_unwind_library(root, command, libdir,
                          sanitize && !strcmp(sanitize, "1"));
    snprintf(command, sizeof command, "%s/usr/local", root);
    assert_aarch64_runner(command, binary);
    snprintf(command, sizeof command,
             "test -d '%s/usr/local/lib/'\"$(cc -print-multiarch)\"'"
             "/cfisem/eh_elf/.build-id'", root);
    ck_assert_msg(shell(command) == 0, "no system eh_elf folder installed");
    ck_assert_int_eq(make("uninstall", root), 0);
    snprintf(command, sizeof command, "find '%s' -type f | grep -c .", root);
    char *left = shell_output(command);
    ck_assert_msg(atoi(left) == 0, "%s files left after uninstall", left);
    free(left);
    snprintf(command, sizeof command, "rm -rf '%s'", root);
    shell(command);
    free(root);
}
END_TEST

/* The build tree as an install: with build/ on PKG_CONFIG_PATH,
 * pkg-config takes build/cfisem-unwind-uninstalled.pc, which names the
 * tree's headers and libraries, and the program runs with the library
 * of build/ found by its soname (build/libcfisem-unwind.so.1). */
START_TEST(test_build_tree_library)
{
    char *dir = test_temp_dir();
    char *build = test_build_path("");
    build[strlen(build) - 1] = 0;
    char env[9000], command[13000];
    snprintf(env, sizeof env, "PKG_CONFIG_PATH='%s'", build);
    snprintf(command, sizeof command,
             "%s pkg-config --cflags cfisem-unwind", env);
    char *cflags = shell_output(command);
    ck_assert_msg(strstr(cflags, "/runtime") && strstr(cflags, "/compile"),
                  "pkg-config does not take the uninstalled file: [%s]",
                  cflags);
    free(cflags);
    const char *sanitize = getenv("CFISEM_SANITIZE");
    assert_unwind_library(dir, env, build, sanitize && !strcmp(sanitize, "1"));
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    shell(command);
    free(build);
    free(dir);
}
END_TEST

/* Each binary package holds its files (DEB: the .deb's file name before
 * _VERSION; the files as patterns of dpkg-deb -c's paths). */
static void assert_package_holds(const char *work, const char *deb,
                                 const char *version, const char *arch,
                                 const char *patterns, int count)
{
    char command[13000];
    snprintf(command, sizeof command,
             "dpkg-deb -c '%s/%s_%s_%s.deb' | awk '{ print $6 }' | "
             "grep -c '%s'", work, deb, version, arch, patterns);
    char *found = shell_output(command);
    ck_assert_msg(atoi(found) == count, "%s holds %d of the %d files %s",
                  deb, atoi(found), count, patterns);
    free(found);
}

/* The four binary packages of `work` (built by dpkg-buildpackage),
 * installed into a scratch root `root` with dpkg --root, hold their
 * files where Debian wants them. */
static void assert_packages_install(const char *work, const char *root,
                                    const char *version)
{
    char command[40000];
    assert_package_holds(work, "cfisem", version, "amd64",
                         "usr/bin/cfisem$\\|man1/cfisem-diff.1.gz$\\|"
                         "man5/cfisem-eh-elf.5.gz$\\|completions/cfisem$\\|"
                         "usr/lib/cfisem/aarch64/eh_elf_runner$", 5);
    assert_package_holds(work, "libcfisem-unwind1", version, "amd64",
                         "usr/lib/x86_64-linux-gnu/libcfisem-unwind.so.1$", 1);
    assert_package_holds(work, "libcfisem-unwind-dev", version, "amd64",
                         "include/cfisem/eh_elf.h$\\|"
                         "include/cfisem/cfisem-unwind.h$\\|"
                         "x86_64-linux-gnu/libcfisem-unwind.a$\\|"
                         "x86_64-linux-gnu/libcfisem-unwind.so$\\|"
                         "x86_64-linux-gnu/pkgconfig/cfisem-unwind.pc$\\|"
                         "man3/cfisem-unwind.3.gz$", 6);
    assert_package_holds(work, "cfisem-doc", version, "all",
                         "README.md.gz$\\|docs/runtime.md.gz$", 2);
    /* The library package's symbols are the header's functions. */
    snprintf(command, sizeof command,
             "dpkg-deb -I '%s/libcfisem-unwind1_%s_amd64.deb' symbols | "
             "sed -n 's/^ \\(cfisem_[a-z_]*\\)@Base .*/\\1/p' | sort > "
             "'%s/symbols' && tr '()' '<>' < "
             "\"$CFISEM_SRC/runtime/cfisem-unwind.h\" | "
             "sed -n -e '/^typedef/d' "
             "-e 's/^[a-z].*[ *]\\(cfisem_[a-z_]*\\)<.*/\\1/p' | sort | "
             "cmp -s - '%s/symbols' && test -s '%s/symbols'",
             work, version, work, work, work);
    ck_assert_msg(shell(command) == 0, "the symbols file is not the "
                  "header's functions (see %s/symbols)", work);
    snprintf(command, sizeof command,
             "mkdir -p '%s/var/lib/dpkg/info' '%s/var/lib/dpkg/updates' && "
             "touch '%s/var/lib/dpkg/status' '%s/var/lib/dpkg/available' && "
             "cd '%s' && dpkg --root='%s' --log=/dev/null --force-depends "
             "--force-script-chrootless --force-not-root -i "
             "cfisem_%s_amd64.deb libcfisem-unwind1_%s_amd64.deb "
             "libcfisem-unwind-dev_%s_amd64.deb cfisem-doc_%s_all.deb "
             "> dpkg-install.log 2>&1",
             root, root, root, root, work, root, version, version, version,
             version);
    ck_assert_msg(shell(command) == 0, "dpkg --root -i failed (see %s)",
                  work);
}

/* dpkg --purge of the four packages leaves no file and no folder in the
 * scratch root but dpkg's own database. */
static void assert_packages_remove(const char *work, const char *root)
{
    char command[13000];
    snprintf(command, sizeof command,
             "cd '%s' && dpkg --root='%s' --log=/dev/null --force-depends "
             "--force-script-chrootless --force-not-root --purge cfisem "
             "libcfisem-unwind-dev libcfisem-unwind1 cfisem-doc "
             "> dpkg-remove.log 2>&1", work, root);
    ck_assert_msg(shell(command) == 0, "dpkg --root --purge failed (see %s)",
                  work);
    snprintf(command, sizeof command,
             "cd '%s' && find . -mindepth 1 | grep -v '^\\./var$\\|"
             "^\\./var/lib$\\|^\\./var/lib/dpkg$\\|^\\./var/lib/dpkg/' | "
             "head -n 5", root);
    char *left = shell_output(command);
    ck_assert_msg(left[0] == 0, "left after removal: %s", left);
    free(left);
}

/* The source package (dpkg-source -b) and the binary packages
 * (dpkg-buildpackage -us -uc -b, whose build runs make check-package) of
 * a copy of the tree: lintian reports no error and no warning on any;
 * installed into a scratch root they work as make install's files do
 * (binary, pages, runner, copyright; a program built with pkg-config
 * against the installed -dev package runs), and removal leaves nothing.
 * Nothing is installed on the system. */
START_TEST(test_debian_package)
{
    char *work = test_temp_dir();
    char *src = test_src_path("");
    char command[13000];
    snprintf(command, sizeof command,
             "mkdir '%s/cfisem' && tar -C '%s' --exclude=./build "
             "--exclude=./.git -cf - . | tar -C '%s/cfisem' -xf - && "
             "cd '%s' && dpkg-source -b cfisem > source.log 2>&1 && "
             "cd cfisem && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "
             "-u MAKEOVERRIDES -u SANITIZE -u BUILD -u EH_ELF_DIR "
             "-u WORKLOAD_DIR -u EH_ELF_TOOL -u EH_ELF_DEPS -u EH_ELF_CASES "
             "dpkg-buildpackage -us -uc -b > ../build.log "
             "2>&1", work, src, work, work);
    ck_assert_msg(shell(command) == 0, "dpkg-buildpackage failed (see %s)",
                  work);
    char *version = shell_output("sed -n '1s/^cfisem (\\(.*\\)).*/\\1/p' "
                                 "\"$CFISEM_SRC/debian/changelog\"");
    version[strcspn(version, "\n")] = 0;
    /* lintian must run (its exit status 0: no error) and say no E: or
     * W: line; every package of the .changes is checked. */
    snprintf(command, sizeof command,
             "cd '%s' && lintian cfisem_%s.dsc cfisem_%s_amd64.changes "
             "> lintian.txt 2>&1; echo \"lintian exit $?\"; "
             "grep '^[EW]: ' lintian.txt",
             work, version, version);
    char *complaints = shell_output(command);
    ck_assert_msg(!strcmp(complaints, "lintian exit 0\n"), "lintian: %s",
                  complaints);
    free(complaints);
    char root[4200];
    snprintf(root, sizeof root, "%s/root", work);
    assert_packages_install(work, root, version);
    /* Its copyright file (debian/copyright) states LICENSE's holder and
     * terms, word for word. */
    snprintf(command, sizeof command,
             "doc='%s/root/usr/share/doc/cfisem/copyright' && "
             "holder=$(sed -n 's/^Copyright (c) //p' \"$CFISEM_SRC/LICENSE\") && "
             "grep -qx \"Copyright: $holder\" \"$doc\" && "
             "sed -n '/^ Permission/,$p' \"$doc\" | "
             "sed -e 's/^ //' -e 's/^\\.$//' > '%s/terms' && "
             "sed -n '/^Permission/,$p' \"$CFISEM_SRC/LICENSE\" | "
             "cmp -s - '%s/terms'",
             work, work, work);
    ck_assert_msg(shell(command) == 0,
                  "the package's copyright file is not LICENSE's (see %s)",
                  work);
    char binary[4300];
    snprintf(binary, sizeof binary, "%s/usr/bin/cfisem", root);
    assert_runs(binary);
    snprintf(command, sizeof command, "%s/usr", root);
    assert_aarch64_runner(command, binary);
    snprintf(command, sizeof command, "%s/usr/share/man", root);
    assert_api_pages(command, ".gz");
    snprintf(command, sizeof command, "'%s' --version | head -n 1", binary);
    char *first = shell_output(command);
    char expected[256];
    snprintf(expected, sizeof expected, "cfisem %s\n", version);
    ck_assert_str_eq(first, expected);
    free(first);
    /* The -dev package as a program's build uses it. */
    char libdir[4300];
    snprintf(libdir, sizeof libdir, "%s/usr/lib/x86_64-linux-gnu", root);
    snprintf(command, sizeof command,
             "PKG_CONFIG_SYSROOT_DIR='%s' PKG_CONFIG_LIBDIR='%s/pkgconfig'",
             root, libdir);
    assert_unwind_library(work, command, libdir, 0);
    assert_packages_remove(work, root);
    free(version);
    snprintf(command, sizeof command, "rm -rf '%s'", work);
    shell(command);
    free(src);
    free(work);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("install");
    TCase *tc = tcase_create("install");
    tcase_set_timeout(tc, 1200);
    tcase_add_test(tc, test_make_install_and_uninstall);
    tcase_add_test(tc, test_build_tree_library);
    /* The package's build is the plain one whichever pass runs this
     * suite (dpkg-buildpackage with SANITIZE and BUILD unset): the
     * sanitizer pass would build and check the very same packages. */
    const char *sanitize = getenv("CFISEM_SANITIZE");
    if (!sanitize || strcmp(sanitize, "1"))
        tcase_add_test(tc, test_debian_package);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
