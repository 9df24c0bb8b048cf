/* SPDX-License-Identifier: MIT */
/* sample.c — PERF_RECORD_SAMPLE by sample_type, and the sample_id of the
 * other records (perf_event.h, the comments of enum perf_event_type). */
#include "perf/internal.h"

#include <string.h>

/* read_format bits. */
enum {
    FORMAT_TOTAL_TIME_ENABLED = 1, FORMAT_TOTAL_TIME_RUNNING = 2,
    FORMAT_ID = 4, FORMAT_GROUP = 8, FORMAT_LOST = 16,
};
/* branch_sample_type: PERF_SAMPLE_BRANCH_HW_INDEX adds a u64. */
#define BRANCH_HW_INDEX (1ull << 17)

/* A cursor over a record's bytes: every take checks what is left. */
struct cursor {
    const uint8_t *at;
    size_t left;
    bool ok;
};

static const uint8_t *take(struct cursor *c, uint64_t n)
{
    if (!c->ok || n > c->left) {
        c->ok = false;
        return NULL;
    }
    const uint8_t *p = c->at;
    c->at += n;
    c->left -= n;
    return p;
}

static uint64_t take_u64(struct cursor *c)
{
    const uint8_t *p = take(c, 8);
    return p ? perf_u64_at(p) : 0;
}

/* `count` items of `size` bytes, `count` read from the record. */
static const uint8_t *take_array(struct cursor *c, uint64_t count,
                                 uint64_t size)
{
    if (count > c->left / size) {
        c->ok = false;
        return NULL;
    }
    return take(c, count * size);
}

