/* emit.h - the built-in compiler's C emitter: turns an (optimized,
 * verified) module into one C translation unit that computes exactly what
 * the reference interpreter computes (docs/EMITTER.md). One C function per
 * non-fused array op and per loop fusion, one per called computation;
 * elementwise loops run in fixed-width lane chunks with a masked tail;
 * reductions and dots loop over tiles of outputs. */
#ifndef TR_COMP_EMIT_H
#define TR_COMP_EMIT_H

#include "../ir/ir.h"
#include "defects.h"

/* The function every emitted unit exports:
 *   int trench_entry(unsigned char **in, unsigned char **out);
 * in[]: the entry parameters' array leaves in order (depth-first in
 * tuples, tokens skipped), as raw tensor storage (tensor.h); out[]: the
 * root's array leaves, preallocated by the caller. Returns 0, or 1 when a
 * buffer could not be allocated. */
#define TR_EMIT_ENTRY "trench_entry"

/* The most array leaves an instruction's shape, the entry's parameters
 * or its result may have (a step function returning every weight of a
 * ResNet-50 has 321). */
#define TR_EMIT_MAX_LEAVES 1024 /* (emit.c's messages spell it) */

typedef struct {
  int lanes;            /* lane chunk width of elementwise loops (>= 1) */
  int tile;             /* outputs per tile of reductions and dots (>= 1) */
  bool fuse_loops;      /* a loop fusion of elementwise ops becomes one
                           loop nest (else its computation is called) */
  bool test_crash;      /* tests only: the entry stores through NULL, so
                           the worker's CRASH verdict can be checked */
  uint64_t inject;      /* emitter defects to plant: TR_DEFECT_BIT set
                           (defects.h); 0 = none */
} tr_emit_opts;

/* lanes 8, tile 16, fuse_loops on. */
void tr_emit_opts_init(tr_emit_opts *o);

/* Appends m's translation unit to out. An op or element type the emitter
 * does not handle is TR_ERR_UNSUPPORTED with a diagnostic
 * "unsupported: OPCODE in builtin" located at the instruction; nothing
 * else fails on a verified module. */
tr_status tr_emit_c(const tr_module *m, const tr_emit_opts *o, tr_buf *out,
                    tr_diag *d);

/* Whether the emitter handles op at all (for some element types). */
bool tr_emit_supports(tr_op op);

/* The fixed C text (helpers every kernel may call) that starts each
 * translation unit (emit_prelude.c): the helper functions that uses (the
 * unit's own code) calls, directly or through other helpers, or all of
 * them when uses is NULL. */
void tr_emit_prelude(tr_buf *out, const char *uses);

#endif
