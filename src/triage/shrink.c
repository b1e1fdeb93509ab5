/* shrink.c - the reducer's structural moves (reduce.c judges them):
 *   inline   a call by its body; a conditional by the branch the
 *            reference takes on the current inputs; a while loop by one
 *            trip of its body (dropping the loop is reduce.c's forward of
 *            its init)
 *   shrink   a dimension of the parameters of one shape made 1 or half
 *            (inputs and constants of that shape cut to their first
 *            rows), every other shape re-inferred
 *   narrow   a dtype made narrower everywhere (f64 -> f32, s64 -> s32,
 *            u64 -> u32, c128 -> c64), inputs and constants converted
 * Each returns a new module, or NULL when the move does not apply; a
 * module that does not verify is refused later by the judge. */
#include "triageint.h"
#include "../comp/compint.h"
#include "../eval/eval.h"

#include <stdlib.h>
#include <string.h>

static tr_instr *by_id(const tr_comp *e, int id) {
  for (int i = 0; i < e->ninstrs; i++)
    if (e->instrs[i]->id == id) return e->instrs[i];
  return NULL;
}

/* Copies body before pos in e, its parameter read as arg; returns the
 * copy of its root. */
static tr_instr *inline_body(tr_module *x, tr_comp *e, tr_instr *pos, const tr_comp *body, tr_instr *arg) {
  tr_instr **map = tr_xcalloc((size_t)x->next_id + 1, sizeof *map);
  tr_instr **ops = NULL;
  int capops = 0;
  for (int i = 0; i < body->ninstrs; i++) {
    tr_instr *b = body->instrs[i];
    if (b->op == TR_OP_PARAMETER) {
      map[b->id] = arg;
      continue;
    }
    if (b->noperands > capops) {
      capops = b->noperands;
      ops = tr_xrealloc(ops, sizeof *ops * (size_t)capops);
    }
    for (int k = 0; k < b->noperands; k++) ops[k] = map[b->operands[k]->id];
    map[b->id] = tr_bc_copy_instr(e, pos, b, tr_bc_unique_name(e, b->name), NULL, ops, b->noperands);
  }
  tr_instr *root = map[body->root->id];
  tr_free(map);
  tr_free(ops);
  return root;
}

/* Which computation of a call-like instruction to inline, and its
 * argument: call (one parameter only), conditional (the branch taken on
 * ins), while (the body, once). */
static const tr_comp *callee(const tr_module *m, const tr_instr *in, tr_tensor *const *ins, int nins, int *argi) {
  *argi = 0;
  if (in->op == TR_OP_CALL) {
    const tr_comp *c = tr_attr_comp(in, TR_ATTR_TO_APPLY);
    return c && c->nparams == 1 && in->noperands == 1 ? c : NULL;
  }
  if (in->op == TR_OP_WHILE) {
    const tr_comp *c = tr_attr_comp(in, TR_ATTR_BODY);
    return c && c->nparams == 1 && in->noperands == 1 ? c : NULL;
  }
  if (in->op != TR_OP_CONDITIONAL || in->noperands < 2) return NULL;
  int id = in->operands[0]->id;
  tr_tensor **v = NULL;
  int nv = 0;
  tr_diag dd = {0};
  tr_status st = tg_ref_values(m, &id, 1, ins, nins, &v, &nv, &dd);
  tr_diag_clear(&dd);
  const tr_comp *c = NULL;
  if (st == TR_OK && nv == 1 && tr_tensor_count(v[0]) == 1) {
    int64_t k = tr_tensor_get_i(v[0], 0);
    tr_attr *br = tr_instr_attr(in, TR_ATTR_BRANCH_COMPUTATIONS);
    if (v[0]->dtype == TR_DT_PRED) {
      c = tr_attr_comp(in, k ? TR_ATTR_TRUE_COMPUTATION : TR_ATTR_FALSE_COMPUTATION);
      *argi = k ? 1 : 2;
    } else if (br && br->n > 0) {
      if (k < 0 || k >= br->n) k = br->n - 1; /* XLA: out of range takes the last */
      c = br->u.comps[k];
      *argi = 1 + (int)k;
    }
  }
  tr_eval_free_outputs(v, nv);
  if (c && (c->nparams != 1 || *argi >= in->noperands)) c = NULL;
  return c;
}

tr_module *tg_move_inline(const tr_module *m, int id, tr_tensor *const *ins, int nins) {
  const tr_instr *in = by_id(m->entry, id);
  int argi = 0;
  const tr_comp *c = in ? callee(m, in, ins, nins, &argi) : NULL;
  if (!c) return NULL;
  tr_module *x = tr_module_clone(m);
  tr_comp *e = x->entry;
  tr_instr *xi = by_id(e, id);
  const tr_comp *xc = tr_module_find_comp(x, c->name);
  tr_instr *root = xc ? inline_body(x, e, xi, xc, xi->operands[argi]) : NULL;
  if (!root) {
    tr_module_free(x);
    return NULL;
  }
  tr_bc_replace_uses(xi, root);
  if (e->root == xi) e->root = root;
  tr_drop_entry_layout(x);
  tg_dce(x);
  return x;
}

