/* SPDX-License-Identifier: MIT */
/* diff.c — `cfisem diff`: every engine against the IL evaluator, over the
 * PCs and states of engines/state.h, with the report of diff/report.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "files.h"
#include "inputs.h"
#include "compile/cg.h"
#include "diff/batch.h"
#include "diff/harness.h"
#include "diff/report.h"
#include "engines/engines.h"
#include "trace/trace.h"

static const char usage[] =
    "usage: cfisem diff FILE... [--manifest FILE] [--shard K/N]\n"
    "                   [--results DIR] [--engines LIST] [--states N]\n"
    "                   [--seed S] [--all-pcs] [--json OUT] [--jobs N]\n"
    "                   [--eh-elf FILE.eh_elf.so | --cache DIR]\n"
    "                   [--fault BEGIN-END]...\n"
    "                   [--show N] [--keep N] [--progress]\n"
    "                   [--timeout S] [--no-isolate] [--pcs stapsdt]\n"
    "                   [--debug-dir DIR]\n"
    "\n"
    "Asks every engine the same questions as the IL evaluator (the\n"
    "reference) and compares the answers register by register.\n"
    "\n"
    "Questions: for each FDE, each row's first address (innermost frame),\n"
    "its last address as a caller frame (PC = last + 1, the row looked up\n"
    "at PC-1), one address inside each row of more than two, and the\n"
    "first address after the FDE when no FDE covers it. Each PC is asked\n"
    "in N states: random values of the architecture's reported registers\n"
    "(x86-64: 0-16; AArch64: 0-34) with the stack pointer, the frame\n"
    "pointer (rbp, x29) and the CFA's register in a stack at\n"
    "0x7ffe00000000, the PC register at the PC; every 3rd of 4 with some\n"
    "registers unknown, every 4th of 4 with one read of the reference\n"
    "made to fault. Memory: synthetic (as cfisem unwind --mem-seed), the\n"
    "file's segments mapped, and the --fault ranges.\n"
    "\n"
    "  --manifest FILE  also the files of FILE (make corpus's manifest: a\n"
    "                   path a line, before a tab; # starts a comment)\n"
    "  --shard K/N      only shard K of N of the files: dealt out by size,\n"
    "                   the same on every machine; merge the shards' --json\n"
    "                   with cfisem report merge\n"
    "  --results DIR    keep each file's result in DIR (JSON, named by the\n"
    "                   file's SHA-256 and the settings); a later run with\n"
    "                   the same settings and cfisem reads it instead of\n"
    "                   running the file again (resumable)\n"
    "  --engines LIST   comma-separated, from: il interp compiled libdwarf\n"
    "                   libdw libunwind llvmunwind libgcc sframe gdb, or\n"
    "                   all (default: all but sframe, which most files\n"
    "                   lack, llvmunwind and libgcc, which unwind in a\n"
    "                   child process each, with the file mapped there,\n"
    "                   and gdb, the slowest). il is also run as an\n"
    "                   engine: a second instance against the reference\n"
    "  --debug-dir DIR  look for a stripped FILE's separate debug file\n"
    "                   (build-id, .gnu_debuglink) in DIR before\n"
    "                   /usr/lib/debug, as cfisem il does: its\n"
    "                   .debug_frame joins FILE's .eh_frame (repeatable)\n"
    "  --states N       states per PC (default 4, at most 1024)\n"
    "  --seed S         seed of the registers, PCs and memories (default 1)\n"
    "  --all-pcs        every address of every FDE (innermost), not only\n"
    "                   row boundaries and one address inside\n"
    "  --json OUT       write the whole result as JSON to OUT\n"
    "  --jobs N         worker threads (default: the CPUs, at most 8); the\n"
    "                   result and its order do not depend on N\n"
    "  --eh-elf FILE    the compiled engine uses this eh_elf (one FILE only;\n"
    "                   it must carry FILE's stamp: cfisem compile --help)\n"
    "  --cache DIR      else it builds one per FILE, once, into DIR (default\n"
    "                   ${XDG_CACHE_HOME:-$HOME/.cache}/cfisem), with the\n"
    "                   table layout (cfisem compile --layout table); one\n"
    "                   there whose stamp is not FILE's is built again\n"
    "  --fault B-E      reads of [B, E) fault in every state (repeatable,\n"
    "                   at most 15)\n"
    "  --show N         new mismatches printed (default 10)\n"
    "  --keep N         new mismatches kept for --json (default 1000,\n"
    "                   at most 100000); all are counted\n"
    "  --progress       progress on stderr even when it is not a terminal\n"
    "                   (by default: on a terminal, after 2 s)\n"
    "  --timeout S      the watchdog: an engine whose one answer takes\n"
    "                   longer than S seconds (default 10) is stopped, and\n"
    "                   the file's requests count as its errors (\"timed\n"
    "                   out\"); the run goes on\n"
    "  --pcs stapsdt    ask only at the SystemTap SDT probes of each FILE\n"
    "                   (cfisem sites), innermost, as a tracer stopped there\n"
    "                   would\n"
    "  --no-isolate     run in this process; by default each FILE runs in a\n"
    "                   child process, so that an engine that crashes on a\n"
    "                   file has that file's requests counted as its errors\n"
    "                   (\"crashed\") and the run goes on. No watchdog then\n"
    "\n"
    "Counting, per engine; a request is one (PC, state):\n"
    "  compared        the engine answered: agree + differ + known_dev\n"
    "  agree           same status (error class, and the register of a\n"
    "                  reg_unknown error), and when unwound the same CFA and\n"
    "                  registers (value/undefined/unknown, and the value),\n"
    "                  over what the engine speaks for\n"
    "  differ          at least one item differs that no known deviation\n"
    "                  explains: a new mismatch\n"
    "  known_dev       items differ, each explained by a known deviation\n"
    "                  (counted per deviation id below the table)\n"
    "  not_comp        the engine says it cannot be asked the request\n"
    "  errors          the engine could not answer: not built, cannot open\n"
    "                  the file, crashed or timed out on it, out of memory\n"
    "  For every engine: requests = compared + not_comp + errors.\n"
    "\n"
    "Each new mismatch is printed with the row's IL and a `cfisem unwind`\n"
    "line; run it, and the same with --engine il, to see both answers.\n"
    "\n"
    "Example:\n"
    "  cfisem diff /lib/x86_64-linux-gnu/libc.so.6 /bin/ls --json out.json\n"
    "\n"
    "A file with the contents (SHA-256) of an earlier one is not run\n"
    "again: it gets that file's result under its own name.\n"
    "\n"
    "Each file's .eh_frame_hdr is checked against its .eh_frame too (as\n"
    "cfisem validate FILE --hdr): a wrong one is one line on stderr.\n"
    "\n"
        "The compiled engine: an eh_elf given with --eh-elf must be of the full ABI\n"
        "and stamped with the file's object id: one that cannot be loaded, a v1\n"
        "eh_elf, or one built from another file, stops the run before it starts with\n"
        "one line on stderr and exit status 2. One built into --cache is named by the\n"
        "file's path, size and modification time (which a rewritten file may keep),\n"
        "so its stamp decides; the table layout gives the same answers as the tree\n"
        "layout, built several times faster. sframe speaks for the CFA, rbp and rip\n"
        "only; PCs no SFrame FDE covers are not comparable; it runs only when named\n"
        "in --engines (or all), since it cannot be opened for a file with no .sframe.\n"
        "gdb (gdb 13's DWARF unwinder, one gdb process per file, one\n"
        "synthetic core, a thread a request, per batch of requests that\n"
        "read the same memory) answers x86-64 frames at PCs an FDE\n"
        "covers that its DWARF unwinder takes (not an innermost frame at a\n"
        "ret, where its epilogue analyser answers); anything else is not\n"
        "comparable; it runs only when named.\n"
        "A wrong .eh_frame_hdr is reported as cfisem diff: FILE: .eh_frame_hdr is\n"
        "wrong: N problems, first ....\n"
        "\n"
        "  $ cfisem diff /lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2 /bin/ls\n"
        "  cfisem diff: 3 files, 4324 FDEs, 29667 rows; 316712 requests (4 states per PC), seed 1, 3.2 s\n"
        "  reference answers: ok 216374 no_fde 15808 memory 75211 reg_unknown 9319\n"
        "\n"
        "  engine       compared      agree   differ  known_dev   not_comp     errors\n"
        "  il             316712     316712        0          0          0          0\n"
        "  interp         316712     316712        0          0          0          0\n"
        "  compiled       316712     316712        0          0          0          0\n"
        "  libdwarf       316712     316712        0          0          0          0\n"
        "  libdw          316712     100355        0     216357          0          0\n"
        "  libunwind      316696     100350        0     216346         16          0\n"
        "\n"
        "  known deviations (requests explained):\n"
        "    libunwind-no-undefined-default           libunwind      216337  libunwind keeps the callee's value of a caller-saved register ...\n"
        "    libunwind-rsp-is-cfa                     libunwind          39  libunwind's caller rsp is always the CFA, whatever rule rsp has\n"
        "    libunwind-needs-caller-rip               libunwind           8  libunwind fails when the caller's rip would be a callee register ...\n"
        "    libdw-abi-rax-for-rbx                    libdw          216357  elfutils' x86-64 ABI defaults say same_value for DWARF register 0 ...\n"
        "\n"
        "  result: 0 new mismatches\n"
        "\n"
        "A new mismatch is printed with the items that differ, the FDE, the row's IL\n"
        "and a reproducer line, e.g. (from a run before the libunwind adapter knew\n"
        "that a caller frame whose row reads rip cannot be asked of it):\n"
        "\n"
        "  [1] libunwind: /lib/x86_64-linux-gnu/libc.so.6: pc 0x26360 (caller frame: row at 0x2635f), state 0 (full)\n"
        "      cfa    expected 0x7ffe0002b6e8, got 0x7ffe0002b6f0\n"
        "      ...\n"
        "      row [0x26010,0x26360)  cfa=expr(breg7 8; breg16 0; lit15; and; lit11; ge; lit3; shl; plus)  rip=[cfa-8]\n"
        "      reproduce: cfisem unwind /lib/x86_64-linux-gnu/libc.so.6 --pc 0x26360 --caller --regs rax=0x4a93...,rip=0x26360 --mem-seed 0xcfdb23c7edbe59ce --engine libunwind\n"
        "\n"
        "Questions, in detail. The stack of the full states is 0x7ffe00000000 + up to\n"
        "256 KiB. --all-pcs asks up to 1 MiB per FDE. An FDE that cannot be\n"
        "translated is asked at its first and last address. States by index modulo 4:\n"
        "two full states (registers 0-16 random), a partial one (rsp, rip and the\n"
        "CFA's register known, each other register known or not; one in eight lacks\n"
        "the CFA's register itself), and a fault one (as full, with one of the reads\n"
        "the reference makes turned into a fault, so that engines must agree on\n"
        "memory errors). rip is the PC. Memory: the synthetic memory of --mem-seed (a\n"
        "seed per state), the file's segments, the --fault B-E ranges of the run and\n"
        "the state's own fault. Everything is a function of --seed: the same command\n"
        "gives the same report, whatever --jobs.\n"
        "\n"
        "Comparison. For each engine and request: the status (the error class, and\n"
        "for reg_unknown the register; internal, a state no input can reach and so a\n"
        "bug of cfisem, agrees with nothing, itself included); when both unwound, the\n"
        "CFA, each register the engine speaks for (value, undefined or unknown, and\n"
        "the value), and the signal frame flag (cfi.h step 7; every engine but sframe\n"
        "speaks for it). This is the one definition of two answers agreeing\n"
        "(engine_answer_agrees in engines/compare.h), used by the fuzz harnesses and the\n"
        "agreement and compile suites too. Each differing item goes to the table of\n"
        "known deviations of the outside engines (engines/deviations.c, with their\n"
        "reasons; each entry's predicate is in the file of its engine,\n"
        "diff/<engine>_deviations.c); cfisem's own engines have none.\n"
        "\n"
        "More on the counting. not_comp: e.g. libunwind when the FDE's program names\n"
        "a register above 16, outside its register set, or for a caller frame whose\n"
        "row reads rip; any outside engine where the FDE at the lookup PC overlaps\n"
        "another, since DWARF defines no choice among overlapping FDEs. Registers an\n"
        "engine does not speak for (the compiled engine's above 16) are left out of\n"
        "the comparison and not counted. errors: an engine that cannot be opened for\n"
        "the file (not built, file unsupported) or that crashed or stopped answering\n"
        "on it counts every request of the file, with a line saying why.\n"
        "\n"
        "--json OUT writes {\"schema_version\": 1, \"seed\", \"states\", \"all_pcs\",\n"
        "\"seconds\", \"requests\", \"producer\", \"build\", \"keep\", \"pcs\", \"eh_elf\",\n"
        "\"faults\", \"files_total\", \"files\": [{\"path\", \"status\", \"error\", \"fdes\",\n"
        "\"rows\", \"requests\", \"index\", \"error_offset\", \"failed_fdes\",\n"
        "\"eh_frame_hdr\"}],\n"
        "\"reference\": {\"ok\": N, ...}, \"summary\": {\"interp\": {\"compared\",\n"
        "\"agree\", \"differ\", \"known_deviation\", \"not_comparable\", \"errors\"},\n"
        "...}, \"errors\": [{\"engine\", \"file\", \"message\", \"requests\"}],\n"
        "\"deviations\": {\"ID\": {\"engine\", \"summary\", \"count\", \"example\"}},\n"
        "\"mismatches_total\": N, \"mismatches\": [...]}; each\n"
        "mismatch has engine, file, pc, caller_frame, lookup_pc, state, state_kind,\n"
        "mem_seed, fault, regs (the callee's), fde, row, items (item, expected, got,\n"
        "deviation), items_total and items_new (all the differing items, of which\n"
        "those no deviation explains), the expected and got frames (status, message,\n"
        "reg, cfa, signal_frame, regs), and reproducer; mismatches_total counts them\n"
        "all.\n"
        "\n"
        "--jobs N runs N worker threads over chunks of 32 FDEs, each with its own\n"
        "engines; results are merged in FDE order. With more than one file, up to N\n"
        "files run at once, each in a process of its own that writes its result as\n"
        "JSON (to --results, or to a scratch folder) for the run to read back; the\n"
        "report is the same whatever N. Each file's child process sends its results\n"
        "back through a pipe: when an engine crashes on a file (an outside library on\n"
        "a malformed file, say), the file is run again, the reference alone and then\n"
        "each engine alone, so that the crashing engine has every request of the file\n"
        "counted as an error (\"crashed (SIGSEGV)\") and the others' results stand; the\n"
        "run goes on with the next file. An answer normally takes microseconds.\n"
        "--no-isolate is for a debugger.\n"
        "\n"
        "The outside libraries read a relocatable object's frame sections as the\n"
        "loader does, with their relocations applied (libdwarf is shown the loader's\n"
        "bytes, libdw a copy of the file holding them): cfisem diff x.o compares them\n"
        "as it compares a linked file. Where a section's FDEs overlap (a .o whose\n"
        "functions are in sections of their own all start at 0), the outside engines\n"
        "are not asked (not comparable). Progress on stderr gives the files done and\n"
        "requests/s.\n"
        "\n"
        "Many files, many machines. Files of a manifest whose contents are those of\n"
        "an earlier file are hard links and copies (18 of one Debian 12 system's\n"
        "1,686 files). A result in --results is named by the file's SHA-256 and a key\n"
        "of the settings and of the cfisem binary and its libraries (their build\n"
        "IDs, which --json names in \"build\"); a run stopped half-way goes on where\n"
        "it stopped, and only the files that changed run again (stderr says how\n"
        "many were read). --shard K/N deals the files of the whole\n"
        "list out by size, largest first, each to the shard with the fewest bytes so\n"
        "far, so every machine given the same list and N takes its own share, and the\n"
        "shards take about as long. Each shard's --json keeps every file's place in\n"
        "the whole list; cfisem report merge puts them together:\n"
        "\n"
        "  # on machine K of 4 (a CI matrix, GNU parallel over ssh, a Slurm array):\n"
        "  cfisem diff --manifest manifest.txt --shard K/4 --results results --json part-K.json\n"
        "  # then, anywhere, with the four part-K.json files:\n"
        "  cfisem report merge part-*.json --json system.json\n"
        "corpus/shard.sh runs shard K of N under make -j, GNU parallel, a Slurm\n"
        "array job or a Kubernetes indexed Job, and merges them (docs/corpora.md).\n"
        "Every machine must run the same cfisem build with the same libraries:\n"
        "the merge refuses a part whose \"build\" differs, naming the object.\n"
        "\n"
        "The result line counts the files not loaded: result: 0 new mismatches; 1 of\n"
        "1 file could not be loaded (bad input). A file whose frame sections hold no\n"
        "record is loaded, with no FDE and no request.\n"
        "\n"
    "Exit status: 0 no new mismatch (known deviations and errors do not\n"
    "count); 1 at least one new mismatch or a wrong .eh_frame_hdr; 2 a\n"
    "FILE cannot be loaded (one line on stderr for each, saying why, and\n"
    "their count on the result line; the other files still run; 1 wins\n"
    "over 2); 64 a usage error (then nothing is run and\n"
    "the message names the option).\n";

struct options {
    struct diff_config config;
    struct cli_files files;
    const char *manifest;
    const char *results_dir;
    uint64_t shard_k, shard_n;     /* 0: the whole list */
    const char *json_path;
    size_t show;
    bool progress;
    bool in_process;
    bool stapsdt_pcs;
    struct cli_inputs inputs;      /* --debug-dir */
    struct cfi_debug_search debug_search;
};

