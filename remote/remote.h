/* SPDX-License-Identifier: MIT */
/* remote.h — unwinding the stack of another process, from outside.
 *
 * The process is described by an address space (struct remote_space): a
 * table of the objects it has mapped, each mapping [start, end) of a file
 * at a file offset, added one by one as /proc/PID/maps, a core's NT_FILE
 * note or perf's MMAP2 records name them. A mapping added over others
 * replaces the part of them it covers, as mmap does.
 *
 * Each file is opened once, when a frame first needs it (never per
 * sample): its struct cfi_file, its symbols and its engines stay with the
 * space until remote_space_free. A file that cannot be opened is
 * remembered as such, with the reason, and not tried again. The load
 * bias of a mapping is computed from the file's PT_LOAD segments and the
 * mapping's file offset: the address `start` holds the byte at `offset`
 * of the file, which a segment maps at link-time address vaddr +
 * (offset - p_offset).
 *
 * remote_unwind steps frame by frame through engines/ (engine.h): for
 * each frame it finds the mapping that holds the lookup PC, asks the
 * engine opened for that mapping's file with a struct cfi_request whose
 * pc is the link-time address (the PC less the load bias); registers and
 * memory stay absolute. A frame that is not exact (a return address: not
 * the innermost frame, not the frame above a signal frame) is a
 * caller_frame: it is looked up at PC-1 (cfi.h, step 1). The default
 * engine is the compiled one, an eh_elf from the cache (engine_config's
 * cache_dir, as `cfisem unwind --engine compiled` gets it), and interp
 * when an object's eh_elf cannot be had; any engine of engine.h can be
 * chosen instead.
 *
 * Every stack ends with a reason (enum remote_stop_reason), never none.
 *
 * The architecture is the space's (remote_space_new): its PC and SP
 * registers name the frame's; a file of another architecture stops the
 * walk with a CFI error. Stacks grow down on every architecture cfisem
 * knows (x86-64, AArch64): a caller's CFA above its callee's.
 *
 * A space is not shared between threads.
 */
#ifndef CFISEM_REMOTE_REMOTE_H
#define CFISEM_REMOTE_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cfi/cfi.h"
#include "engines/engine.h"

/* ------------------------------------------------------------------ */
/* Why a stack ended                                                    */
/* ------------------------------------------------------------------ */

#define REMOTE_STOP_LIST(X)                                                 \
    X(REMOTE_STOP_OUTERMOST, outermost,                                     \
      "outermost frame (return address undefined or 0)")                   \
    X(REMOTE_STOP_MEMORY, memory, "stack memory unreadable")               \
    X(REMOTE_STOP_STACK_COPY_EXHAUSTED, stack_copy_exhausted,              \
      "stack copy exhausted")                                               \
    X(REMOTE_STOP_NO_OBJECT, no_object, "no object mapped at the PC")      \
    X(REMOTE_STOP_NO_FILE, no_file, "the object's file cannot be opened")  \
    X(REMOTE_STOP_NO_CFI, no_cfi, "no CFI for the PC")                     \
    X(REMOTE_STOP_CFI_ERROR, cfi_error, "CFI or expression error")         \
    X(REMOTE_STOP_NOT_COMPARABLE, not_comparable,                          \
      "the engine cannot be asked this frame")                              \
    X(REMOTE_STOP_LOOP, loop, "loop (the CFA does not grow)")              \
    X(REMOTE_STOP_MAX_FRAMES, max_frames, "frame limit reached")

enum remote_stop_reason {
#define REMOTE_STOP_ENUM(name, short, text) name,
    REMOTE_STOP_LIST(REMOTE_STOP_ENUM)
#undef REMOTE_STOP_ENUM
    REMOTE_STOP_COUNT
};

/* "outermost", "stack_copy_exhausted": for JSON and summaries. */
const char *remote_stop_name(enum remote_stop_reason reason);
/* A fixed text: "stack memory unreadable". */
const char *remote_stop_text(enum remote_stop_reason reason);

/* How a stack ended. `pc` is the PC of the last frame (the one that could
 * not be unwound, or whose caller is the end). `diag` says more for
 * NO_FILE (why the file did not open), NO_CFI, CFI_ERROR, MEMORY and
 * NOT_COMPARABLE (the engine's diagnostic or reason, a fixed string);
 * `object` is the path of the file at pc, or NULL (valid while the
 * space lives). */
