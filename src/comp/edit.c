/* edit.c - small helpers the passes share: side-effect queries, fresh
 * names, and a use replacement safe for instructions without users. */
#include "compint.h"

#include <string.h>

static bool comp_has_side_effect(const tr_comp *k, int depth);

static bool side_effect(const tr_instr *in, int depth) {
  if (tr_ops[in->op].flags & TR_OPF_S) return true;
  /* Deeper call chains than this do not occur in real modules; saying
   * "has effects" is the safe answer for a (bad) cyclic one. */
  if (depth > 64) return true;
  tr_comp *called[16];
  int n = tr_instr_called(in, called, 16);
  if (n > 16) return true;
  for (int i = 0; i < n; i++)
    if (comp_has_side_effect(called[i], depth + 1)) return true;
  return false;
}

static bool comp_has_side_effect(const tr_comp *k, int depth) {
  for (int i = 0; i < k->ninstrs; i++)
    if (side_effect(k->instrs[i], depth)) return true;
  return false;
}

bool tr_bc_has_side_effect(const tr_instr *in) { return side_effect(in, 0); }

void tr_bc_replace_uses(tr_instr *old, tr_instr *with) {
  if (old->nusers) {
    tr_instr_replace_uses(old, with);
    return;
  }
  if (old->parent && old->parent->root == old) old->parent->root = with;
}

const char *tr_bc_fresh_name(tr_comp *c, const char *base, const char *tag) {
  /* Rewrites of rewrites would pile up suffixes ("x.s2.s1"): number them
   * all from the original name instead. */
  size_t n = strlen(base), t = strlen(tag), e = n;
  while (e > 0 && base[e - 1] >= '0' && base[e - 1] <= '9') e--;
  if (e < n && e > t + 1 && memcmp(base + e - t, tag, t) == 0 && base[e - t - 1] == '.')
    n = e - t - 1;
  tr_buf b = {0};
  const char *out = NULL;
  for (int k = 1; !out; k++) {
    b.n = 0;
    tr_buf_printf(&b, "%.*s.%s%d", (int)n, base, tag, k);
    if (!tr_comp_find(c, tr_buf_str(&b))) out = tr_arena_strdup(c->module->arena, tr_buf_str(&b));
  }
  tr_buf_free(&b);
  return out;
}