static int parse_engines(const char *list, struct diff_config *config)
{
    for (int e = 0; e < ENGINE_COUNT; e++)
        config->engines[e] = !strcmp(list, "all");
    if (!strcmp(list, "all"))
        return CLI_OK;
    for (const char *at = list; *at;) {
        size_t len = strcspn(at, ",");
        int id = engine_parse(at, len);
        if (id < 0)
            return cli_usage_error("diff", "unknown engine in", list);
        config->engines[id] = true;
        at += len + (at[len] == ',');
    }
    return CLI_OK;
}

static bool parse_fault(const char *text, struct diff_config *config)
{
    const char *dash = strchr(text, '-');
    char begin[32];
    size_t len = dash ? (size_t)(dash - text) : 0;
    if (!dash || len == 0 || len >= sizeof begin ||
        config->nfaults == DIFF_FAULTS_MAX)
        return false;
    memcpy(begin, text, len);
    begin[len] = 0;
    uint64_t b, e;
    if (!cli_parse_u64(begin, &b) || !cli_parse_u64(dash + 1, &e) || e <= b)
        return false;
    config->faults[config->nfaults][0] = b;
    config->faults[config->nfaults++][1] = e;
    return true;
}

static bool parse_count(const char *text, uint64_t low, uint64_t high,
                        uint64_t *value)
{
    return cli_parse_u64(text, value) && *value >= low && *value <= high;
}