static unsigned popcount64(uint64_t v)
{
    unsigned n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

static void take_read(struct cursor *c, uint64_t format)
{
    unsigned per_value = 1 + !!(format & FORMAT_ID) + !!(format & FORMAT_LOST);
    unsigned times = !!(format & FORMAT_TOTAL_TIME_ENABLED)
                     + !!(format & FORMAT_TOTAL_TIME_RUNNING);
    if (format & FORMAT_GROUP) {
        uint64_t nr = take_u64(c);
        take(c, 8ull * times);
        take_array(c, nr, 8ull * per_value);
    } else {
        take(c, 8ull * (per_value + times));
    }
}

/* The fields after the callchain that this reader keeps: regs and
 * stack; the rest only skipped. */
static bool take_user(struct cursor *c, const struct perf_attr *attr,
                      struct perf_sample *s, struct perf_diag *diag,
                      uint64_t offset)
{
    uint64_t type = attr->sample_type;
    if (type & PERF_S_REGS_USER) {
        s->regs_abi = take_u64(c);
        s->regs_mask = attr->sample_regs_user;
        if (s->regs_abi)
            s->regs = take(c, 8ull * popcount64(s->regs_mask));
    }
    if (type & PERF_S_STACK_USER) {
        s->stack_size = take_u64(c);
        s->stack = take_array(c, s->stack_size, 1);
        if (s->stack_size) {
            s->stack_dyn_size = take_u64(c);
            if (c->ok && s->stack_dyn_size > s->stack_size)
                return perf_fail(diag, offset, "sample's stack dyn_size "
                                               "exceeds its copy");
        }
    }
    return true;
}

static void take_tail(struct cursor *c, const struct perf_attr *attr)
{
    uint64_t type = attr->sample_type;
    if (type & (PERF_S_WEIGHT | PERF_S_WEIGHT_STRUCT))
        take(c, 8);
    if (type & PERF_S_DATA_SRC)
        take(c, 8);
    if (type & PERF_S_TRANSACTION)
        take(c, 8);
    if (type & PERF_S_REGS_INTR) {
        if (take_u64(c))
            take(c, 8ull * popcount64(attr->sample_regs_intr));
    }
    if (type & PERF_S_PHYS_ADDR)
        take(c, 8);
    if (type & PERF_S_CGROUP)
        take(c, 8);
    if (type & PERF_S_DATA_PAGE_SIZE)
        take(c, 8);
    if (type & PERF_S_CODE_PAGE_SIZE)
        take(c, 8);
    if (type & PERF_S_AUX)
        take_array(c, take_u64(c), 1);
}

static void take_head(struct cursor *c, uint64_t type, struct perf_sample *s)
{
    if (type & PERF_S_IDENTIFIER)
        s->id = take_u64(c);
    if (type & PERF_S_IP)
        s->ip = take_u64(c);
    if (type & PERF_S_TID) {
        const uint8_t *p = take(c, 8);
        if (p) {
            s->pid = perf_u32_at(p);
            s->tid = perf_u32_at(p + 4);
        }
    }
    if (type & PERF_S_TIME)
        s->time = take_u64(c);
    if (type & PERF_S_ADDR)
        s->addr = take_u64(c);
    if (type & PERF_S_ID)
        s->id = take_u64(c);
    if (type & PERF_S_STREAM_ID)
        take(c, 8);
    if (type & PERF_S_CPU) {
        const uint8_t *p = take(c, 8);
        if (p)
            s->cpu = perf_u32_at(p);
    }
    if (type & PERF_S_PERIOD)
        s->period = take_u64(c);
}

bool perf_sample_parse(const struct perf_file *file,
                       const struct perf_record *record,
                       struct perf_sample *s, struct perf_diag *diag)
{
    *s = (struct perf_sample){0};
    if (record->type != PERF_REC_SAMPLE)
        return perf_fail(diag, record->offset, "not a sample");
    const struct perf_attr *attr = perf_record_attr(file, record);
    if (!attr)
        return perf_fail(diag, record->offset, "sample of no known event "
                                               "(its id names none)");
    s->attr = attr;
    uint64_t type = attr->sample_type;
    struct cursor c = {record->data + 8, record->size - 8u, true};
    take_head(&c, type, s);
    if (type & PERF_S_READ)
        take_read(&c, attr->read_format);
    if (type & PERF_S_CALLCHAIN) {
        s->callchain_nr = take_u64(&c);
        s->callchain = take_array(&c, s->callchain_nr, 8);
    }
    if (type & PERF_S_RAW) {
        const uint8_t *p = take(&c, 4);
        if (p)
            take(&c, perf_u32_at(p));
    }
    if (type & PERF_S_BRANCH_STACK) {
        uint64_t nr = take_u64(&c);
        if (attr->branch_sample_type & BRANCH_HW_INDEX)
            take(&c, 8);
        take_array(&c, nr, 24);
    }
    if (!take_user(&c, attr, s, diag, record->offset))
        return false;
    take_tail(&c, attr);
    if (!c.ok)
        return perf_fail(diag, record->offset, "sample's fields run past "
                                               "the end of its record");
    return true;
}

bool perf_sample_reg(const struct perf_sample *sample, unsigned reg,
                     uint64_t *value)
{
    if (!sample->regs || reg >= 64
        || !(sample->regs_mask & ((uint64_t)1 << reg)))
        return false;
    unsigned index = popcount64(sample->regs_mask
                                & (((uint64_t)1 << reg) - 1));
    *value = perf_u64_at(sample->regs + 8ull * index);
    return true;
}

/* ------------------------------------------------------------------ */
/* The attribute of a record                                            */
/* ------------------------------------------------------------------ */

static bool is_kernel_record(uint32_t type)
{
    return type >= PERF_REC_MMAP && type < PERF_REC_ATTR
           && type != PERF_REC_SAMPLE;
}

/* The id a record carries, if its layout has one where it can be found
 * without knowing the attribute: IDENTIFIER first in a sample and last
 * in a sample_id; else ID at its place, which the first attribute's
 * sample_type fixes (perf requires every event to share it then). */
static bool record_id(const struct perf_file *file,
                      const struct perf_record *r, uint64_t *id)
{
    const struct perf_attr *first = &file->attrs[0];
    uint64_t type = first->sample_type;
    if (r->type == PERF_REC_SAMPLE) {
        size_t at = 8;
        if (!(type & PERF_S_IDENTIFIER)) {
            if (!(type & PERF_S_ID))
                return false;
            at += 8 * (!!(type & PERF_S_IP) + !!(type & PERF_S_TID)
                       + !!(type & PERF_S_TIME) + !!(type & PERF_S_ADDR));
        }
        if (r->size < at + 8)
            return false;
        *id = perf_u64_at(r->data + at);
        return true;
    }
    if (!is_kernel_record(r->type) || !first->sample_id_all
        || r->size < 8 + first->id_size)
        return false;
    size_t at = r->size - first->id_size;
    if (type & PERF_S_IDENTIFIER)
        at = r->size - 8u;
    else if (type & PERF_S_ID)
        at += 8 * (!!(type & PERF_S_TID) + !!(type & PERF_S_TIME));
    else
        return false;
    *id = perf_u64_at(r->data + at);
    return true;
}

const struct perf_attr *perf_record_attr(const struct perf_file *file,
                                         const struct perf_record *record)
{
    if (file->nattrs == 1)
        return &file->attrs[0];
    uint64_t id;
    if (!record_id(file, record, &id))
        return NULL;
    for (size_t i = 0; i < file->nattrs; i++)
        for (size_t j = 0; j < file->attrs[i].nids; j++)
            if (perf_u64_at(&file->attrs[i].ids[j]) == id)
                return &file->attrs[i];
    return NULL;
}

bool perf_record_sample_id(const struct perf_file *file,
                           const struct perf_record *record,
                           struct perf_sample_id *id)
{
    *id = (struct perf_sample_id){0};
    if (!is_kernel_record(record->type))
        return false;
    const struct perf_attr *attr = perf_record_attr(file, record);
    if (!attr || !attr->sample_id_all || record->size < 8 + attr->id_size)
        return false;
    const uint8_t *p = record->data + record->size - attr->id_size;
    if (attr->sample_type & PERF_S_TID) {
        id->pid = perf_u32_at(p);
        id->tid = perf_u32_at(p + 4);
        p += 8;
    }
    if (attr->sample_type & PERF_S_TIME) {
        id->time = perf_u64_at(p);
        id->time_known = true;
    }
    return true;
}
