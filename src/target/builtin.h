/* builtin.h - the builtin target (builtin.c): trench's own
 * compiler behind the target interface. Runs the pass pipeline on a clone
 * of the module, emits C (emit.h), compiles and runs it (jit.h). Opened through tr_target_open("builtin[:OPTION,...]"); OPTIONs are
 *   fuel=N            stop rewriting after N applications (-1: unlimited)
 *   disable=NAME      skip a pass or rule (repeatable), as --disable
 *   lanes=N, tile=N   the emitter's lane width and output tile
 *   nofuse            call loop fusions' computations instead of one loop
 *   jit=cc|tcc        who compiles the C: cc (default, -O2, a .so) or
 *                     libtcc in memory (fast compile, slower code)
 *   cc=PROGRAM, cflags=FLAGS   the C compiler (flags blank-separated)
 *   nocache           neither the memory nor the disk cache
 *   crash-test        every kernel stores through NULL (tests only)
 * tr_run_opts.disable_passes adds to the disabled names per run. */
#ifndef TR_TARGET_BUILTIN_H
#define TR_TARGET_BUILTIN_H

#include "../comp/jit.h"
#include "../comp/pipeline.h"
#include "target.h"

typedef struct {
  int64_t fuel;            /* rewrite applications; -1 unlimited */
  const char *const *disable; /* pass or rule names */
  int ndisable;
  tr_emit_opts emit;       /* emitter options */
  tr_jit_opts jit;         /* compiler and caches */
} tr_builtin_config;

void tr_builtin_config_init(tr_builtin_config *c);
/* Opens the target from its spec "builtin[:OPTION,...]". */
tr_status tr_builtin_open(const char *spec, const tr_target_config *cfg,
                          tr_target **out, tr_diag *d);
/* The same from a config (copied); cfg may be NULL. */
tr_status tr_builtin_open_config(const tr_builtin_config *bc,
                                 const tr_target_config *cfg,
                                 tr_target **out, tr_diag *d);
/* A compilation context as a run of t would start it (fuel, disabled
 * names, planted defects), for callers that run the pipeline themselves
 * (translation validation in src/triage). Initializes c; false when t is
 * not a builtin target. */
bool tr_builtin_comp_ctx(const tr_target *t, tr_bc_ctx *c, tr_diag *d);

#endif