/* "K/N": shard K of N. */
static bool parse_shard(const char *text, struct options *o)
{
    const char *slash = strchr(text, '/');
    char k[32];
    size_t len = slash ? (size_t)(slash - text) : 0;
    if (!slash || len == 0 || len >= sizeof k)
        return false;
    memcpy(k, text, len);
    k[len] = 0;
    return cli_parse_u64(k, &o->shard_k) && cli_parse_u64(slash + 1, &o->shard_n) &&
           o->shard_k >= 1 && o->shard_k <= o->shard_n && o->shard_n <= 10000;
}

/* Options that take a value. */
static int parse_valued(const char *arg, const char *value, struct options *o)
{
    uint64_t n;
    struct diff_config *c = &o->config;
    if (!strcmp(arg, "--engines"))
        return parse_engines(value, c);
    if (!strcmp(arg, "--states")) {
        if (!parse_count(value, 1, 1024, &n))
            return cli_usage_error("diff", "--states takes 1 to 1024, not", value);
        c->nstates = (unsigned)n;
    } else if (!strcmp(arg, "--seed")) {
        if (!cli_parse_u64(value, &c->seed))
            return cli_usage_error("diff", "bad seed", value);
    } else if (!strcmp(arg, "--jobs")) {
        if (!parse_count(value, 1, 64, &n))
            return cli_usage_error("diff", "--jobs takes 1 to 64, not", value);
        c->jobs = (unsigned)n;
    } else if (!strcmp(arg, "--show")) {
        if (!parse_count(value, 0, SIZE_MAX, &n))
            return cli_usage_error("diff", "bad count", value);
        o->show = (size_t)n;
    } else if (!strcmp(arg, "--keep")) {
        if (!parse_count(value, 0, DIFF_KEEP_MAX, &n))
            return cli_usage_error("diff", "--keep takes 0 to 100000, not", value);
        c->keep = (size_t)n;
    } else if (!strcmp(arg, "--timeout")) {
        if (!parse_count(value, 1, 86400, &n))
            return cli_usage_error("diff", "--timeout takes 1 to 86400 "
                                           "seconds, not", value);
        c->answer_timeout = (double)n;
    } else if (!strcmp(arg, "--fault")) {
        if (!parse_fault(value, c))
            return cli_usage_error("diff", "expected --fault BEGIN-END, got", value);
    } else if (!strcmp(arg, "--json")) {
        o->json_path = value;
    } else if (!strcmp(arg, "--manifest")) {
        o->manifest = value;
    } else if (!strcmp(arg, "--results")) {
        o->results_dir = value;
    } else if (!strcmp(arg, "--shard")) {
        if (!parse_shard(value, o))
            return cli_usage_error("diff", "--shard takes K/N with 1 <= K <= N"
                                           " <= 10000, not", value);
    } else if (!strcmp(arg, "--cache")) {
        c->engine_config.cache_dir = value;
    } else {
        c->engine_config.eh_elf_path = value;  /* --eh-elf */
    }
    return CLI_OK;
}

