# SPDX-License-Identifier: MIT
# cfisem — the one build entry.
#
#   make            build build/cfisem
#   make demo       install what is missing, build, run the main job
#   make test       install what is missing, then make check
#   make check      run the Check suites, then again under ASan+UBSan
#   make check-package
#                   the plain suites the Debian package's build runs
#   make deps       install the Debian packages the project needs
#   make bench      build and run the benchmarks (not tests)
#   make bench-perf unwinders on real perf samples (bench/perf_table.sh;
#                   perf record must be allowed)
#   make corpus     the real-ELF manifest and a Csmith corpus, under build/corpus
#   make corpus-arm64
#                   AArch64 ELF files from Debian and a Csmith corpus
#                   built for AArch64, under build/corpus-arm64
#   make corpus-debian
#                   cfisem's own engines over DEBIAN_PACKAGES (2000) Debian
#                   packages, one GNU parallel job each (resumable), under
#                   build/corpus-debian
#   make system-diff
#                   cfisem's own engines over the real-ELF manifest
#   make system-diff-arm64
#                   the same over make corpus-arm64's manifest (the
#                   compiled engine under qemu-aarch64; ARM64_SHARD=K/N
#                   for one shard, resumable)
#   make fuzz-build the AFL++ harnesses and their replay programs, build/fuzz
#   make fuzz-smoke each harness under AFL++ for 60 s; fails on a crash of ours
#   make fuzz       long AFL++ campaigns (FUZZ_HARNESS, FUZZ_JOBS, FUZZ_TIME)
#   make fuzz-libfuzzer
#                   fuzz/oss-fuzz/build.sh with clang and libFuzzer into
#                   build/fuzz-libfuzzer, then each target FUZZ_SECONDS (20)
#   make fuzz-mutator
#                   the AFL++ custom mutator, build/fuzz/cfisem-mutator.so
#   make fuzz-measure
#                   each libFuzzer target 60 s with and without the
#                   structured mutator; the share of mutants that load
#   make fuzz-coverage
#                   line and branch coverage of libdw's, libunwind's and
#                   libdwarf's CFI code (their Debian sources built with
#                   gcov) after COVERAGE_SECONDS (300) of fuzz_oracles per
#                   library, plain and structured, with libunwind's and
#                   libdw's edges fed back to libFuzzer (built again with
#                   -fsanitize=fuzzer-no-link): build/fuzz-coverage
#   make install    the binary, manual pages, eh_elf.h, the bash
#                   completion and libcfisem-unwind (.a, .so, header,
#                   pkg-config file, the system eh_elf folder
#                   lib/MULTIARCH/cfisem/eh_elf) and, when the cross
#                   compiler built it, the AArch64 eh_elf runner
#                   (lib/cfisem/aarch64) under $(DESTDIR)$(PREFIX)
#                   (/usr/local; libdir, mandir, ... as GNU's);
#                   make uninstall removes them
#   make paper-data run the tools, write the paper's data: paper/generated/
#   make paper      paper-data, then build/paper/cfisem.pdf (LaTeX from Debian)
#
# Every module folder's *.c goes into build/lib<module>.a; cli/*.c into the
# cfisem binary; each tests/check_*.c is one Check runner. A sanitized copy
# of everything is built under build/asan by calling this Makefile again
# with BUILD=build/asan SANITIZE=1.

CC       ?= cc
BUILD    ?= build
SANITIZE ?=

