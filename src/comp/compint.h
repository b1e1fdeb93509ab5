/* compint.h - what the passes of the built-in compiler share inside
 * src/comp: the pass signature, the passes, and small IR-building helpers
 * that the IR layer does not offer. */
#ifndef TR_COMPINT_H
#define TR_COMPINT_H

#include "pipeline.h"

/* A pass rewrites m in place and sets *changed when it changed anything.
 * Rewrites go through tr_comp_fire so that disabling and fuel apply. */
typedef tr_status (*tr_pass_fn)(tr_comp_ctx *c, tr_module *m, bool *changed, tr_diag *d);

tr_status tr_pass_simplify(tr_comp_ctx *c, tr_module *m, bool *changed, tr_diag *d);
tr_status tr_pass_cse(tr_comp_ctx *c, tr_module *m, bool *changed, tr_diag *d);
tr_status tr_pass_dce(tr_comp_ctx *c, tr_module *m, bool *changed, tr_diag *d);

/* Whether an instruction must stay even when nothing uses its value: it
 * talks to the outside (TR_OPF_S), or a computation it calls does. */
bool tr_comp_has_side_effect(const tr_instr *in);

/* tr_instr_replace_uses, safe for an instruction without users (the root):
 * the IR call memcpy's from a NULL user list then, which UBSan rejects. */
void tr_comp_replace_uses(tr_instr *old, tr_instr *with);

/* A name not yet used in c, made from base and a numbered suffix
 * ("x.s1", "x.s2", ...), allocated in the module arena. */
const char *tr_comp_fresh_name(tr_comp *c, const char *base, const char *tag);

#endif