static bool takes_value(const char *arg)
{
    static const char *const valued[] = {"--engines", "--states", "--seed",
                                         "--jobs", "--show", "--keep",
                                         "--fault", "--json", "--eh-elf",
                                         "--cache", "--timeout", "--manifest",
                                         "--results", "--shard"};
    for (size_t i = 0; i < sizeof valued / sizeof valued[0]; i++)
        if (!strcmp(arg, valued[i]))
            return true;
    return false;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int status = CLI_OK, taken;
        if (arg[0] != '-' || !strcmp(arg, "-")) {
            if (!cli_files_add(&o->files, arg))
                return CLI_BAD_INPUT;
        }
        else if ((taken = cli_inputs_option("diff", argc, argv, &i,
                                            &o->inputs)))
            status = taken == 1 ? CLI_OK : taken;
        else if (!strcmp(arg, "--all-pcs"))
            o->config.all_pcs = true;
        else if (!strcmp(arg, "--progress"))
            o->progress = true;
        else if (!strcmp(arg, "--no-isolate"))
            o->in_process = true;
        else if (!strcmp(arg, "--pcs")) {
            const char *value = i + 1 < argc ? argv[++i] : "nothing";
            o->stapsdt_pcs = !strcmp(value, "stapsdt");
            if (!o->stapsdt_pcs)
                status = cli_usage_error("diff", "--pcs takes stapsdt, not",
                                         value);
        }
        else if (!takes_value(arg))
            status = cli_usage_error("diff", "unknown option", arg);
        else if (i + 1 >= argc)
            status = cli_usage_error("diff", "missing value for", arg);
        else
            status = parse_valued(arg, argv[++i], o);
        if (status != CLI_OK)
            return status;
    }
    if (o->files.count == 0 && !o->manifest)
        return cli_usage_error("diff", "missing FILE", NULL);
    return CLI_OK;
}

