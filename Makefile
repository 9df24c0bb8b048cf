# cfisem — the one build entry.
#
#   make            build build/cfisem
#   make demo       install what is missing, build, run the main job
#   make test       install what is missing, then make check
#   make check      run the Check suites, then again under ASan+UBSan
#   make deps       install the Debian packages the project needs
#   make bench      build and run the benchmarks (not tests)
#
# Every module folder's *.c goes into build/lib<module>.a; cli/*.c into the
# cfisem binary; each tests/check_*.c is one Check runner. A sanitized copy
# of everything is built under build/asan by calling this Makefile again
# with BUILD=build/asan SANITIZE=1.

CC       ?= cc
BUILD    ?= build
SANITIZE ?=

LIB_MODULES := $(foreach m,diff compile interp semantics cfi,$(if $(wildcard $(m)/*.c),$(m)))

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CSTD     := -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L
ifeq ($(SANITIZE),1)
OPT      := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
else
OPT      := -O2 -g
endif
CFLAGS   ?=
CFLAGS   += $(CSTD) $(WARN) $(OPT) -I. -MMD -MP
# (a comma inside $(if) would split its arguments: the flags go by name)
SAN_LDFLAGS := -fsanitize=address,undefined
LDFLAGS  += $(if $(filter 1,$(SANITIZE)),$(SAN_LDFLAGS))

# elfutils' libdw is not linked: it exports 34 dwarf_* names that libdwarf
# exports too, and one would bind the other's calls. diff/ loads it at run
# time (dlopen, RTLD_LOCAL | RTLD_DEEPBIND); only its headers are used here.
PKGS     := libelf libunwind-generic
PKG_CFLAGS := $(shell pkg-config --cflags libdw $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)
# libdwarf ships no pkg-config file.
DWARF_CFLAGS := -I/usr/include/libdwarf
DWARF_LIBS   := -ldwarf -lelf -lz
LIBS     := $(PKG_LIBS) $(DWARF_LIBS) -ldl -lpthread -lm
CFLAGS   += $(PKG_CFLAGS) $(DWARF_CFLAGS)

lib_srcs  = $(wildcard $(1)/*.c)
lib_objs  = $(patsubst %.c,$(BUILD)/obj/%.o,$(call lib_srcs,$(1)))
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

.PHONY: all check check-plain check-asan deps demo test bench cases clean help
.DEFAULT_GOAL := all
# Keep intermediate objects (test and bench objects), so that a second run
# does not rebuild them.
.SECONDARY:

all: $(BUILD)/cfisem

help:
	@sed -n '3,10p' Makefile

deps:
	@scripts/install-deps

test: deps
	$(MAKE) check

# The main job: the system's own libc, through the tool.
LIBC := $(firstword $(wildcard /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libc.so.6))
demo: deps
	$(MAKE) all
	@echo "== cfisem il $(LIBC) (first rows)"
	@$(BUILD)/cfisem il $(LIBC) | head -n 12
	@echo "== the same file as JSON: $$($(BUILD)/cfisem il --format json $(LIBC) | wc -c) bytes"

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

define lib_rule
$(BUILD)/lib$(1).a: $(call lib_objs,$(1))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach m,$(LIB_MODULES),$(eval $(call lib_rule,$(m))))

$(BUILD)/cfisem: $(CLI_OBJS) $(LIBFILES)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIBFILES) $(LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_SUPPORT) $(LIBFILES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(TEST_SUPPORT) $(LIBFILES) $(CHECK_LIBS) $(LIBS)

$(BUILD)/obj/tests/%.o: CFLAGS += $(CHECK_CFLAGS)

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(LIBFILES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBFILES) $(LIBS)

$(BUILD)/corpus/cases/%.so: corpus/cases/%.S
	@mkdir -p $(dir $@)
	$(CC) -shared -nostdlib -Wl,--section-start=.text=0x1000 -Wl,--build-id=none -o $@ $<

$(BUILD)/corpus/objects/%.o: corpus/cases/%.S
	@mkdir -p $(dir $@)
	$(CC) -c -o $@ $<

cases: $(CASE_SOS) $(CASE_OBJS)

# The suites find the tool, the sources and the built cases through the
# environment. CK_FORK stays on: one crashing test must not end the run.
TEST_ENV := CFISEM=$(abspath $(BUILD)/cfisem) CFISEM_SRC=$(CURDIR) \
            CFISEM_BUILD=$(abspath $(BUILD)) CK_FORK=yes

check-plain: $(BUILD)/cfisem $(TEST_BINS) $(CASE_SOS) $(CASE_OBJS)
	@status=0; for t in $(TEST_BINS); do \
	  echo "== $$t"; \
	  $(TEST_ENV) $$t || status=1; \
	done; exit $$status

check-asan:
	$(MAKE) BUILD=$(BUILD)/asan SANITIZE=1 check-plain

check: check-plain
	$(MAKE) check-asan

bench: $(BENCH_BINS) $(BUILD)/cfisem
	@for b in $(BENCH_BINS); do echo "== $$b"; $(TEST_ENV) $$b || exit 1; done
	@for b in bench/*.sh; do echo "== $$b"; $(TEST_ENV) sh $$b || exit 1; done

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
