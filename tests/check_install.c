/* SPDX-License-Identifier: MIT */
/* check_install.c — cfisem as a user installs it: `make install` into a
 * temporary DESTDIR, then the installed binary, manual pages, ABI header,
 * bash completion and run-time library (through its pkg-config file) are
 * used as installed; `make uninstall` removes
 * them all. The Debian package (`dpkg-buildpackage -b` on a copy of the
 * source tree) is built, unpacked and run the same way. */
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
        snprintf(command, sizeof command,
                 "LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "
                 "'%s/usr/local/share/man/man1/cfisem-%s.1' 2>&1 | "
                 "grep -c 'cfisem %s FILE\\|cfisem %s --seed\\|cfisem %s \\[\\|"
                 "cfisem %s merge RESULT\\|warning'",
                 root, name, name, name, name, name);
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

/* libcfisem-unwind as installed: a program built with the flags its
 * pkg-config file gives, against the shared library, prints a backtrace
 * of at least its own three frames. */
static void assert_unwind_library(const char *root)
{
    char source[4200], command[13000];
    snprintf(source, sizeof source, "%s/bt.c", root);
    const char *program =
        "#include <cfisem-unwind.h>\n#include <stdio.h>\n"
        "static int depth(int n) { void *pcs[64]; if (n > 0) return "
        "depth(n - 1) + 1; return cfisem_backtrace(pcs, 64); }\n"
        "int main(void) { cfisem_prepare(NULL); int n = depth(2);"
        " printf(\"%d\\n\", n); return n >= 3 ? 0 : 1; }\n";
    ck_assert_int_eq(test_write_file(source, program, strlen(program)), 0);
    /* A sanitized build installs a sanitized library: the program must
     * be built the same way. */
    const char *sanitize = getenv("CFISEM_SANITIZE");
    const char *flags = sanitize && !strcmp(sanitize, "1")
                            ? "-fsanitize=address,undefined" : "";
    snprintf(command, sizeof command,
             "cd '%s' && export PKG_CONFIG_SYSROOT_DIR='%s' "
             "PKG_CONFIG_PATH='%s/usr/local/lib/pkgconfig' && "
             "cc -O0 -Wall -Werror %s -o bt bt.c $(pkg-config --cflags --libs "
             "cfisem-unwind) && LD_LIBRARY_PATH='%s/usr/local/lib' ./bt > /dev/null "
             "&& rm -f bt bt.c",
             root, root, root, flags, root);
    ck_assert_msg(shell(command) == 0,
                  "a program does not build or run with libcfisem-unwind");
}

START_TEST(test_make_install_and_uninstall)
{
    char *root = test_temp_dir();
    ck_assert_int_eq(make("install", root), 0);
    char binary[4200];
    snprintf(binary, sizeof binary, "%s/usr/local/bin/cfisem", root);
    assert_runs(binary);
    assert_man_pages(root, binary);
    assert_completion(root);
    char command[9000];
    snprintf(command, sizeof command,
             "echo '#include <eh_elf.h>' | cc -fsyntax-only -Wall -Werror "
             "-I'%s/usr/local/include/cfisem' -x c -", root);
    ck_assert_msg(shell(command) == 0, "eh_elf.h does not compile alone");
    assert_unwind_library(root);
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

/* dpkg-buildpackage -us -uc -b on a copy of the tree; the package holds
 * the binary and the pages, and the unpacked binary runs. */
START_TEST(test_debian_package)
{
    char *work = test_temp_dir();
    char *src = test_src_path("");
    char command[13000];
    snprintf(command, sizeof command,
             "mkdir '%s/cfisem' && tar -C '%s' --exclude=./build "
             "--exclude=./.git -cf - . | tar -C '%s/cfisem' -xf - && "
             "cd '%s/cfisem' && dpkg-buildpackage -us -uc -b > ../build.log "
             "2>&1", work, src, work, work);
    ck_assert_msg(shell(command) == 0, "dpkg-buildpackage failed (see %s)",
                  work);
    char *version = shell_output("sed -n '1s/^cfisem (\\(.*\\)).*/\\1/p' "
                                 "\"$CFISEM_SRC/debian/changelog\"");
    version[strcspn(version, "\n")] = 0;
    snprintf(command, sizeof command,
             "dpkg-deb -x '%s/cfisem_%s_amd64.deb' '%s/root' && "
             "dpkg-deb -c '%s/cfisem_%s_amd64.deb' | grep -c "
             "'usr/bin/cfisem$\\|cfisem-diff.1\\|include/cfisem/eh_elf.h\\|"
             "usr/lib/cfisem/aarch64/eh_elf_runner$'",
             work, version, work, work, version);
    char *found = shell_output(command);
    ck_assert_msg(atoi(found) == 4, "the package holds %s of 4 files", found);
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
    char binary[4200];
    snprintf(binary, sizeof binary, "%s/root/usr/bin/cfisem", work);
    assert_runs(binary);
    snprintf(command, sizeof command, "%s/root/usr", work);
    assert_aarch64_runner(command, binary);
    snprintf(command, sizeof command, "'%s' --version | head -n 1", binary);
    char *first = shell_output(command);
    char expected[256];
    snprintf(expected, sizeof expected, "cfisem %s\n", version);
    ck_assert_str_eq(first, expected);
    free(first);
    free(found);
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
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_make_install_and_uninstall);
    tcase_add_test(tc, test_debian_package);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