struct remote_stop {
    enum remote_stop_reason reason;
    uint64_t pc;
    const char *object;
    struct cfi_diag diag;
};

/* ------------------------------------------------------------------ */
/* The address space                                                    */
/* ------------------------------------------------------------------ */

/* One mapping, as the caller gives it. `path` is copied. `build_id`
 * (may be NULL) is copied too: the bytes of the GNU build-id the
 * mapping's file had in the process; a file opened for it whose build-id
 * differs is refused (NO_FILE, "build-id differs"). */
#define REMOTE_BUILD_ID_MAX 64
struct remote_map {
    uint64_t start;
    uint64_t end;          /* one past the last byte */
    uint64_t offset;       /* file offset of the byte at `start` */
    const char *path;
    const uint8_t *build_id;
    size_t build_id_len;   /* 0 .. REMOTE_BUILD_ID_MAX */
};

struct remote_options {
    /* The engine remote_unwind uses when its caller gives ENGINE_COUNT:
     * ENGINE_compiled unless set. */
    enum engine_id engine;
    /* compiled: the eh_elf cache (NULL: cg_cached_eh_elf's default). */
    const char *cache_dir;
    /* compiled: interp for an object whose eh_elf cannot be had (true
     * when the options are NULL). */
    bool fallback_interp;
};

struct remote_space;

/* A new empty space for processes of architecture `arch`; `options` may
 * be NULL (the compiled engine, falling back to interp, the default
 * cache). The options' strings must outlive the space. CFI_E_NOMEM. */
enum cfi_status remote_space_new(const struct cfi_arch *arch,
                                 const struct remote_options *options,
                                 struct remote_space **space);
void remote_space_free(struct remote_space *space);

/* Adds a mapping to the space's own table (see remote_maps below); it
 * replaces what other mappings held in [start, end). A mapping with
 * end <= start is refused (CFI_E_MALFORMED); CFI_E_NOMEM. */
enum cfi_status remote_space_add_map(struct remote_space *space,
                                     const struct remote_map *map);
/* As remote_space_add_map, but the object's bytes are read from the file
 * `file` (copied), and map->path only names it: the vDSO, "[vdso]",
 * read from a copy of its bytes. */
enum cfi_status remote_space_add_map_from(struct remote_space *space,
                                          const struct remote_map *map,
                                          const char *file);
/* Removes whatever the space's own table maps in [start, end), as
 * munmap does. */
enum cfi_status remote_space_remove(struct remote_space *space,
                                    uint64_t start, uint64_t end);
/* The number of mappings of the space's own table (after splits). */
size_t remote_space_map_count(const struct remote_space *space);

/* What a space knows about the object at an address. */
struct remote_place {
    const char *path;      /* the mapping's file, NULL: nothing mapped */
    uint64_t bias;         /* address - link-time address */
    bool bias_known;       /* the file opened and a segment holds offset */
    uint64_t rel;          /* the link-time address (addr - bias) */
};

/* Where `addr` is: its mapping's file and, once that file is opened
 * (this opens it, once), its load bias. False when nothing is mapped. */
bool remote_space_place(struct remote_space *space, uint64_t addr,
                        struct remote_place *place);

/* The mappings of one process, over a space's objects. A caller that
 * unwinds samples of many processes in turn (perf's) keeps one table
 * per process and switches to it (remote_space_use: constant time),
 * where loading the mappings into the space again would cost per
 * mapping; the objects, their files and engines stay the space's,
 * shared by every table. A table is freed before its space. */
struct remote_maps;

/* A new empty table of `space`'s objects. CFI_E_NOMEM. */
enum cfi_status remote_maps_new(struct remote_space *space,
                                struct remote_maps **maps);
/* Frees a table; when the space uses it, it uses its own again. */
void remote_maps_free(struct remote_maps *maps);
/* As remote_space_add_map and remote_space_remove, on the table. */
enum cfi_status remote_maps_add(struct remote_maps *maps,
                                const struct remote_map *map);
enum cfi_status remote_maps_remove(struct remote_maps *maps, uint64_t start,
                                   uint64_t end);
/* The mappings remote_unwind, remote_space_place and remote_symbolize
 * look in from now on: `maps` (of this space), or the space's own
 * (remote_space_add_map's) when NULL. */
void remote_space_use(struct remote_space *space, struct remote_maps *maps);