# The modules, a user before what it uses (the link order). The layers,
# from the top: cli, bench; perf, trace, fuzz; diff, validate, remote; engines;
# compile, runtime, synth, explain; semantics, interp, sframe, gen; cfi.
# A module uses only the layers below its own (tests/layering.py).
LIB_MODULES := $(foreach m,perf trace fuzz diff validate remote engines compile runtime interp synth explain semantics gen sframe cfi,$(if $(wildcard $(m)/*.c),$(m)))

# -Werror in the project's own builds (make, CI); a distribution's build
# (debian/rules) sets WERROR=0: another compiler's new warnings must not
# break it. -Wall -Wextra stay on in both.
WERROR   ?= 1
WARN     := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) -Wshadow \
            -Wstrict-prototypes -Wmissing-prototypes
CSTD     := -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L
ifeq ($(SANITIZE),1)
OPT      := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
else
OPT      := -O2 -g
endif
# The user's CPPFLAGS, CFLAGS and LDFLAGS (from the environment or the
# command line, e.g. dpkg-buildflags' hardening and fortify flags) come
# after the project's own, which stay in ALL_CFLAGS and ALL_LDFLAGS.
CPPFLAGS ?=
CFLAGS   ?=
LDFLAGS  ?=
# Flags a target adds for itself (the test suites' Check headers).
TARGET_CFLAGS :=
# (a comma inside $(if) would split its arguments: the flags go by name)
SAN_LDFLAGS := -fsanitize=address,undefined
ALL_LDFLAGS  = $(if $(filter 1,$(SANITIZE)),$(SAN_LDFLAGS)) $(LDFLAGS)

# elfutils' libdw and libdwarf export 34 dwarf_* names in common, and one
# would bind the other's calls. So libdw is not linked: engines/ loads it at
# run time (dlopen, RTLD_LOCAL, with RTLD_DEEPBIND but under ASan, which
# refuses it); only its headers are used here. And libdwarf is linked
# statically: its names then stay out of the dynamic symbol table, where a
# dlopen'd libdw would otherwise find them.
PKGS     := libelf libunwind-generic capstone
PKG_CFLAGS := $(shell pkg-config --cflags libdw $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)
# libdwarf ships no pkg-config file.
DWARF_CFLAGS := -I/usr/include/libdwarf
DWARF_LIBS   := -l:libdwarf.a -lelf -lz
LIBS     := $(PKG_LIBS) $(DWARF_LIBS) -lzstd -ldl -lpthread -lm
ALL_CFLAGS = $(CSTD) $(WARN) $(OPT) -I. -MMD -MP $(PKG_CFLAGS) \
             $(DWARF_CFLAGS) $(TARGET_CFLAGS) $(CPPFLAGS) $(CFLAGS)

lib_srcs  = $(wildcard $(1)/*.c $(1)/*.S)
lib_objs  = $(patsubst %,$(BUILD)/obj/%.o,$(basename $(call lib_srcs,$(1))))
LIBFILES := $(foreach m,$(LIB_MODULES),$(BUILD)/lib$(m).a)
CLI_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard cli/*.c))
TEST_SRCS := $(wildcard tests/check_*.c)
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
TEST_SUPPORT := $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out tests/check_%.c,$(wildcard tests/*.c)))
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

# Hand-written CFI cases: each .S is linked into a small shared object at a
# fixed text address, so that the golden IL files can name addresses.
CASE_SRCS := $(wildcard corpus/cases/*.S)
CASE_SOS  := $(patsubst corpus/cases/%.S,$(BUILD)/corpus/cases/%.so,$(CASE_SRCS))
# The same cases as relocatable objects: their frame sections still need
# relocating, which the loader does as readelf does.
CASE_OBJS := $(patsubst corpus/cases/%.S,$(BUILD)/corpus/objects/%.o,$(CASE_SRCS))
# The AArch64 cases, built the same way by the cross compiler; those in
# errors/ are FDEs that must fail (malformed or unsupported), with no IL.
AARCH64_CC ?= aarch64-linux-gnu-gcc
AARCH64_RUNNER := $(BUILD)/aarch64/eh_elf_runner
# make builds the runner (compile/runner/) where the cross compiler is
# installed; elsewhere cfisem says, for an AArch64 eh_elf, that it is
# missing. make check needs it.
AARCH64_CC_FOUND := $(shell command -v $(AARCH64_CC) 2>/dev/null)
A64_CASE_SRCS := $(wildcard corpus/cases-aarch64/*.S) \
                 $(wildcard corpus/cases-aarch64/errors/*.S)
A64_CASE_SOS  := $(patsubst corpus/cases-aarch64/%.S,$(BUILD)/corpus/cases-aarch64/%.so,$(A64_CASE_SRCS))
A64_CASE_OBJS := $(patsubst corpus/cases-aarch64/%.S,$(BUILD)/corpus/objects-aarch64/%.o,$(A64_CASE_SRCS))

.PHONY: runtime-libs workloads layouts-eh-elfs
.PHONY: all check check-plain check-asan deps demo test bench bench-perf cases clean help eh-elfs \
        man completion install uninstall \
        corpus corpus-arm64 corpus-debian system-diff system-diff-arm64 harnesses fuzz-build fuzz-smoke fuzz fuzz-triage paper paper-data \
        libfuzzer-targets fuzz-libfuzzer fuzz-libfuzzer-build fuzz-mutator \
        fuzz-measure fuzz-coverage
.DEFAULT_GOAL := all
# Keep intermediate objects (test and bench objects), so that a second run
# does not rebuild them.
.SECONDARY:

all: $(BUILD)/cfisem runtime-libs $(if $(AARCH64_CC_FOUND),$(AARCH64_RUNNER) $(A64_RT_LIBS))

help:
	@sed -n '3,/^#   make paper /p' Makefile

deps:
	@scripts/install-deps

test: deps
	$(MAKE) $(PARALLEL) check

# The main job: every engine against the reference on the system's libc,
# ld.so and /bin/ls, then libc's eh_elf compiled and checked at every
# address. Every step runs; the demo fails at the end if one did.
LIBC := $(firstword $(wildcard /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libc.so.6))
LDSO := $(firstword $(wildcard /lib64/ld-linux-x86-64.so.2 /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2))
DEMO := $(BUILD)/demo
demo: deps
	$(MAKE) all
	@mkdir -p $(DEMO)
	@echo "== cfisem il $(LIBC) (first rows)"
	@$(BUILD)/cfisem il $(LIBC) | head -n 6
	@echo "== cfisem diff $(LIBC) $(LDSO) /bin/ls   (every engine; JSON in $(DEMO)/diff.json)"
	@status=0; \
	$(BUILD)/cfisem diff $(LIBC) $(LDSO) /bin/ls --cache $(DEMO)/cache \
	    --json $(DEMO)/diff.json --show 3 --progress || status=1; \
	echo "== cfisem compile $(LIBC) -o $(DEMO)/libc.eh_elf.so"; \
	$(BUILD)/cfisem compile $(LIBC) -o $(DEMO)/libc.eh_elf.so || status=1; \
	echo "== cfisem validate $(LIBC) $(DEMO)/libc.eh_elf.so   (every address)"; \
	$(BUILD)/cfisem validate $(LIBC) $(DEMO)/libc.eh_elf.so \
	    --json $(DEMO)/validate.json --progress || status=1; \
	if [ $$status -ne 0 ]; then echo "demo: a step above failed"; fi; \
	exit $$status

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/obj/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(ALL_CFLAGS)) -c -o $@ $<

# ---- libcfisem-unwind (runtime/: the run-time unwinder) -----------------
# runtime/, interp/ (its fallback) and the one file of cfi/ the
# interpreter uses, compiled again as position-independent code into a
# static and a shared library. The shared one exports cfisem_* only
# (runtime/exports.map); its thread-local data uses the initial-exec
# model, so that reaching it from a signal handler never allocates.
CFISEM_VERSION := $(shell sed -n 's/^\#define CFISEM_VERSION "\(.*\)"/\1/p' cli/cli.h)
RT_SRCS := $(wildcard runtime/*.c runtime/*.S) $(filter-out interp/lookup.c,$(wildcard interp/*.c)) cfi/cfi.c \
           cfi/arch.c cfi/sha256.c
RT_PIC_OBJS := $(patsubst %,$(BUILD)/pic/%.o,$(basename $(RT_SRCS)))
RT_PIC_FLAGS := -fPIC -ftls-model=initial-exec -fvisibility=default
# The soname's number changes with the library's ABI (a public struct's
# size or fields): 1 added cfisem_options.system_dir and the refusal
# counters of cfisem_stats. (debian/: the package libcfisem-unwind1 and
# its symbols file, scripts/symbols.sh.)
RT_SONAME := libcfisem-unwind.so.1
RT_LIBS := $(BUILD)/libcfisem-unwind.a $(BUILD)/libcfisem-unwind.so \
           $(BUILD)/$(RT_SONAME) $(BUILD)/cfisem-unwind.pc \
           $(BUILD)/cfisem-unwind-uninstalled.pc

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(RT_PIC_FLAGS) -c -o $@ $<

$(BUILD)/pic/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(ALL_CFLAGS)) $(RT_PIC_FLAGS) -c -o $@ $<

$(BUILD)/libcfisem-unwind.a: $(RT_PIC_OBJS)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libcfisem-unwind.so: $(RT_PIC_OBJS) runtime/exports.map
	$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,$(RT_SONAME) \
	  -Wl,--version-script=runtime/exports.map -Wl,--no-undefined \
	  -o $@ $(RT_PIC_OBJS) -ldl -lpthread

# The name the soname gives, in the tree too: a program linked against
# build/libcfisem-unwind.so runs with LD_LIBRARY_PATH=build.
$(BUILD)/$(RT_SONAME): $(BUILD)/libcfisem-unwind.so
	ln -sf libcfisem-unwind.so $@

# $(1) the prefix, $(2) the libdir, $(3) the folder of the headers; the
# build writes one for the prefix (build/cfisem-unwind.pc), make install
# one for the prefix installed to. A folder below the prefix is named
# through ${prefix}.
rt_pc_dir = $(patsubst $(1)/%,$${prefix}/%,$(2))
define rt_pc_text
printf '%s\n' 'prefix=$(1)' 'libdir=$(call rt_pc_dir,$(1),$(2))' \
  'includedir=$(call rt_pc_dir,$(1),$(3))' \
  'ehelfdir=$(call rt_system_dir,$(1))' '' \
  'Name: cfisem-unwind' \
  'Description: stack unwinding through eh_elfs (compiled DWARF CFI)' \
  'Version: $(CFISEM_VERSION)' \
  'Cflags: -I$${includedir}' \
  'Libs: -L$${libdir} -lcfisem-unwind' 'Libs.private: -ldl -lpthread'
endef

$(BUILD)/cfisem-unwind.pc: Makefile $(BUILD)/rt-system-dir.txt
	@mkdir -p $(dir $@)
	$(call rt_pc_text,$(prefix),$(libdir),$(includedir)/cfisem) > $@

# pkg-config's convention for a library not installed: with build/ on
# PKG_CONFIG_PATH, `pkg-config cfisem-unwind` takes this file first and
# names the tree (the headers of runtime/ and compile/, the libraries of
# build/). Its ehelfdir is the installed one, as the library's.
$(BUILD)/cfisem-unwind-uninstalled.pc: Makefile $(BUILD)/rt-system-dir.txt
	@mkdir -p $(dir $@)
	$(call rt_pc_text,$(abspath $(BUILD)),$(abspath $(BUILD)),$(CURDIR)/runtime) \
	  | sed 's|^ehelfdir=.*|ehelfdir=$(RT_SYSTEM_DIR)|; s|^Cflags: .*|& -I$(CURDIR)/compile|' > $@

runtime-libs: $(RT_LIBS)

# The same library cross-built for AArch64 (make runtime-aarch64), under
# build/aarch64/: runtime/ has a variant of each part that is the
# machine's (context.S, the registers, sigframe.c). make builds it where
# the cross compiler is installed; its test (tests/aarch64/, run under
# qemu-aarch64 by make check: run-runtime_aarch64) links the shared one.
A64_DIR := $(BUILD)/aarch64
A64_RT_OBJS := $(patsubst %,$(A64_DIR)/pic/%.o,$(basename $(RT_SRCS)))
A64_RT_LIBS := $(A64_DIR)/libcfisem-unwind.a $(A64_DIR)/libcfisem-unwind.so
A64_CFLAGS := $(CSTD) $(WARN) -O2 -g -I. -MMD -MP
.PHONY: runtime-aarch64 run-runtime_aarch64
runtime-aarch64: $(A64_RT_LIBS)

$(A64_DIR)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(A64_CFLAGS) $(RT_PIC_FLAGS) -c -o $@ $<

$(A64_DIR)/pic/%.o: %.S
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(filter-out -MMD -MP,$(A64_CFLAGS)) $(RT_PIC_FLAGS) -c -o $@ $<

$(A64_DIR)/libcfisem-unwind.a: $(A64_RT_OBJS)
	rm -f $@ && $(AARCH64_CC:gcc=ar) rcs $@ $^

$(A64_DIR)/libcfisem-unwind.so: $(A64_RT_OBJS) runtime/exports.map
	$(AARCH64_CC) -shared -Wl,-soname,$(RT_SONAME) \
	  -Wl,--version-script=runtime/exports.map -Wl,--no-undefined \
	  -o $@ $(A64_RT_OBJS) -ldl -lpthread
	ln -sf $(notdir $@) $(A64_DIR)/$(RT_SONAME)



define lib_rule
$(BUILD)/lib$(1).a: $(call lib_objs,$(1))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach m,$(LIB_MODULES),$(eval $(call lib_rule,$(m))))

$(BUILD)/cfisem: $(CLI_OBJS) $(LIBFILES)
	$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJS) $(LIBFILES) $(LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_SUPPORT) $(LIBFILES)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(TEST_SUPPORT) $(LIBFILES) $(CHECK_LIBS) $(LIBS)

$(BUILD)/obj/tests/%.o: TARGET_CFLAGS += $(CHECK_CFLAGS)

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(LIBFILES)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBFILES) $(LIBS)

$(BUILD)/corpus/cases/%.so: corpus/cases/%.S
	@mkdir -p $(dir $@)
	$(CC) -shared -nostdlib -Wl,--section-start=.text=0x1000 -Wl,--build-id=none -o $@ $<

$(BUILD)/corpus/objects/%.o: corpus/cases/%.S
	@mkdir -p $(dir $@)
	$(CC) -c -o $@ $<

$(BUILD)/corpus/cases-aarch64/%.so: corpus/cases-aarch64/%.S
	@mkdir -p $(dir $@)
	$(AARCH64_CC) -shared -nostdlib -Wl,--section-start=.text=0x1000 -Wl,--build-id=none -o $@ $<

$(BUILD)/corpus/objects-aarch64/%.o: corpus/cases-aarch64/%.S
	@mkdir -p $(dir $@)
	$(AARCH64_CC) -c -o $@ $<

cases: $(CASE_SOS) $(CASE_OBJS) $(A64_CASE_SOS) $(A64_CASE_OBJS)

# The eh_elf runner (compile/runner/): an AArch64 program, run under
# qemu-aarch64, that calls the eh_elfs of AArch64 files for cfisem, which
# finds it from where it runs itself: aarch64/eh_elf_runner beside it (or
# one folder up, for the suites), or, installed, ../lib/cfisem/aarch64/
# (compile/remote.c). No sanitizer: it is not host code.
# It is built with the user's CPPFLAGS and LDFLAGS (fortify, relro and
# bindnow mean the same there), not CFLAGS (the host's code generation).
AARCH64_FLAGS ?= $(CPPFLAGS) $(LDFLAGS)
$(AARCH64_RUNNER): compile/runner/eh_elf_runner.c compile/runner/protocol.h \
                   compile/eh_elf.h
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(CSTD) $(WARN) -O2 $(AARCH64_FLAGS) -o $@ $< -ldl

# The inputs of the explain suite (tests/check_explain.c): more cases, kept
# apart because some are malformed on purpose (the linker says so).
EXPLAIN_SRCS := $(wildcard corpus/explain/*.S)
EXPLAIN_SOS  := $(patsubst corpus/explain/%.S,$(BUILD)/corpus/explain/%.so,$(EXPLAIN_SRCS))

$(BUILD)/corpus/explain/%.so: corpus/explain/%.S
	@mkdir -p $(dir $@)
	$(CC) -shared -nostdlib -Wl,--section-start=.text=0x1000 -Wl,--build-id=none -o $@ $< 2>/dev/null

# The suites find the tool, the sources and the built cases through the
# environment. CK_FORK stays on: one crashing test must not end the run.
TEST_ENV := CFISEM=$(abspath $(BUILD)/cfisem) CFISEM_SRC=$(CURDIR) \
            CFISEM_BUILD=$(abspath $(BUILD)) CFISEM_SANITIZE=$(SANITIZE) \
            CK_FORK=yes

# eh_elfs the compile suite (tests/check_compile.c) compares with the IL
# evaluator: the system libraries' and the cases', both ABIs, in
# $(EH_ELF_DIR)/NAME.ABI.eh_elf.so. They are built by the plain cfisem
# when the generator changes; the sanitized pass reuses the plain build's
# (they are no sanitized code anyway).
EH_ELF_DIR  ?= $(BUILD)/eh_elf
EH_ELF_TOOL ?= $(BUILD)/cfisem
EH_ELF_DEPS ?= $(foreach m,compile semantics cfi,$(BUILD)/lib$(m).a)
EH_ELF_CASES ?= $(CASE_SOS)
EH_ELF_LIBS := $(foreach l,libc.so.6 ld-linux-x86-64.so.2 libstdc++.so.6,\
                 $(firstword $(wildcard /lib/x86_64-linux-gnu/$(l) /usr/lib/x86_64-linux-gnu/$(l))))
EH_ELFS     :=
# $(1) the ELF file, $(2) the eh_elf's name without ABI and suffix.
# NAME.full.eh_elf.so and NAME.v1.eh_elf.so: the tree layout;
# NAME.table.eh_elf.so: the full ABI with the table layout (the default).
define eh_elf_rule
EH_ELFS += $(foreach a,full v1 table,$(EH_ELF_DIR)/$(2).$(a).eh_elf.so)
$(EH_ELF_DIR)/$(2).table.eh_elf.so: $(1) $(EH_ELF_DEPS) | $(EH_ELF_TOOL)
	@mkdir -p $$(dir $$@)
	$(EH_ELF_TOOL) compile $(1) -o $$@ --layout table > /dev/null
$(EH_ELF_DIR)/$(2).%.eh_elf.so: $(1) $(EH_ELF_DEPS) | $(EH_ELF_TOOL)
	@mkdir -p $$(dir $$@)
	$(EH_ELF_TOOL) compile $(1) -o $$@ --abi $$* --layout tree > /dev/null
endef
$(foreach l,$(EH_ELF_LIBS),$(eval $(call eh_elf_rule,$(l),$(notdir $(l)))))
$(foreach c,$(EH_ELF_CASES),$(eval $(call eh_elf_rule,$(c),cases/$(basename $(notdir $(c))))))
# The AArch64 cases' eh_elfs (the full ABI, tree and table layouts) and
# the table layout of the cross C library's, built with the cross
# compiler; the suite runs them under qemu-aarch64 (compile/runner/).
A64_EH_ELF_LIBC := $(wildcard /usr/aarch64-linux-gnu/lib/libc.so.6 \
                             /usr/aarch64-linux-gnu/lib/libstdc++.so.6)
A64_EH_ELF_CASES ?= $(filter-out $(BUILD)/corpus/cases-aarch64/errors/%,$(A64_CASE_SOS))
define a64_eh_elf_rule
EH_ELFS += $(EH_ELF_DIR)/$(2).table.eh_elf.so $(if $(3),$(EH_ELF_DIR)/$(2).full.eh_elf.so)
$(EH_ELF_DIR)/$(2).table.eh_elf.so: $(1) $(EH_ELF_DEPS) | $(EH_ELF_TOOL)
	@mkdir -p $$(dir $$@)
	CFISEM_AARCH64_CC=$(AARCH64_CC) $(EH_ELF_TOOL) compile $(1) -o $$@ --layout table > /dev/null
$(EH_ELF_DIR)/$(2).full.eh_elf.so: $(1) $(EH_ELF_DEPS) | $(EH_ELF_TOOL)
	@mkdir -p $$(dir $$@)
	CFISEM_AARCH64_CC=$(AARCH64_CC) $(EH_ELF_TOOL) compile $(1) -o $$@ --layout tree > /dev/null
endef
$(foreach c,$(A64_EH_ELF_CASES),$(eval $(call a64_eh_elf_rule,$(c),cases-aarch64/$(basename $(notdir $(c))),tree)))
$(foreach l,$(A64_EH_ELF_LIBC),$(eval $(call a64_eh_elf_rule,$(l),aarch64/$(notdir $(l)),)))
TEST_ENV += CFISEM_EH_ELF=$(abspath $(EH_ELF_DIR))

eh-elfs: $(EH_ELFS)

# The AArch64 run-time library's test (make run-runtime_aarch64, in
# make check): a plain C program with its own checks (tests/aarch64/),
# run under qemu-aarch64, linked with the shared library, its pac-ret
# frames built twice (the A key and the B key); its eh_elf beside it and
# the cross libc's in $(EH_ELF_DIR)/aarch64, built by cfisem with the
# cross compiler.
QEMU_AARCH64 ?= qemu-aarch64
A64_SYSROOT ?= /usr/aarch64-linux-gnu
A64_TEST := $(A64_DIR)/tests/runtime_a64
A64_TEST_OBJS := $(A64_DIR)/tests/runtime_a64.o $(A64_DIR)/tests/pac_a.o \
                 $(A64_DIR)/tests/pac_b.o
$(A64_DIR)/tests/runtime_a64.o: tests/aarch64/runtime_a64.c
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(A64_CFLAGS) -c -o $@ $<
$(A64_DIR)/tests/pac_a.o: tests/aarch64/pac.c
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(A64_CFLAGS) -fno-omit-frame-pointer \
	  -mbranch-protection=pac-ret -DPAC_NAME=pac_a -c -o $@ $<
$(A64_DIR)/tests/pac_b.o: tests/aarch64/pac.c
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(A64_CFLAGS) -fno-omit-frame-pointer \
	  -mbranch-protection=pac-ret+b-key -DPAC_NAME=pac_b -c -o $@ $<
$(A64_TEST): $(A64_TEST_OBJS) $(A64_DIR)/libcfisem-unwind.so
	$(AARCH64_CC) -o $@ $(A64_TEST_OBJS) -L$(A64_DIR) -lcfisem-unwind \
	  -Wl,-rpath,$(abspath $(A64_DIR))
$(A64_TEST).eh_elf.so: $(A64_TEST) $(EH_ELF_DEPS) | $(EH_ELF_TOOL)
	CFISEM_AARCH64_CC=$(AARCH64_CC) $(EH_ELF_TOOL) compile $< -o $@ > /dev/null
# Run again as a copy with no eh_elf beside it: its eh_elf is found by
# build-id in a cache that `cfisem cache` filled.
A64_CACHE := $(A64_DIR)/tests/cache
$(A64_CACHE)/runtime_a64: $(A64_TEST)
	@mkdir -p $(dir $@)
	cp $< $@
$(A64_CACHE)/filled: $(A64_CACHE)/runtime_a64 $(EH_ELF_DEPS) | $(EH_ELF_TOOL)
	CFISEM_AARCH64_CC=$(AARCH64_CC) $(EH_ELF_TOOL) cache --force \
	  --cache $(A64_CACHE)/eh_elf $< > /dev/null
	touch $@
# The C++ program (runtime_a64_cxx): stacks through the cross libstdc++,
# whose eh_elf is beside libc's.
AARCH64_CXX ?= aarch64-linux-gnu-g++
A64_CXX_TEST := $(A64_DIR)/tests/runtime_a64_cxx
$(A64_CXX_TEST): tests/aarch64/runtime_a64_cxx.cc $(A64_DIR)/libcfisem-unwind.so
	@mkdir -p $(dir $@)
	$(AARCH64_CXX) -std=c++17 $(filter-out -Wstrict-prototypes -Wmissing-prototypes,$(WARN)) -O2 -g -I. -o $@ $< \
	  -L$(A64_DIR) -lcfisem-unwind -Wl,-rpath,$(abspath $(A64_DIR))
$(A64_CXX_TEST).eh_elf.so: $(A64_CXX_TEST) $(EH_ELF_DEPS) | $(EH_ELF_TOOL)
	CFISEM_AARCH64_CC=$(AARCH64_CC) $(EH_ELF_TOOL) compile $< -o $@ > /dev/null
run-runtime_aarch64: $(A64_TEST) $(A64_TEST).eh_elf.so $(A64_CACHE)/filled \
                     $(A64_CXX_TEST) $(A64_CXX_TEST).eh_elf.so \
                     $(EH_ELF_DIR)/aarch64/libc.so.6.table.eh_elf.so \
                     $(EH_ELF_DIR)/aarch64/libstdc++.so.6.table.eh_elf.so
	@command -v $(QEMU_AARCH64) > /dev/null || { echo "$@:" \
	  "$(QEMU_AARCH64) is not installed (qemu-user: make deps)"; exit 1; }
	@echo "== $(A64_TEST) (under $(QEMU_AARCH64))"
	@$(QEMU_AARCH64) -L $(A64_SYSROOT) $(A64_TEST) \
	  $(abspath $(EH_ELF_DIR))/aarch64
	@echo "== $(A64_CACHE)/runtime_a64 (its eh_elf from cfisem cache)"
	@CFISEM_CACHE=$(abspath $(A64_CACHE))/eh_elf \
	  $(QEMU_AARCH64) -L $(A64_SYSROOT) $(A64_CACHE)/runtime_a64 \
	  $(abspath $(EH_ELF_DIR))/aarch64 20
	@echo "== $(A64_CXX_TEST) (under $(QEMU_AARCH64))"
	@$(QEMU_AARCH64) -L $(A64_SYSROOT) $(A64_CXX_TEST) \
	  $(abspath $(EH_ELF_DIR))/aarch64

# Stacks to unwind (bench/workload/workload.h), for the run-time tests and
# the real-stack benchmark: the mixed build (shape_fp.c with frame
# pointers, the rest without), the same with frame pointers everywhere
# (for the frame-pointer walk), and a copy of the mixed build without an
# eh_elf (the interpreter fallback). The eh_elfs sit beside the objects,
# where the run-time library looks first.
WORKLOAD_DIR ?= $(BUILD)/workload
WORKLOAD_HDR := bench/workload/workload.h
WORKLOAD_FLAGS := $(CSTD) $(WARN) -O2 -g -fPIC
WORKLOADS := $(WORKLOAD_DIR)/libcfisem-shapes.so $(WORKLOAD_DIR)/libcfisem-shapes-fp.so \
             $(WORKLOAD_DIR)/libcfisem-shapes-noeh.so \
             $(WORKLOAD_DIR)/libcfisem-shapes.so.eh_elf.so \
             $(WORKLOAD_DIR)/libcfisem-shapes-fp.so.eh_elf.so \
             $(WORKLOAD_DIR)/libcfisem-cxx.so $(WORKLOAD_DIR)/libcfisem-cxx.so.eh_elf.so

$(WORKLOAD_DIR)/mixed/shape_fp.o: bench/workload/shape_fp.c $(WORKLOAD_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(WORKLOAD_FLAGS) -fno-omit-frame-pointer -c -o $@ $<
$(WORKLOAD_DIR)/mixed/%.o: bench/workload/%.c $(WORKLOAD_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(WORKLOAD_FLAGS) -fomit-frame-pointer -c -o $@ $<
$(WORKLOAD_DIR)/fp/%.o: bench/workload/%.c $(WORKLOAD_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(WORKLOAD_FLAGS) -fno-omit-frame-pointer -c -o $@ $<
$(WORKLOAD_DIR)/libcfisem-shapes.so $(WORKLOAD_DIR)/libcfisem-shapes-noeh.so: \
  $(WORKLOAD_DIR)/mixed/shape_fp.o $(WORKLOAD_DIR)/mixed/shapes.o
	$(CC) -shared -o $@ $^
$(WORKLOAD_DIR)/libcfisem-shapes-fp.so: $(WORKLOAD_DIR)/fp/shape_fp.o $(WORKLOAD_DIR)/fp/shapes.o
	$(CC) -shared -o $@ $^
CXX ?= g++
$(WORKLOAD_DIR)/libcfisem-cxx.so: bench/workload/cxx_chain.cc $(WORKLOAD_HDR)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -Wall -Wextra -Werror -O2 -g -fPIC -shared -o $@ $<
# The C++ program bench/perf_table.sh records with perf (make bench-perf).
$(WORKLOAD_DIR)/stl_work: bench/workload/stl_work.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -Wall -Wextra -Werror -O2 -g -o $@ $<
$(WORKLOAD_DIR)/%.so.eh_elf.so: $(WORKLOAD_DIR)/%.so $(EH_ELF_DEPS) | $(EH_ELF_TOOL)
	$(EH_ELF_TOOL) compile $< -o $@ > /dev/null

workloads: $(WORKLOADS)
TEST_ENV += CFISEM_WORKLOAD=$(abspath $(WORKLOAD_DIR))

# The Csmith workloads of the real-stack benchmark (bench/workload/csmith.sh):
# random programs and their eh_elfs, listed in workloads.txt (empty, with
# a message, when csmith is not installed). Only make bench builds them.
CSMITH_WORKLOADS := $(WORKLOAD_DIR)/csmith/workloads.txt
$(CSMITH_WORKLOADS): bench/workload/csmith.sh bench/workload/csmith_hook.c $(WORKLOAD_HDR) \
                     $(EH_ELF_DEPS) | $(EH_ELF_TOOL)
	bench/workload/csmith.sh $(WORKLOAD_DIR)/csmith $(EH_ELF_TOOL)

# The program the perf suite (tests/check_perf.c) records with perf
# record --call-graph dwarf: a known chain of calls; no sanitizer (its
# stacks are what is compared).
PERF_TARGET := $(BUILD)/tests/perf-deep
$(PERF_TARGET): tests/perf/deep.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -g -o $@ $<
TEST_ENV += CFISEM_PERF_TARGET=$(abspath $(PERF_TARGET))
# The same program with frame pointers in every function (leaves too):
# the truth its chains are compared with (cfisem perf --compare-fp).
PERF_FP_TARGET := $(BUILD)/tests/perf-deep-fp
$(PERF_FP_TARGET): tests/perf/deep.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -g -fno-omit-frame-pointer \
	    -mno-omit-leaf-frame-pointer -o $@ $<
TEST_ENV += CFISEM_PERF_FP_TARGET=$(abspath $(PERF_FP_TARGET))

# The process the stack suite (tests/check_stack.c) unwinds from outside:
# threads, a signal handler, libstdc++ frames; no sanitizer (its frames
# are compared with eu-stack's and gdb's, not checked).
STACK_TARGET := $(BUILD)/tests/stack-target
$(STACK_TARGET): tests/stack/target.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -Wall -Wextra -Werror -O2 -pthread -o $@ $<
TEST_ENV += CFISEM_STACK_TARGET=$(abspath $(STACK_TARGET))
STACK_BUSY := $(BUILD)/tests/stack-busy
$(STACK_BUSY): tests/stack/busy.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -o $@ $<
TEST_ENV += CFISEM_STACK_BUSY=$(abspath $(STACK_BUSY))
# An AArch64 program that aborts under qemu-aarch64, for a core of
# another machine (static: qemu-user's cores name no file).
STACK_A64 := $(BUILD)/tests/stack-abort-aarch64
$(STACK_A64): tests/stack/abort.c
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(CSTD) $(WARN) -O1 -static -o $@ $<
TEST_ENV += CFISEM_STACK_A64=$(abspath $(STACK_A64))

# Each suite and each script is a target of its own, so that the suites
# run CHECK_JOBS at a time (the number of processors); --output-sync
# prints each one's output whole, when it ends, with its time. -k: every
# suite runs, whichever fails. A suite's temporary files go to a folder
# of its own (TMPDIR; others may enter it, as the trust tests' other
# user must), removed when it passes.
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# -j for a sub-make, unless this make shares a job server already.
PARALLEL = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(CHECK_JOBS))
CHECK_INPUTS := $(BUILD)/cfisem $(RT_LIBS) $(TEST_BINS) $(CASE_SOS) $(CASE_OBJS) $(EXPLAIN_SOS) \
                $(AARCH64_RUNNER) $(A64_CASE_SOS) \
                $(EH_ELFS) $(WORKLOADS) $(BUILD)/bench/real_stacks \
                $(BUILD)/bench/real_stacks.eh_elf.so $(STACK_TARGET) \
                $(STACK_BUSY) $(if $(AARCH64_CC_FOUND),$(STACK_A64)) \
                $(PERF_TARGET) $(PERF_FP_TARGET)
# The longest suites first (each pass's minutes, most to least), so
# that make -j ends with short ones rather than one long one alone.
SLOW_SUITES := install explain compile robust trace gen dwarfdump stack \
               diff readelf cases cli_unwind perf paper
SUITE_RUNS := $(patsubst %,run-check_%,$(SLOW_SUITES)) \
              $(filter-out $(patsubst %,run-check_%,$(SLOW_SUITES)),\
                $(patsubst $(BUILD)/tests/%,run-%,$(TEST_BINS)))
SCRIPT_RUNS := run-help_man_readme_completion_agree.py run-layering.py \
               run-json_schemas.py run-findings_complete.py \
               run-shard_recipes.py
.PHONY: $(SUITE_RUNS) $(SCRIPT_RUNS) check-suites
# Under ASan, LeakSanitizer's check at each process's exit costs ~80 ms
# on a 2-core machine: the suites' own processes and the cfisem runs of
# the suites about the command line (LEAK_SUITES) keep it; the cfisem
# runs of the others, thousands of the same commands, do without
# (CFISEM_CHILD_LEAKS=0, tests/support.h); ASan and UBSan stay on.
LEAK_SUITES := check_bad_input check_malformed check_cli_unwind check_robust \
               check_stats check_merge
# Under the sanitizers each test Check forks pays ASan's start and the
# leak check at its exit (~0.12 s: 188 s for check_unwind's 1,515 tests,
# 0.6 s in one process). These suites need no process per test: in the
# sanitizer pass they run in one (CK_FORK=no; a leak is still found, at
# the suite's exit, and a sanitizer report still fails the suite). A
# test that hangs is the plain pass's to catch: it runs first, each test
# forked under its timeout, and the sanitizer pass runs only after it
# passed.
NOFORK_SUITES := check_unwind check_sem_print check_sem_decode \
                 check_sem_translate check_opcode_tables check_stats \
                 check_tables check_merge check_cfi check_fuzz_replay \
                 check_deviations check_malformed check_cases check_gen \
                 check_diff check_agreement check_oracles check_explain \
                 check_synth check_readelf check_cli_unwind \
                 check_bad_input check_fuzz_mutator check_dwarfdump
define suite_run
	@start=$$(date +%s); status=0; tmp=$$(mktemp -d) && chmod 755 $$tmp; \
	TMPDIR=$$tmp $(TEST_ENV) \
	CFISEM_CHILD_LEAKS=$(if $(filter $*,$(LEAK_SUITES)),1,0) \
	$(if $(and $(filter 1,$(SANITIZE)),$(filter $*,$(NOFORK_SUITES))),CK_FORK=no) \
	$(BUILD)/tests/$* || status=1; \
	if [ $$status = 0 ]; then rm -rf $$tmp; \
	else echo "the suite's temporary files are in $$tmp"; fi; \
	echo "== $(BUILD)/tests/$*: $$(( $$(date +%s) - start )) s"; exit $$status
endef
$(SUITE_RUNS): run-%: $(CHECK_INPUTS)
	$(suite_run)
run-help_man_readme_completion_agree.py: $(BUILD)/cfisem
	@echo "== tests/help_man_readme_completion_agree.py"
	@tests/help_man_readme_completion_agree.py $(BUILD)/cfisem .
run-layering.py: $(CHECK_INPUTS)
	@echo "== tests/layering.py"
	@tests/layering.py . $(BUILD)
run-findings_complete.py:
	@echo "== tests/findings_complete.py"
	@tests/findings_complete.py .
# corpus/shard.sh's recipes (make -j, GNU parallel, a Slurm array, a
# Kubernetes Indexed Job) on six cases, each merged report against one
# run's, and the merge of a part of another build refused.
run-shard_recipes.py: $(BUILD)/cfisem $(CASE_SOS)
	@echo "== tests/shard_recipes.py"
	@/usr/bin/python3 tests/shard_recipes.py $(BUILD)/cfisem .
run-json_schemas.py: $(CHECK_INPUTS)
	@echo "== tests/json_schemas.py"
	@/usr/bin/python3 tests/json_schemas.py $(BUILD)/cfisem . \
	  $(abspath $(WORKLOAD_DIR))
# The AArch64 run-time test (runtime-aarch64, above), once, in the plain
# pass (it is no host code: no sanitizer).
A64_RUNS := $(if $(AARCH64_CC_FOUND),$(if $(filter 1,$(SANITIZE)),,run-runtime_aarch64))
check-suites: $(SUITE_RUNS) $(SCRIPT_RUNS) $(A64_RUNS)

check-plain: $(CHECK_INPUTS)
	$(MAKE) -k $(PARALLEL) --output-sync=target --no-print-directory check-suites

check-asan: eh-elfs workloads
	$(MAKE) BUILD=$(BUILD)/asan SANITIZE=1 EH_ELF_DIR=$(abspath $(EH_ELF_DIR)) \
	  WORKLOAD_DIR=$(abspath $(WORKLOAD_DIR)) \
	  EH_ELF_TOOL=$(abspath $(EH_ELF_TOOL)) EH_ELF_DEPS= \
	  EH_ELF_CASES="$(abspath $(CASE_SOS))" \
	  A64_EH_ELF_CASES="$(abspath $(A64_EH_ELF_CASES))" check-plain

# The plain suites the Debian package's build runs (debian/rules: make
# check-package), about 40 s of CPU: those that need only the tree, its
# cases and the system's libc. Left out, and why: check_install (it
# builds this very package); check_trace, check_oracles and
# check_deviations (ptrace, gdb and qemu-aarch64, which a build chroot
# may not offer); check_dwarfdump and check_readelf (they compare with
# the host's llvm-dwarfdump and readelf on the host's libraries: facts of
# the build machine, not of the package); check_compile, check_runtime,
# check_diff and check_agreement (the eh_elfs of the system libraries
# and the workloads: minutes of compiling); check_gen and check_explain
# (75 s and 120 s alone on 2 cores); check_synth, check_paper,
# check_robust and check_fuzz_replay (the corpora and campaigns of make
# check). make check runs them all.
PACKAGE_SUITES := cfi cases sem_decode sem_print sem_translate tables \
                  opcode_tables malformed merge bad_input cli_unwind unwind stats
PACKAGE_RUNS := $(patsubst %,package-run-check_%,$(PACKAGE_SUITES))
PACKAGE_INPUTS := $(BUILD)/cfisem $(CASE_SOS) $(CASE_OBJS) $(EXPLAIN_SOS) \
                  $(AARCH64_RUNNER) $(A64_CASE_SOS) $(A64_CASE_OBJS) \
                  $(patsubst %,$(BUILD)/tests/check_%,$(PACKAGE_SUITES))
.PHONY: check-package $(PACKAGE_RUNS)
$(PACKAGE_RUNS): package-run-%: $(PACKAGE_INPUTS)
	$(suite_run)
check-package: $(PACKAGE_INPUTS) $(LIBFILES)
	$(MAKE) -k $(PARALLEL) --output-sync=target --no-print-directory \
	  $(PACKAGE_RUNS) run-help_man_readme_completion_agree.py
	@echo "== tests/layering.py"
	@tests/layering.py . $(BUILD)

check: check-plain
	$(MAKE) $(PARALLEL) check-asan

# The real-stack benchmarks unwind their own frames too: their eh_elfs sit
# beside them, where libcfisem-unwind looks first.
BENCH_EH_ELFS := $(BUILD)/bench/real_stacks.eh_elf.so $(BUILD)/bench/samples.eh_elf.so
$(BUILD)/bench/%.eh_elf.so: $(BUILD)/bench/% | $(BUILD)/cfisem
	$(BUILD)/cfisem compile $< -o $@ > /dev/null

# The layouts benchmark (bench/layouts.c) finds every eh_elf of its stacks
# by file name in $(EH_ELF_DIR), of both layouts (NAME.full.eh_elf.so: the
# tree, NAME.table.eh_elf.so: the table): the system libraries' (above),
# the workloads' and its own; none beside its program.
LAYOUT_EH_ELFS := $(foreach n,libcfisem-shapes.so libcfisem-shapes-fp.so libcfisem-cxx.so layouts libcfisem-unwind.so,\
                    $(foreach f,full table,$(EH_ELF_DIR)/$(n).$(f).eh_elf.so))
$(EH_ELF_DIR)/%.so.full.eh_elf.so: $(WORKLOAD_DIR)/%.so $(EH_ELF_DEPS) | $(EH_ELF_TOOL)
	@mkdir -p $(dir $@)
	$(EH_ELF_TOOL) compile $< -o $@ --layout tree > /dev/null
$(EH_ELF_DIR)/%.so.table.eh_elf.so: $(WORKLOAD_DIR)/%.so $(EH_ELF_DEPS) | $(EH_ELF_TOOL)
	@mkdir -p $(dir $@)
	$(EH_ELF_TOOL) compile $< -o $@ --layout table > /dev/null
# $(1) the ELF file, $(2) its name.
define layout_eh_elf_rule
$(EH_ELF_DIR)/$(2).full.eh_elf.so: $(1) $(EH_ELF_DEPS) | $(EH_ELF_TOOL)
	@mkdir -p $$(dir $$@)
	$(EH_ELF_TOOL) compile $$< -o $$@ --layout tree > /dev/null
$(EH_ELF_DIR)/$(2).table.eh_elf.so: $(1) $(EH_ELF_DEPS) | $(EH_ELF_TOOL)
	@mkdir -p $$(dir $$@)
	$(EH_ELF_TOOL) compile $$< -o $$@ --layout table > /dev/null
endef
$(eval $(call layout_eh_elf_rule,$(BUILD)/bench/layouts,layouts))
$(eval $(call layout_eh_elf_rule,$(BUILD)/libcfisem-unwind.so,libcfisem-unwind.so))
LAYOUT_EH_ELFS += $(foreach l,$(EH_ELF_LIBS),$(foreach f,full table,$(EH_ELF_DIR)/$(notdir $(l)).$(f).eh_elf.so))
layouts-eh-elfs: $(LAYOUT_EH_ELFS) $(WORKLOADS) $(BUILD)/libcfisem-unwind.so

bench: $(BENCH_BINS) $(BUILD)/cfisem $(WORKLOADS) $(CSMITH_WORKLOADS) $(EH_ELFS) \
       $(BENCH_EH_ELFS) layouts-eh-elfs $(STACK_TARGET)
	@for b in $(filter-out $(BUILD)/bench/perf_unwind,$(BENCH_BINS)); do \
	  echo "== $$b"; $(TEST_ENV) $$b || exit 1; done
	@for b in $(filter-out bench/perf_table.sh,$(wildcard bench/*.sh)); do \
	  echo "== $$b"; $(TEST_ENV) sh $$b || exit 1; done

# Real perf samples (bench/perf_table.sh): perf record must be allowed.
bench-perf: $(BUILD)/bench/perf_unwind $(BUILD)/cfisem $(WORKLOAD_DIR)/stl_work
	@$(TEST_ENV) PERF_UNWIND=$(abspath $(BUILD)/bench/perf_unwind) \
	  STL_WORK=$(abspath $(WORKLOAD_DIR)/stl_work) sh bench/perf_table.sh

# ---- Corpora and fuzzing (corpus/, fuzz/: see fuzz/README.md) ----------
# The fuzz harness mains live in fuzz/harness/, which is no module (the
# fuzz module, libfuzz.a, holds the targets they and the tests share). Each
# harness is linked twice: by afl-clang-fast with ASan and UBSan, every
# module compiled again (build/fuzz/afl/harness/), and as a replay program
# by the normal compiler with ASan and UBSan (build/fuzz/replay/harness/).
HARNESS_SRCS   := $(wildcard fuzz/harness/fuzz_*.c)
HARNESS_BINS   := $(patsubst fuzz/harness/%.c,$(BUILD)/harness/%,$(HARNESS_SRCS))
HARNESS_DRIVER := $(BUILD)/obj/fuzz/harness/driver.o
# Only the modules the harnesses use (libraries in link order).
HARNESS_LIBS   := $(foreach m,fuzz diff engines compile interp semantics sframe cfi,$(filter %/lib$(m).a,$(LIBFILES)))
AFL_CC       ?= afl-clang-fast
FUZZ_BUILD   := $(BUILD)/fuzz
FUZZ_HARNESS ?= cfi_bytes elf oracles
FUZZ_JOBS    ?= $(shell nproc 2>/dev/null || echo 1)
FUZZ_TIME    ?= 3600
CSMITH_SEEDS ?= 20
CSMITH_ARM64_SEEDS ?= 50

$(BUILD)/harness/%: $(BUILD)/obj/fuzz/harness/%.o $(HARNESS_DRIVER) $(HARNESS_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(HARNESS_DRIVER) $(HARNESS_LIBS) $(LIBS)

harnesses: $(HARNESS_BINS)

fuzz-build:
	@scripts/install-deps fuzz
	AFL_USE_ASAN=1 AFL_USE_UBSAN=1 AFL_QUIET=1 \
	  $(MAKE) BUILD=$(FUZZ_BUILD)/afl CC=$(AFL_CC) harnesses
	$(MAKE) BUILD=$(FUZZ_BUILD)/replay SANITIZE=1 harnesses

fuzz-smoke: fuzz-build
	fuzz/run.sh smoke $(FUZZ_BUILD)

fuzz: fuzz-build
	FUZZ_JOBS=$(FUZZ_JOBS) FUZZ_TIME=$(FUZZ_TIME) \
	  fuzz/run.sh campaign $(FUZZ_BUILD) $(FUZZ_HARNESS)

fuzz-triage: fuzz-build
	fuzz/triage.sh $(FUZZ_BUILD) $(FUZZ_HARNESS)

# libFuzzer targets (fuzz/README.md): each harness main compiled again with
# CFISEM_LIBFUZZER and linked by $(FUZZ_LINK) with $(LIB_FUZZING_ENGINE)
# into $(BUILD)/libfuzzer/NAME; NAME_structured also with
# CFISEM_STRUCTURED and the structured mutator (fuzz/mutator/, which
# reuses robust/'s mutate.c, formats.c and scan.c). fuzz/oss-fuzz/build.sh
# calls `make libfuzzer-targets` with OSS-Fuzz's $CC, $CFLAGS, $CXX and
# $LIB_FUZZING_ENGINE; `make fuzz-libfuzzer` runs that script here.
LIB_FUZZING_ENGINE ?= -fsanitize=fuzzer
FUZZ_LINK       ?= $(CC)
LIBFUZZER_NAMES := $(patsubst fuzz/harness/%.c,%,$(HARNESS_SRCS))
LIBFUZZER_BINS  := $(foreach n,$(LIBFUZZER_NAMES),$(BUILD)/libfuzzer/$(n) \
                     $(BUILD)/libfuzzer/$(n)_structured)
MUTATOR_SRCS    := fuzz/mutator/structured.c robust/mutate.c robust/formats.c \
                   robust/scan.c
MUTATOR_OBJS    := $(patsubst %.c,$(BUILD)/obj/%.o,$(MUTATOR_SRCS))
FUZZ_SECONDS    ?= 20
FUZZ_MEASURE_SECONDS ?= 60
# The flags `make fuzz-libfuzzer` gives the script (OSS-Fuzz's ASan build
# adds the same sanitizers and -fsanitize=fuzzer-no-link).
LIBFUZZER_CFLAGS ?= -O1 -g -fno-omit-frame-pointer \
    -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -fsanitize=fuzzer-no-link

$(BUILD)/obj/fuzz/harness/%.lf.o: fuzz/harness/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DCFISEM_LIBFUZZER -c -o $@ $<

$(BUILD)/obj/fuzz/harness/%.lfs.o: fuzz/harness/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DCFISEM_LIBFUZZER -DCFISEM_STRUCTURED -c -o $@ $<

$(BUILD)/libfuzzer/%_structured: $(BUILD)/obj/fuzz/harness/%.lfs.o \
        $(BUILD)/obj/fuzz/mutator/libfuzzer.o $(MUTATOR_OBJS) \
        $(HARNESS_DRIVER) $(HARNESS_LIBS)
	@mkdir -p $(dir $@)
	$(FUZZ_LINK) $(ALL_LDFLAGS) -o $@ $(filter %.o %.a,$^) \
	  $(LIB_FUZZING_ENGINE) $(LIBS)

$(BUILD)/libfuzzer/%: $(BUILD)/obj/fuzz/harness/%.lf.o $(HARNESS_DRIVER) \
        $(HARNESS_LIBS)
	@mkdir -p $(dir $@)
	$(FUZZ_LINK) $(ALL_LDFLAGS) -o $@ $(filter %.o %.a,$^) \
	  $(LIB_FUZZING_ENGINE) $(LIBS)

libfuzzer-targets: $(LIBFUZZER_BINS)

fuzz-libfuzzer-build:
	@scripts/install-deps fuzz
	CC=clang CXX=clang++ CFLAGS="$(LIBFUZZER_CFLAGS)" \
	  CXXFLAGS="$(LIBFUZZER_CFLAGS)" LIB_FUZZING_ENGINE=-fsanitize=fuzzer \
	  SRC=$(abspath .) OUT=$(abspath $(BUILD)/fuzz-libfuzzer) \
	  WORK=$(abspath $(BUILD)/fuzz-libfuzzer-work) fuzz/oss-fuzz/build.sh

fuzz-libfuzzer: fuzz-libfuzzer-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/libfuzzer.sh run $(BUILD)/fuzz-libfuzzer

# The custom mutator for afl-fuzz (AFL_CUSTOM_MUTATOR_LIBRARY).
$(FUZZ_BUILD)/cfisem-mutator.so: fuzz/mutator/afl.c $(MUTATOR_SRCS) \
        fuzz/mutator/structured.h robust/robust.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -g -fPIC -shared -I. -o $@ \
	  $(filter %.c,$^)

fuzz-mutator: $(FUZZ_BUILD)/cfisem-mutator.so

# Execs per second, coverage (cov:, ft:) with and without the structured
# mutator, and the share of mutants that still load (fuzz/README.md).
# check_fuzz_mutator links the mutator and its AFL++ entry points.
$(BUILD)/tests/check_fuzz_mutator: $(MUTATOR_OBJS) $(BUILD)/obj/fuzz/mutator/afl.o
$(BUILD)/tests/check_fuzz_mutator: TEST_SUPPORT += $(MUTATOR_OBJS) \
    $(BUILD)/obj/fuzz/mutator/afl.o

$(BUILD)/harness/mutate_stats: $(BUILD)/obj/fuzz/harness/mutate_stats.o \
        $(MUTATOR_OBJS) $(HARNESS_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o %.a,$^) $(LIBS)

fuzz-measure: fuzz-libfuzzer-build $(BUILD)/harness/mutate_stats
	FUZZ_SECONDS=$(FUZZ_MEASURE_SECONDS) fuzz/libfuzzer.sh measure \
	  $(BUILD)/fuzz-libfuzzer $(BUILD)/harness/mutate_stats

# Coverage of the outside libraries' CFI code (fuzz/README.md): their
# Debian source packages (fetched with a private apt configuration) built
# with gcc --coverage, and with clang -fsanitize=fuzzer-no-link for the
# campaigns' edge feedback (COVERAGE_FEEDBACK=0: without), one
# fuzz_oracles campaign per library and mutator, each corpus replayed
# through the coverage build; the table in
# $(BUILD)/fuzz-coverage/coverage.md.
COVERAGE_SECONDS ?= 300
fuzz-coverage: fuzz-libfuzzer-build
	COVERAGE_SECONDS=$(COVERAGE_SECONDS) \
	  LIBFUZZER_OUT=$(BUILD)/fuzz-libfuzzer \
	  fuzz/coverage.sh all $(BUILD)/fuzz-coverage

corpus: cases
	@scripts/install-deps corpus
	corpus/manifest.sh $(BUILD)/corpus/manifest.txt
	corpus/csmith.sh $(CSMITH_SEEDS) $(BUILD)/corpus/csmith

# Real AArch64 objects: the packages of corpus/arm64-packages.txt fetched
# from Debian's archive as files (apt with a state of its own, nothing
# installed). About 300 MB from the network: no test depends on it.
# Then the Csmith programs cross-built for AArch64 with and without
# pointer authentication and run by qemu-aarch64: the corpus's only
# DW_CFA_AARCH64_negate_ra_state and "zRB" CIEs.
corpus-arm64:
	@scripts/install-deps corpus
	corpus/arm64.sh $(BUILD)/corpus-arm64
	CSMITH_ARCH=aarch64 corpus/csmith.sh $(CSMITH_ARM64_SEEDS) \
	  $(BUILD)/corpus-arm64/csmith

# cfisem's own engines over a sample of the Debian archive (amd64):
# corpus/debian.sh, one job per package (download, unpack, manifest,
# cfisem diff, delete), DEBIAN_JOBS at once with GNU parallel, logged in
# build/corpus-debian/joblog; run again, it goes on where it stopped.
# The network: about 1 MB a package. docs/corpora.md, "The Debian
# archive", has the Slurm and Kubernetes forms.
DEBIAN_PACKAGES ?= 2000
DEBIAN_JOBS     ?= 2
corpus-debian: $(BUILD)/cfisem
	@scripts/install-deps corpus
	corpus/debian.sh sample $(BUILD)/corpus-debian $(DEBIAN_PACKAGES)
	nice -n 19 corpus/debian.sh parallel $(BUILD)/corpus-debian $(DEBIAN_JOBS)
	corpus/debian.sh merge $(BUILD)/corpus-debian

# The whole system's manifest (make corpus's) through cfisem's own engines,
# each file's result kept in build/corpus/results (a second run reads
# them: only changed files run again) and the eh_elfs in
# build/corpus/eh_elf-cache (building them is most of a first run).
SYSTEM_ENGINES ?= il,interp,compiled
system-diff: $(BUILD)/cfisem $(BUILD)/corpus/manifest.txt
	$(BUILD)/cfisem diff --manifest $(BUILD)/corpus/manifest.txt \
	  --engines $(SYSTEM_ENGINES) --results $(BUILD)/corpus/results \
	  --cache $(BUILD)/corpus/eh_elf-cache \
	  --json $(BUILD)/corpus/system.json

# The same over make corpus-arm64's manifest: the compiled engine's
# eh_elfs built by aarch64-linux-gnu-gcc and run by the eh_elf runner
# under qemu-aarch64, the results in build/corpus-arm64/results (a run
# stopped and started again goes on with the files not yet there).
# ARM64_SHARD=K/N runs one shard (cfisem diff --shard), its JSON
# system-K-of-N.json, to merge with cfisem report merge.
ARM64_SHARD ?=
ARM64_JSON = $(BUILD)/corpus-arm64/system$(if $(ARM64_SHARD),-$(subst /,-of-,$(ARM64_SHARD))).json
system-diff-arm64: $(BUILD)/cfisem $(AARCH64_RUNNER) \
        $(BUILD)/corpus-arm64/manifest.txt
	nice -n 19 $(BUILD)/cfisem diff \
	  --manifest $(BUILD)/corpus-arm64/manifest.txt \
	  $(if $(ARM64_SHARD),--shard $(ARM64_SHARD)) \
	  --engines $(SYSTEM_ENGINES) --results $(BUILD)/corpus-arm64/results \
	  --cache $(BUILD)/corpus-arm64/eh_elf-cache --json $(ARM64_JSON)

# ---- Manual pages, completion, install -----------------------------------
# The manual pages of section 1 and the bash completion are written from
# cfisem's own help texts (scripts/man.sh, scripts/completion.sh), so they
# say what --help says; those of sections 3 (the run-time library's API)
# and 5 (the IL's format, the eh_elf ABI) are man/*.3 and man/*.5.
# The directories are GNU's (prefix, exec_prefix, bindir, libdir,
# includedir, datarootdir, datadir, mandir); PREFIX is prefix's other
# name. The headers go to includedir/cfisem.
PREFIX      ?= /usr/local
prefix      ?= $(PREFIX)
exec_prefix ?= $(prefix)
bindir      ?= $(exec_prefix)/bin
libdir      ?= $(exec_prefix)/lib
includedir  ?= $(prefix)/include
datarootdir ?= $(prefix)/share
datadir     ?= $(datarootdir)
mandir      ?= $(datarootdir)/man
DESTDIR     ?=
BINDIR  := $(DESTDIR)$(bindir)
MANDIR  := $(DESTDIR)$(mandir)
INCDIR  := $(DESTDIR)$(includedir)/cfisem
COMPDIR := $(DESTDIR)$(datadir)/bash-completion/completions
LIBDIR  := $(DESTDIR)$(libdir)
PCDIR   := $(LIBDIR)/pkgconfig
# The AArch64 eh_elf runner, where an installed cfisem looks for it
# (bindir/../lib/cfisem/aarch64: exec_prefix/lib, whatever libdir is),
# when the cross compiler built it.
RUNNERDIR := $(DESTDIR)$(exec_prefix)/lib/cfisem/aarch64
INSTALL_RUNNER := $(if $(AARCH64_CC_FOUND),$(AARCH64_RUNNER))

# The system folder of eh_elfs keyed by build-id, compiled into
# libcfisem-unwind (cfisem_system_eh_elf_dir): $(1) the prefix. A
# change of prefix rebuilds the one file that names it.
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
rt_system_dir = $(1)/lib/$(if $(MULTIARCH),$(MULTIARCH)/)cfisem/eh_elf
RT_SYSTEM_DIR := $(call rt_system_dir,$(prefix))
EHELFDIR := $(DESTDIR)$(RT_SYSTEM_DIR)
RT_SYSTEM_DIR_STAMP := $(BUILD)/rt-system-dir.txt
$(shell mkdir -p $(BUILD) && { echo '$(RT_SYSTEM_DIR)' | \
  cmp -s - $(RT_SYSTEM_DIR_STAMP) || echo '$(RT_SYSTEM_DIR)' > $(RT_SYSTEM_DIR_STAMP); })
$(BUILD)/obj/runtime/objects.o $(BUILD)/pic/runtime/objects.o: $(RT_SYSTEM_DIR_STAMP)
$(BUILD)/obj/runtime/objects.o $(BUILD)/pic/runtime/objects.o: \
  TARGET_CFLAGS += -DCFISEM_SYSTEM_EH_ELF_DIR='"$(RT_SYSTEM_DIR)"'

# Sections 3 and 5: each page of man/, and one link page (.so) for each
# function of the run-time library's API, which cfisem-unwind(3) describes.
MAN3_PAGES := $(wildcard man/*.3)
MAN5_PAGES := $(wildcard man/*.5)
RT_FUNCTIONS := $(shell tr '()' '<>' < runtime/cfisem-unwind.h | \
                  sed -n -e '/^typedef/d' -e 's/^[a-z].*[ *]\(cfisem_[a-z_]*\)<.*/\1/p')
MAN3_LINKS := $(patsubst %,$(BUILD)/man/%.3,$(RT_FUNCTIONS))
$(BUILD)/man/cfisem_%.3: runtime/cfisem-unwind.h
	@mkdir -p $(dir $@)
	echo '.so man3/cfisem-unwind.3' > $@

$(BUILD)/man/cfisem.1: $(BUILD)/cfisem scripts/man.sh
	scripts/man.sh $(BUILD)/cfisem $(BUILD)/man

$(BUILD)/cfisem.bash: $(BUILD)/cfisem scripts/completion.sh
	scripts/completion.sh $(BUILD)/cfisem > $@.tmp && mv $@.tmp $@

man: $(BUILD)/man/cfisem.1 $(MAN3_LINKS)
completion: $(BUILD)/cfisem.bash

install: $(BUILD)/cfisem $(BUILD)/man/cfisem.1 $(MAN3_LINKS) $(BUILD)/cfisem.bash \
         $(RT_LIBS) $(INSTALL_RUNNER)
	install -d $(BINDIR) $(MANDIR)/man1 $(MANDIR)/man3 $(MANDIR)/man5 \
	  $(INCDIR) $(COMPDIR) $(LIBDIR) $(PCDIR)
	install -m 755 $(BUILD)/cfisem $(BINDIR)/cfisem
	install -m 644 $(BUILD)/man/*.1 $(MANDIR)/man1/
	install -m 644 $(MAN3_PAGES) $(MAN3_LINKS) $(MANDIR)/man3/
	install -m 644 $(MAN5_PAGES) $(MANDIR)/man5/
	install -m 644 compile/eh_elf.h $(INCDIR)/eh_elf.h
	install -m 644 $(BUILD)/cfisem.bash $(COMPDIR)/cfisem
	install -m 644 runtime/cfisem-unwind.h $(INCDIR)/cfisem-unwind.h
	install -m 644 $(BUILD)/libcfisem-unwind.a $(LIBDIR)/libcfisem-unwind.a
	install -m 644 $(BUILD)/libcfisem-unwind.so $(LIBDIR)/$(RT_SONAME)
	ln -sf $(RT_SONAME) $(LIBDIR)/libcfisem-unwind.so
	install -d -m 755 $(EHELFDIR)/.build-id
	$(call rt_pc_text,$(prefix),$(libdir),$(includedir)/cfisem) \
	  > $(PCDIR)/cfisem-unwind.pc
	$(if $(INSTALL_RUNNER),install -d -m 755 $(RUNNERDIR) && \
	  install -m 755 $(INSTALL_RUNNER) $(RUNNERDIR)/eh_elf_runner)

uninstall:
	rm -f $(BINDIR)/cfisem $(MANDIR)/man1/cfisem.1 $(MANDIR)/man1/cfisem-*.1 \
	      $(INCDIR)/eh_elf.h $(COMPDIR)/cfisem
	rm -f $(patsubst man/%,$(MANDIR)/man3/%,$(MAN3_PAGES)) \
	      $(patsubst $(BUILD)/man/%,$(MANDIR)/man3/%,$(MAN3_LINKS)) \
	      $(patsubst man/%,$(MANDIR)/man5/%,$(MAN5_PAGES))
	rm -f $(INCDIR)/cfisem-unwind.h $(LIBDIR)/libcfisem-unwind.a \
	      $(LIBDIR)/$(RT_SONAME) $(LIBDIR)/libcfisem-unwind.so \
	      $(PCDIR)/cfisem-unwind.pc $(RUNNERDIR)/eh_elf_runner
	-rmdir $(INCDIR) $(PCDIR) $(RUNNERDIR) $(dir $(RUNNERDIR)) 2>/dev/null
	-rmdir $(EHELFDIR)/.build-id $(EHELFDIR) $(dir $(EHELFDIR)) 2>/dev/null

# ---- The paper (paper/: see paper/README.md) --------------------------
# paper-data runs the tools and writes paper/generated/ (every number and
# table of the paper); paper builds build/paper/cfisem.pdf with latexmk
# and fails on an undefined reference or citation.
PAPER_MANIFEST   ?= $(BUILD)/corpus/manifest.txt
PAPER_DIFF_FILES ?= $(LIBC) $(LDSO) /bin/ls
PAPER_JOBS       ?= 2
PAPER_ENV = CFISEM=$(abspath $(BUILD)/cfisem) CFISEM_BUILD=$(abspath $(BUILD)) \
            CFISEM_SRC=$(CURDIR) PAPER_MANIFEST=$(abspath $(PAPER_MANIFEST)) \
            PAPER_DIFF_FILES="$(PAPER_DIFF_FILES)" PAPER_JOBS=$(PAPER_JOBS) \
            CFISEM_EH_ELF=$(abspath $(EH_ELF_DIR)) CFISEM_WORKLOAD=$(abspath $(WORKLOAD_DIR))

$(BUILD)/corpus/manifest.txt:
	@mkdir -p $(dir $@)
	corpus/manifest.sh $@

paper-data: $(BUILD)/cfisem $(BUILD)/bench/eh_elf $(PAPER_MANIFEST) \
            $(BUILD)/bench/real_stacks $(BUILD)/bench/real_stacks.eh_elf.so $(WORKLOADS) $(EH_ELFS)
	@scripts/install-deps paper
	$(PAPER_ENV) paper/data/run paper/generated

paper: paper-data
	@scripts/install-deps paper
	@mkdir -p $(BUILD)/paper
	cd paper && latexmk -pdf -interaction=nonstopmode -halt-on-error \
	  -outdir=$(abspath $(BUILD)/paper) cfisem.tex > $(abspath $(BUILD)/paper/latexmk.out) 2>&1 \
	  || { tail -40 $(abspath $(BUILD)/paper/latexmk.out); exit 1; }
	@! grep -E "LaTeX Warning: (Reference|Citation) .* undefined|There were undefined" \
	  $(BUILD)/paper/cfisem.log \
	  || { echo "paper: undefined references or citations"; exit 1; }
	@echo "paper: $(BUILD)/paper/cfisem.pdf"

# ---- Robustness campaign (robust/: see robust/README.md) ---------------
# robust/ is no module: its mutator reads the formats itself and links
# nothing of cfisem. robust-walk (robust/walk/) links the run-time library:
# the campaign runs it on shared objects carrying a mutant's frame
# sections (with the seed's eh_elf from $(EH_ELF_DIR)/cases, when `make
# eh-elfs` built it: local walks through it and the frame cache too).
# `make robust` runs the campaign against the ASan+UBSan cfisem
# and robust-walk (ROBUST_RUNS runs from ROBUST_SEED, ROBUST_JOBS at a
# time, each killed after ROBUST_TIMEOUT s); a crash, hang, silent error,
# bad exit code, own-engine disagreement, wrong range or child crash fails
# it; failures go to $(BUILD)/robust/failures. robust/seeds.sh first
# makes the seeds of the newer readers in $(BUILD)/robust/readers with
# the tools that write them (perf record, gdb's gcore, objcopy): the
# perf.data files go through cfisem perf, the core through stack --core,
# the zstd-compressed and the stripped file (its debug file in
# split.so.d) through the ELF commands.
ROBUST_OBJS    := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard robust/*.c))
ROBUST_TOOL    := $(BUILD)/robust/robust
ROBUST_WALK    := $(BUILD)/robust/robust-walk
ROBUST_RUNS    ?= 100000
ROBUST_SEED    ?= 1
ROBUST_JOBS    ?= 2
ROBUST_TIMEOUT ?= 20
ROBUST_SYSTEM  := $(wildcard /usr/lib/x86_64-linux-gnu/libXau.so.6 \
                    /usr/lib/x86_64-linux-gnu/libdl.so.2 /bin/true)
ROBUST_READERS := $(BUILD)/robust/readers
ROBUST_SEEDS    = $(CASE_SOS) $(CASE_OBJS) $(A64_CASE_SOS) $(A64_CASE_OBJS) \
                  $(wildcard fuzz/seeds/elf/*.so) $(ROBUST_SYSTEM) \
                  $(addprefix $(ROBUST_READERS)/,perf.data perf-z.data \
                    perf-pipe.data prog.core zstd.so split.so)
.PHONY: robust

$(ROBUST_TOOL): $(ROBUST_OBJS) | $(ROBUST_WALK)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(ROBUST_OBJS)

$(ROBUST_WALK): $(BUILD)/obj/robust/walk/walk.o $(BUILD)/libcfisem-unwind.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libcfisem-unwind.a -ldl -lpthread

# check_robust runs the tool (a short campaign) against $(CFISEM).
# It also links robust's classifier (run.c, json.c) to test it directly,
# and scan.c, which finds the section headers of the files it makes.
ROBUST_CLASSIFIER := $(BUILD)/obj/robust/run.o $(BUILD)/obj/robust/json.o \
                     $(BUILD)/obj/robust/scan.o
$(BUILD)/tests/check_robust: $(ROBUST_TOOL) $(ROBUST_CLASSIFIER)
$(BUILD)/tests/check_robust: TEST_SUPPORT += $(ROBUST_CLASSIFIER)
TEST_ENV += CFISEM_ROBUST=$(abspath $(ROBUST_TOOL))

robust: cases $(ROBUST_TOOL)
	$(MAKE) BUILD=$(BUILD)/asan SANITIZE=1 $(BUILD)/asan/cfisem \
	  $(BUILD)/asan/robust/robust-walk
	sh robust/seeds.sh $(abspath $(ROBUST_READERS)) >/dev/null
	nice $(ROBUST_TOOL) --cfisem $(abspath $(BUILD)/asan/cfisem) \
	  --walker $(abspath $(BUILD)/asan/robust/robust-walk) \
	  --eh-elf-dir $(abspath $(EH_ELF_DIR))/cases \
	  --runs $(ROBUST_RUNS) --seed $(ROBUST_SEED) --jobs $(ROBUST_JOBS) \
	  --timeout $(ROBUST_TIMEOUT) --out $(BUILD)/robust --stats $(ROBUST_SEEDS)

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj $(BUILD)/pic $(BUILD)/aarch64/pic $(BUILD)/aarch64/tests -name '*.d' 2>/dev/null)
