/* desugar.c - rewrites the evaluators run instead of sugar: async pairs
 * as the synchronous op, and set-dimension-size where its semantics are
 * static (below).
 *
 * Async pairs. `<op>-start` /
 * `<op>-update` / `<op>-done` (all-gather-start, collective-permute-done,
 * copy-start, and the generic sugar around any opcode, such as
 * reduce-scatter-start) split one op into a start that launches it and a
 * done that waits for it. On one device nothing runs concurrently, so the
 * done's value is the op itself on the start's operands: the rewrite
 * replaces each done by that op (same name, the start's operands and
 * attributes) and drops the starts and updates left without users; a
 * start whose tuple is read elsewhere stays and keeps failing cleanly as
 * unsupported. */
#include "build.h"
#include "ir.h"

#include <string.h>

bool tr_async_pair_op(const tr_instr *in, tr_op *base, bool *start) {
  switch (in->op) {
  case TR_OP_ALL_GATHER_START: *base = TR_OP_ALL_GATHER; *start = true; return true;
  case TR_OP_ALL_GATHER_DONE: *base = TR_OP_ALL_GATHER; *start = false; return true;
  case TR_OP_ALL_REDUCE_START: *base = TR_OP_ALL_REDUCE; *start = true; return true;
  case TR_OP_ALL_REDUCE_DONE: *base = TR_OP_ALL_REDUCE; *start = false; return true;
  case TR_OP_COLLECTIVE_PERMUTE_START: *base = TR_OP_COLLECTIVE_PERMUTE; *start = true; return true;
  case TR_OP_COLLECTIVE_PERMUTE_DONE: *base = TR_OP_COLLECTIVE_PERMUTE; *start = false; return true;
  case TR_OP_COPY_START: *base = TR_OP_COPY; *start = true; return true;
  case TR_OP_COPY_DONE: *base = TR_OP_COPY; *start = false; return true;
  case TR_OP_ASYNC_SUGAR: {
    const char *w = in->opname ? in->opname : "";
    size_t n = strlen(w);
    static const char *const sfx[] = {"-start", "-done"};
    for (int i = 0; i < 2; i++) {
      size_t sl = strlen(sfx[i]);
      if (n > sl && strcmp(w + n - sl, sfx[i]) == 0 && tr_op_lookup(w, n - sl, base)) {
        *start = i == 0;
        return true;
      }
    }
    return false;
  }
  default: return false;
  }
}

static bool is_update(const tr_instr *in) {
  const char *w = in->op == TR_OP_ASYNC_SUGAR && in->opname ? in->opname : "";
  size_t n = strlen(w);
  return n > 7 && strcmp(w + n - 7, "-update") == 0;
}

bool tr_module_has_async_pairs(const tr_module *m) {
  for (int c = 0; c < m->ncomps; c++)
    for (int i = 0; i < m->comps[c]->ninstrs; i++) {
      tr_op base;
      bool start;
      if (tr_async_pair_op(m->comps[c]->instrs[i], &base, &start)) return true;
    }
  return false;
}

int tr_desugar_async(tr_module *m) {
  int n = 0;
  for (int c = 0; c < m->ncomps; c++) {
    tr_comp *k = m->comps[c];
    for (int i = 0; i < k->ninstrs; i++) {
      tr_instr *done = k->instrs[i];
      tr_op base, sbase;
      bool start;
      if (!tr_async_pair_op(done, &base, &start) || start || done->noperands != 1) continue;
      tr_instr *s = done->operands[0];
      while (is_update(s) && s->noperands == 1) s = s->operands[0];
      if (!tr_async_pair_op(s, &sbase, &start) || !start || sbase != base) continue;
      /* The op itself: the start's operands and attributes, the done's
       * shape (the op's result). */
      tr_instr *op = tr_instr_new(m, base, done->name, done->shape);
      op->line = done->line;
      op->col = done->col;
      op->attrs = s->attrs;
      op->nattrs = s->nattrs;
      tr_comp_insert_before(k, done, op);
      tr_instr_set_operands(op, s->operands, s->noperands);
      tr_instr_replace_uses(done, op);
      tr_comp_remove(k, done); /* op, named as done was, now sits at i */
      n++;
    }
    /* Starts and updates left without users go too (last first, so an
     * update's removal frees its start). */
    for (int i = k->ninstrs - 1; i >= 0 && n > 0; i--) {
      tr_instr *in = k->instrs[i];
      tr_op base;
      bool start = false;
      bool async = is_update(in) || (tr_async_pair_op(in, &base, &start) && start);
      if (async && in->nusers == 0 && in != k->root) tr_comp_remove(k, in);
    }
  }
  return n;
}