/* ------------------------------------------------------------------ */
/* Memory                                                               */
/* ------------------------------------------------------------------ */

enum remote_read_result {
    REMOTE_READ_OK,
    REMOTE_READ_UNREADABLE,          /* not mapped or not readable */
    REMOTE_READ_STACK_COPY_EXHAUSTED /* beyond a copied stack (perf) */
};

/* Reads `size` bytes (1, 2, 4 or 8), little-endian, at `addr` of the
 * process into *value (zero-extended). */
typedef enum remote_read_result (*remote_read_fn)(void *data, uint64_t addr,
                                                  unsigned size,
                                                  uint64_t *value);

/* ------------------------------------------------------------------ */
/* Unwinding                                                            */
/* ------------------------------------------------------------------ */

/* One frame of a stack. `pc` is absolute; `exact` says it is the address
 * of the instruction that was executing (the innermost frame, the frame
 * above a signal frame), else it is a return address, looked up at PC-1.
 * `cfa` is the frame's canonical frame address, 0 when the frame was not
 * unwound (the last frame, when the walk stopped at it). `sp` is the
 * stack pointer's value, 0 when unknown. `engine` is the engine that
 * unwound the frame (interp when compiled fell back), ENGINE_COUNT when
 * none did. `lost` has bit r set when the caller's register r is
 * unknown only because its saved value could not be read (a slot below
 * the copied stack, an unreadable page): the CFA and the caller's PC did
 * not need it, so the walk went on without it (registers 0..63). */
struct remote_frame {
    uint64_t pc;
    uint64_t sp;
    uint64_t cfa;
    bool exact;
    bool signal_frame;     /* the frame's FDE is a signal frame's ('S') */
    enum engine_id engine;
    uint64_t lost;
};

/* Sets a register file from values indexed by DWARF number: register i
 * is a value when bit i of `known` is set, else unknown (registers 0..63;
 * the others unknown, their values not set). */
void remote_regs_from_mask(struct cfi_regs *regs, const uint64_t *values,
                           uint64_t known);

/* Unwinds the stack whose innermost frame has registers `regs` (absolute;
 * a register whose status is not CFI_REG_VALUE is not known): fills
 * frames[0 .. *nframes) (at most max_frames, the innermost first) and
 * *stop. Only the architecture's registers (0 .. arch->nreported - 1,
 * those a thread's state has) are read from `regs`; the others are
 * unknown. `pc_is_exact`: the innermost PC is the instruction that was
 * executing (true for a stopped thread, a core's, a sample's), else a
 * return address. `engine` is the engine to ask (ENGINE_COUNT: the
 * space's option). Memory is read through `read` with `data`. Returns
 * the number of frames. */
size_t remote_unwind(struct remote_space *space, const struct cfi_regs *regs,
                     bool pc_is_exact, remote_read_fn read, void *data,
                     enum engine_id engine, struct remote_frame *frames,
                     size_t max_frames, struct remote_stop *stop);

/* ------------------------------------------------------------------ */
/* Threads                                                              */
/* ------------------------------------------------------------------ */

/* A thread of a stopped process (proc.h) or of a core (core.h): its id
 * and its registers as DWARF numbers (x86-64: rax .. r15, rip; AArch64:
 * x0 .. x30, sp, the PC). `regs_known` is false when they could not be
 * read (a thread that ended meanwhile, a host whose ptrace this code
 * does not speak); `regs` then has no value. */
struct remote_thread {
    pid_t tid;
    bool regs_known;
    struct cfi_regs regs;
};

/* ------------------------------------------------------------------ */
/* Symbols                                                              */
/* ------------------------------------------------------------------ */

/* A frame's place (its strings valid while the space lives): its
 * object's path (NULL: no object), the function holding its lookup PC
 * (NULL: none known) and the PC's offset in it (pc - the function's
 * start: a return address may lie just past its function's end), the
 * link-time address. */
struct remote_symbol {
    const char *object;
    const char *name;
    uint64_t offset;
    uint64_t rel;
};

/* Symbolises a frame from its object's .symtab and .dynsym
 * (cfi_file_functions, cfi_symbol_find), or from its separate debug
 * file's (/usr/lib/debug/.build-id/NN/REST.debug) when that names more
 * functions; read once per file. */
void remote_symbolize(struct remote_space *space,
                      const struct remote_frame *frame,
                      struct remote_symbol *symbol);

#endif