/* The files: those given, the manifest's, then the shard's share. */
static int gather_files(struct options *o)
{
    int status = o->manifest ? cli_files_add_manifest(&o->files, o->manifest,
                                                      "diff")
                             : CLI_OK;
    if (status != CLI_OK)
        return status;
    if (o->config.engine_config.eh_elf_path && o->files.count != 1)
        return cli_usage_error("diff", "--eh-elf needs exactly one FILE", NULL);
    if (o->shard_n && !cli_files_shard(&o->files, o->shard_k, o->shard_n)) {
        fprintf(stderr, "cfisem diff: out of memory\n");
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

/* ------------------------------------------------------------------ */
/* Progress                                                             */
/* ------------------------------------------------------------------ */

struct progress_env {
    bool enabled;
    bool tty;
    bool printed;
    double last;
};

static void show_progress(void *env, const struct diff_progress *p)
{
    struct progress_env *progress = env;
    if (progress->enabled && p->phase) {
        fprintf(stderr, "%scfisem diff: %s: %s%s", progress->tty ? "\r" : "",
                p->path, p->phase, progress->tty ? "..." : "\n");
        progress->printed = true;
        fflush(stderr);
        return;
    }
    if (!progress->enabled || p->seconds < 2.0 ||
        (!progress->tty && p->seconds - progress->last < 5.0))
        return;
    progress->last = p->seconds;
    progress->printed = true;
    fprintf(stderr, "%scfisem diff: %zu/%zu files, %" PRIu64
            " requests, %.0f requests/s%s", progress->tty ? "\r" : "",
            p->files_done, p->files, p->requests_done,
            p->seconds > 0 ? (double)p->requests_done / p->seconds : 0.0,
            progress->tty ? "   " : "\n");
    fflush(stderr);
}

static unsigned default_jobs(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > 8 ? 8 : (unsigned)cpus;
}

/* ------------------------------------------------------------------ */
/* Running                                                              */
/* ------------------------------------------------------------------ */

/* Each loaded file whose .eh_frame_hdr is wrong (the table libgcc and
 * libunwind search), one line on stderr. Returns how many. */
static size_t report_wrong_tables(const struct diff_run *run)
{
    size_t wrong = 0;
    for (size_t i = 0; i < run->nfiles; i++) {
        const struct diff_file_result *f = &run->files[i];
        if (f->status == CFI_OK && f->hdr_problems) {
            engine_hdr_summary_line(stderr, f->path, f->hdr_problems,
                                    f->hdr_first);
            wrong++;
        }
    }
    return wrong;
}

static int write_json(const char *path, const struct diff_run *run)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "cfisem diff: %s: cannot write the JSON file\n", path);
        return CLI_BAD_INPUT;
    }
    diff_report_json(out, run);
    if (fclose(out) != 0) {
        fprintf(stderr, "cfisem diff: %s: cannot write the JSON file\n", path);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

int cli_diff_report(const struct diff_run *run, const char *json_path,
                    size_t show)
{
    for (size_t i = 0; i < run->nfiles; i++) {
        const struct diff_file_result *file = &run->files[i];
        if (file->status != CFI_OK)
            cli_report_file_error(file->path, &file->diag);
        else if (file->nfailed_fdes > 0)
            fprintf(stderr, "cfisem: %s: warning: %zu FDEs do not translate "
                    "(their answers are errors; see cfisem il %s)\n",
                    file->path, file->nfailed_fdes, file->path);
    }
    size_t wrong_tables = report_wrong_tables(run);
    diff_report_text(stdout, run, show);
    fflush(stdout);
    int result = json_path ? write_json(json_path, run) : CLI_OK;
    if (diff_run_unexplained(run) || wrong_tables)
        result = CLI_MISMATCH;
    else if (diff_run_bad_input(run))
        result = CLI_BAD_INPUT;
    return result;
}

/* What the batch did besides running files, when it did. */
static void report_batch(const struct options *o,
                         const struct diff_batch_counts *counts)
{
    if (counts->same_contents || counts->stored)
        fprintf(stderr, "cfisem diff: %zu files run, %zu with the contents "
                "of an earlier file, %zu results read from %s\n", counts->ran,
                counts->same_contents, counts->stored,
                o->results_dir ? o->results_dir : "(no --results)");
    if (counts->store_failures)
        fprintf(stderr, "cfisem diff: %s: %zu results could not be written\n",
                o->results_dir, counts->store_failures);
}

static int run_diff(struct options *o)
{
    struct progress_env progress = {o->progress || isatty(2), isatty(2),
                                    false, 0};
    o->config.progress = show_progress;
    o->config.progress_env = &progress;
    o->debug_search.dirs = o->inputs.debug_dirs;
    o->debug_search.ndirs = o->inputs.ndebug_dirs;
    o->config.debug_search = &o->debug_search;
    struct diff_batch batch = {o->results_dir, !o->in_process,
                               o->files.places, o->files.total};
    struct diff_batch_counts counts;
    struct diff_run *run;
    enum cfi_status status =
        diff_run_batch(&o->config, &batch, (const char *const *)o->files.paths,
                       o->files.count, &run, &counts);
    /* (the children printed it: `printed` is theirs) */
    if (progress.enabled && progress.tty && status == CFI_OK &&
        (progress.printed || run->seconds >= 2.0))
        fputc('\n', stderr);
    if (status == CFI_E_IO) {
        fprintf(stderr, "cfisem diff: %s: cannot create the results folder\n",
                o->results_dir);
        return CLI_BAD_INPUT;
    }
    if (status != CFI_OK) {
        fprintf(stderr, "cfisem diff: out of memory\n");
        return CLI_BAD_INPUT;
    }
    report_batch(o, &counts);
    int result = cli_diff_report(run, o->json_path, o->show);
    diff_run_free(run);
    return result;
}

/* An eh_elf the user named that the compiled engine cannot use is a
 * failure of the run, said before it starts (not an error counted on
 * every request). */
static int check_named_eh_elf(const struct options *o)
{
    const char *path = o->config.engine_config.eh_elf_path;
    if (!path || !o->config.engines[ENGINE_compiled])
        return CLI_OK;
    if (o->files.count == 1 &&
        cli_check_eh_elf_stamp(path, o->files.paths[0]) != CLI_OK)
        return CLI_BAD_INPUT;
    struct cg_eh_elf *eh;
    struct cfi_diag diag;
    if (cg_load(path, &eh, &diag) != CFI_OK) {
        cli_report_file_error(path, &diag);
        return CLI_BAD_INPUT;
    }
    bool full = cg_eh_elf_abi(eh) == CG_ABI_FULL;
    cg_unload(eh);
    if (full)
        return CLI_OK;
    fprintf(stderr, "cfisem: %s: a v1 eh_elf: the compiled engine needs the "
            "full ABI (check a v1 eh_elf with cfisem validate --abi v1)\n",
            path);
    return CLI_BAD_INPUT;
}

int cli_diff(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    struct options o = {.show = 10};
    diff_config_default(&o.config);
    o.config.jobs = default_jobs();
    o.config.producer = "cfisem " CFISEM_VERSION;
    char build[4096];
    diff_build_describe(build, sizeof build);
    o.config.build = build;
    int result = parse_options(argc, argv, &o);
    if (result == CLI_OK)
        result = gather_files(&o);
    struct trace_probe_pcs probes = {NULL, 0};
    size_t failed = 0;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (result == CLI_OK && o.stapsdt_pcs &&
        trace_probe_pcs_load(&probes, (const char *const *)o.files.paths,
                             o.files.count, &failed, &diag)) {
        cli_report_file_error(o.files.paths[failed], &diag);
        result = CLI_BAD_INPUT;
    }
    if (o.stapsdt_pcs) {
        o.config.pcs_of_fde = trace_probe_pcs_of_fde;
        o.config.pcs_env = &probes;
        o.config.pcs_name = "stapsdt";
    }
    if (result == CLI_OK)
        result = check_named_eh_elf(&o);
    if (result == CLI_OK)
        result = run_diff(&o);
    trace_probe_pcs_free(&probes);
    cli_files_free(&o.files);
    return result;
}