tr_module *tr_async_sync_copy(const tr_module *m) {
  if (!tr_module_has_async_pairs(m)) return NULL;
  tr_module *sync = tr_module_clone(m);
  if (tr_desugar_async(sync) > 0) return sync;
  tr_module_free(sync);
  return NULL;
}

/* ---- set-dimension-size ----
 * set-dimension-size(x, n), dimensions={k} gives x with the dynamic size
 * n in dim k. The elements at index n and past it are padding: XLA's
 * dynamic padder fills them with a reduce's init value before a reduce
 * over k (so a non-identity init counts once per padded slot, as XLA CPU
 * computes: the sum of 1..3 with 5 slots of init 100 and the init itself
 * is 606; n above the bound keeps every element, a negative n none), and
 * get-dimension-size reads n as it is (measured on XLA CPU: 8 and -13 for
 * a bound of 4). Those two users are static: each reduce gets
 * select(iota_k < n, x, init) as its operand and each get-dimension-size
 * becomes n. A dynamic value used any other
 * way (an output, an elementwise op keeping the padding) has no defined
 * padding and is left alone, which the evaluators decline. */

/* Moves in (just appended to c) to just before pos. */
static void move_before(tr_comp *c, tr_instr *in, const tr_instr *pos) {
  int at = -1;
  for (int i = 0; i < c->ninstrs; i++)
    if (c->instrs[i] == pos) at = i;
  if (at < 0 || c->instrs[c->ninstrs - 1] != in) return;
  memmove(&c->instrs[at + 1], &c->instrs[at], sizeof(tr_instr *) * (size_t)(c->ninstrs - 1 - at));
  c->instrs[at] = in;
}

/* Whether set-dimension-size d has static semantics here: x static, the
 * size an s32 scalar, one dim, and every user a reduce over that dim (as
 * one of its inputs) or a get-dimension-size of it. */
static bool sds_static(const tr_instr *d, int64_t *dim) {
  if (d->noperands != 2 || !tr_shape_is_array(d->operands[0]->shape) || d->operands[0]->shape->dynamic ||
      d->operands[1]->shape->dtype != TR_DT_S32 || d->operands[1]->shape->rank != 0 || d->parent->root == d)
    return false;
  int n = 0;
  const int64_t *k = tr_attr_ints(d, TR_ATTR_DIMENSIONS, &n);
  if (n != 1 || k[0] < 0 || k[0] >= d->operands[0]->shape->rank) return false;
  *dim = k[0];
  for (int u = 0; u < d->nusers; u++) {
    const tr_instr *us = d->users[u];
    if (us->op == TR_OP_GET_DIMENSION_SIZE) {
      int m = 0;
      const int64_t *g = tr_attr_ints(us, TR_ATTR_DIMENSIONS, &m);
      if (m != 1 || g[0] != *dim) return false;
      continue;
    }
    if (us->op != TR_OP_REDUCE || us->noperands % 2) return false;
    int nin = us->noperands / 2, m = 0;
    for (int j = nin; j < us->noperands; j++)
      if (us->operands[j] == d) return false; /* an init */
    const int64_t *rd = tr_attr_ints(us, TR_ATTR_DIMENSIONS, &m);
    bool over = false;
    for (int j = 0; j < m; j++) over = over || rd[j] == *dim;
    if (!over) return false;
  }
  return d->nusers > 0;
}

