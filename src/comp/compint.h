/* compint.h - what the passes of the built-in compiler share inside
 * src/comp: the pass signature, the passes, and small IR-building helpers
 * that the IR layer does not offer. */
#ifndef TR_COMPINT_H
#define TR_COMPINT_H

#include "pipeline.h"

/* A pass rewrites m in place and sets *changed when it changed anything.
 * Rewrites go through tr_bc_fire so that disabling and fuel apply. */
typedef tr_status (*tr_pass_fn)(tr_bc_ctx *c, tr_module *m, bool *changed, tr_diag *d);

tr_status tr_pass_simplify(tr_bc_ctx *c, tr_module *m, bool *changed, tr_diag *d);
tr_status tr_pass_cse(tr_bc_ctx *c, tr_module *m, bool *changed, tr_diag *d);
tr_status tr_pass_dce(tr_bc_ctx *c, tr_module *m, bool *changed, tr_diag *d);
tr_status tr_pass_constfold(tr_bc_ctx *c, tr_module *m, bool *changed, tr_diag *d);
tr_status tr_pass_whilesimp(tr_bc_ctx *c, tr_module *m, bool *changed, tr_diag *d);
tr_status tr_pass_fusion(tr_bc_ctx *c, tr_module *m, bool *changed, tr_diag *d);

/* Whether an instruction must stay even when nothing uses its value: it
 * talks to the outside (TR_OPF_S), or a computation it calls does. */
bool tr_bc_has_side_effect(const tr_instr *in);

/* tr_instr_replace_uses, safe for an instruction without users (the root):
 * the IR call memcpy's from a NULL user list then, which UBSan rejects. */
void tr_bc_replace_uses(tr_instr *old, tr_instr *with);

/* A name not yet used in c, made from base and a numbered suffix
 * ("x.s1", "x.s2", ...), allocated in the module arena. */
const char *tr_bc_fresh_name(tr_comp *c, const char *base, const char *tag);

/* A copy of src (op, shape or the given one, literal, parameter number,
 * attributes; never control-predecessors) named name, inserted into dst
 * before pos (appended when pos is NULL), with operands ops. dst may be in
 * another module: attribute values and the literal are shared, not copied,
 * so src's module must outlive the copy, and called computations still
 * name src's (the caller remaps them). In whilesimp.c. */
tr_instr *tr_bc_copy_instr(tr_comp *dst, tr_instr *pos, const tr_instr *src, const char *name,
                             tr_shape *shape, tr_instr **ops, int n);

/* base when c has no instruction of that name, else base.1, base.2, ...
 * (XLA's style); in the module arena. In whilesimp.c. */
const char *tr_bc_unique_name(tr_comp *c, const char *base);
/* The same for computation names in m. In whilesimp.c. */
const char *tr_module_unique_comp_name(tr_module *m, const char *base);

/* tr_comp_new, placed just before caller in m->comps, which keeps the
 * list callees-first (DCE drops dead computations last-first, and must
 * meet a caller before what it calls). In whilesimp.c. */
tr_comp *tr_bc_new_before(tr_module *m, const char *name, const tr_comp *caller);

#endif
