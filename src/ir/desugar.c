/* desugar.c - async pairs as the synchronous op. `<op>-start` /
 * `<op>-update` / `<op>-done` (all-gather-start, collective-permute-done,
 * copy-start, and the generic sugar around any opcode, such as
 * reduce-scatter-start) split one op into a start that launches it and a
 * done that waits for it. On one device nothing runs concurrently, so the
 * done's value is the op itself on the start's operands: the rewrite
 * replaces each done by that op (same name, the start's operands and
 * attributes) and drops the starts and updates left without users; a
 * start whose tuple is read elsewhere stays and keeps failing cleanly as
 * unsupported. */
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