/* select(iota_dim < n, x, broadcast(init)) before pos. */
static tr_instr *sds_masked(tr_comp *c, const tr_instr *d, int64_t dim, tr_instr *init, const tr_instr *pos,
                            tr_buf *why) {
  tr_instr *x = d->operands[0];
  const tr_shape *xs = x->shape;
  tr_instr *s = d->operands[1];
  tr_instr *io = tr_build_begin(c, TR_OP_IOTA, NULL, 0);
  tr_build_int(io, TR_ATTR_IOTA_DIMENSION, dim);
  io = tr_build_end(io, tr_shape_array(c->module->arena, TR_DT_S32, xs->rank, xs->dims), why);
  if (!io) return NULL;
  move_before(c, io, pos);
  tr_instr *sb = tr_build_broadcast(c, s, xs->dims, xs->rank, NULL, why);
  if (!sb) return NULL;
  move_before(c, sb, pos);
  tr_instr *mask = tr_build_compare(c, io, sb, "LT", why);
  if (!mask) return NULL;
  move_before(c, mask, pos);
  tr_instr *ib = tr_build_broadcast(c, init, xs->dims, xs->rank, NULL, why);
  if (!ib) return NULL;
  move_before(c, ib, pos);
  tr_instr *ops[3] = {mask, x, ib};
  tr_instr *sel = tr_build_end(tr_build_begin(c, TR_OP_SELECT, ops, 3), NULL, why);
  if (sel) move_before(c, sel, pos);
  return sel;
}

int tr_desugar_dynamic(tr_module *m) {
  int n = 0;
  tr_buf why = {0};
  for (int ci = 0; ci < m->ncomps; ci++) {
    tr_comp *c = m->comps[ci];
    for (int i = 0; i < c->ninstrs; i++) {
      tr_instr *d = c->instrs[i];
      int64_t dim;
      if (d->op != TR_OP_SET_DIMENSION_SIZE || !sds_static(d, &dim)) continue;
      bool ok = true;
      while (ok && d->nusers > 0) {
        tr_instr *u = d->users[0];
        if (u->op == TR_OP_GET_DIMENSION_SIZE) {
          tr_instr_replace_uses(u, d->operands[1]);
          tr_comp_remove(c, u);
          continue;
        }
        int nin = u->noperands / 2;
        for (int j = 0; ok && j < nin; j++) {
          if (u->operands[j] != d) continue;
          tr_instr *sel = sds_masked(c, d, dim, u->operands[nin + j], u, &why);
          if ((ok = sel != NULL)) tr_instr_replace_operand(u, j, sel);
        }
      }
      if (!ok) continue; /* left for the evaluators to decline */
      tr_comp_remove(c, d);
      i = -1; /* positions moved: look again from the start */
      n++;
    }
  }
  tr_buf_free(&why);
  return n;
}

static bool has_dynamic_sugar(const tr_module *m) {
  for (int c = 0; c < m->ncomps; c++)
    for (int i = 0; i < m->comps[c]->ninstrs; i++)
      if (m->comps[c]->instrs[i]->op == TR_OP_SET_DIMENSION_SIZE) return true;
  return false;
}

tr_module *tr_desugared_copy(const tr_module *m) {
  bool async = tr_module_has_async_pairs(m), dyn = has_dynamic_sugar(m);
  if (!async && !dyn) return NULL;
  tr_module *r = tr_module_clone(m);
  int n = (async ? tr_desugar_async(r) : 0) + (dyn ? tr_desugar_dynamic(r) : 0);
  if (n > 0) return r;
  tr_module_free(r);
  return NULL;
}