/* ---- shrink ---- */

/* The first n of dims[k] rows of row-major data of element size es. */
static void *cut_rows(const void *data, int rank, const int64_t *dims, int k, int64_t n, size_t es) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < k; i++) outer *= dims[i];
  for (int i = k + 1; i < rank; i++) inner *= dims[i];
  size_t row = (size_t)inner * es;
  char *out = tr_xmalloc((size_t)(outer * n) * row + 1);
  for (int64_t o = 0; o < outer; o++)
    memcpy(out + (size_t)(o * n) * row, (const char *)data + (size_t)(o * dims[k]) * row, (size_t)n * row);
  return out;
}

static bool dims_equal(const tr_shape *a, int rank, const int64_t *dims) {
  if (!tr_shape_is_array(a) || a->rank != rank) return false;
  for (int i = 0; i < rank; i++)
    if (a->dims[i] != dims[i]) return false;
  return true;
}

/* The end of a move that changes shapes: the candidate with its inputs,
 * or NULL (both freed) when building either failed. */
static tr_module *finish_move(tr_module *x, tr_tensor **v, int nins, bool ok, tr_tensor ***outs) {
  if (!ok) {
    tr_inputs_free(v, nins);
    tr_module_free(x);
    return NULL;
  }
  tr_drop_entry_layout(x);
  *outs = v;
  return x;
}

tr_module *tg_move_shrink(const tr_module *m, int pi, int k, int64_t n, tr_tensor *const *ins, int nins,
                          tr_tensor ***outs) {
  const tr_comp *e0 = m->entry;
  *outs = NULL;
  /* Inputs are the parameters' leaves: one each only for array ones. */
  if (pi >= e0->nparams || e0->nparams != nins) return NULL;
  for (int i = 0; i < e0->nparams; i++)
    if (!tr_shape_is_array(e0->params[i]->shape)) return NULL;
  const tr_shape *s = e0->params[pi]->shape;
  if (!tr_shape_is_array(s) || k >= s->rank || s->dims[k] <= n || n < 1) return NULL;
  int rank = s->rank;
  int64_t old[TR_TENSOR_MAX_RANK], nu[TR_TENSOR_MAX_RANK];
  if (rank > TR_TENSOR_MAX_RANK) return NULL;
  memcpy(old, s->dims, sizeof *old * (size_t)rank);
  memcpy(nu, old, sizeof *nu * (size_t)rank);
  nu[k] = n;
  tr_module *x = tr_module_clone(m);
  tr_comp *e = x->entry;
  tr_tensor **v = tr_xcalloc((size_t)nins + 2, sizeof *v);
  bool ok = true;
  for (int i = 0; i < nins && ok; i++) {
    const tr_tensor *t = ins[i];
    if (i < e->nparams && dims_equal(e->params[i]->shape, rank, old) && t->rank == rank) {
      tr_diag dd = {0};
      v[i] = tr_tensor_new(t->dtype, rank, nu, &dd);
      tr_diag_clear(&dd);
      if (!v[i]) {
        ok = false;
        break;
      }
      size_t es = (size_t)tr_dtype_size(t->dtype);
      void *cut = cut_rows(t->data, rank, t->dims, k, n, es);
      memcpy(v[i]->data, cut, v[i]->nbytes);
      tr_free(cut);
    } else {
      v[i] = tr_tensor_clone(t);
      ok = v[i] != NULL;
    }
  }
  tr_buf why = {0};
  for (int i = 0; i < e->ninstrs && ok; i++) {
    tr_instr *in = e->instrs[i];
    tr_shape *sh;
    if (in->op == TR_OP_PARAMETER) {
      if (!dims_equal(in->shape, rank, old)) continue;
      sh = tr_shape_array(x->arena, in->shape->dtype, rank, nu);
    } else {
      why.n = 0;
      sh = tr_infer_shape(x->arena, in, &why);
      if (!sh) {
        ok = false;
        break;
      }
      /* Declared shapes (broadcast, iota, reshape, constants) of the old
       * dims follow the parameters. */
      if (dims_equal(sh, rank, old)) {
        sh = tr_shape_array(x->arena, sh->dtype, rank, nu);
        if (in->op == TR_OP_CONSTANT) {
          tr_literal *lit = in->literal;
          if (!lit || !lit->data || lit->elided || lit->single) {
            ok = false;
            break;
          }
          tr_literal *nl = tr_arena_alloc(x->arena, sizeof *nl);
          *nl = *lit;
          nl->shape = sh;
          size_t es = (size_t)tr_dtype_size(sh->dtype);
          void *cut = cut_rows(lit->data, rank, old, k, n, es);
          nl->data = tr_arena_memdup(x->arena, cut, (size_t)tr_shape_count(sh) * es + 1);
          tr_free(cut);
          in->literal = nl;
        }
      }
    }
    in->shape = sh;
  }
  tr_free(why.p);
  return finish_move(x, v, nins, ok, outs);
}

/* ---- narrow ---- */

static const tr_dtype narrow_from[] = {TR_DT_F64, TR_DT_S64, TR_DT_U64, TR_DT_C128};
static const tr_dtype narrow_to[] = {TR_DT_F32, TR_DT_S32, TR_DT_U32, TR_DT_C64};
enum { NNARROW = sizeof narrow_from / sizeof narrow_from[0] };

int tg_narrow_count(void) { return NNARROW; }

/* Whether shape s (tuples included) holds dtype a; with set, makes it b. */
static bool shape_has(tr_shape *s, tr_dtype a, tr_dtype b, bool set) {
  if (!s) return false;
  bool has = false;
  if (s->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < s->nelems; i++) has |= shape_has(s->elems[i], a, b, set);
    return has;
  }
  if (s->dtype != a) return false;
  if (set) s->dtype = b;
  return true;
}

/* A tensor of dtype b holding t's values (ints keep their low bits). */
static tr_tensor *convert_tensor(const tr_tensor *t, tr_dtype b) {
  tr_diag dd = {0};
  tr_tensor *o = tr_tensor_new(b, t->rank, t->dims, &dd);
  tr_diag_clear(&dd);
  if (!o) return NULL;
  size_t n = tr_tensor_count(t);
  for (size_t i = 0; i < n; i++) {
    if (tr_dtype_is_float(b)) {
      tr_tensor_set_f(o, i, tr_tensor_get_f(t, i));
    } else if (tr_dtype_is_int(b)) {
      tr_tensor_set_i(o, i, tr_tensor_get_i(t, i));
    } else {
      double re, im;
      tr_tensor_get_c(t, i, &re, &im);
      tr_tensor_set_c(o, i, re, im);
    }
  }
  return o;
}

tr_module *tg_move_narrow(const tr_module *m, int which, tr_tensor *const *ins, int nins, tr_tensor ***outs) {
  *outs = NULL;
  if (which < 0 || which >= NNARROW) return NULL;
  tr_dtype a = narrow_from[which], b = narrow_to[which];
  bool any = false;
  for (int c = 0; c < m->ncomps && !any; c++)
    for (int i = 0; i < m->comps[c]->ninstrs && !any; i++) any = shape_has(m->comps[c]->instrs[i]->shape, a, b, false);
  if (!any) return NULL;
  tr_module *x = tr_module_clone(m);
  bool ok = true;
  /* Constants first: their literal is read in the old dtype. */
  for (int c = 0; c < x->ncomps && ok; c++)
    for (int i = 0; i < x->comps[c]->ninstrs && ok; i++) {
      tr_instr *in = x->comps[c]->instrs[i];
      if (in->op != TR_OP_CONSTANT || !tr_shape_is_array(in->shape) || in->shape->dtype != a) continue;
      tr_literal *lit = in->literal;
      if (!lit || !lit->data || lit->elided || lit->single || in->shape->rank > TR_TENSOR_MAX_RANK) {
        ok = false;
        break;
      }
      int64_t one = 1;
      tr_tensor t = {a, in->shape->rank, in->shape->rank ? in->shape->dims : &one, lit->data,
                     (size_t)tr_shape_count(in->shape) * (size_t)tr_dtype_size(a)};
      tr_tensor *o = convert_tensor(&t, b);
      if (!o) {
        ok = false;
        break;
      }
      tr_literal *nl = tr_arena_alloc(x->arena, sizeof *nl);
      *nl = *lit;
      nl->shape = tr_shape_array(x->arena, b, in->shape->rank, in->shape->dims);
      nl->data = tr_arena_memdup(x->arena, o->data, o->nbytes + 1);
      tr_tensor_free(o);
      in->literal = nl;
    }
  for (int c = 0; c < x->ncomps && ok; c++)
    for (int i = 0; i < x->comps[c]->ninstrs; i++) shape_has(x->comps[c]->instrs[i]->shape, a, b, true);
  tr_tensor **v = tr_xcalloc((size_t)nins + 2, sizeof *v);
  for (int i = 0; i < nins && ok; i++) {
    v[i] = ins[i]->dtype == a ? convert_tensor(ins[i], b) : tr_tensor_clone(ins[i]);
    ok = v[i] != NULL;
  }
  return finish_move(x, v, nins, ok, outs);
}
