/* constfold.c - constant folding (pass constant-fold). An instruction
 * whose operands are all constants is evaluated by the reference
 * interpreter itself, on a one-instruction module (plus copies of the
 * computations it calls), and replaced by a constant holding the result
 * bits: folding has exactly the reference's semantics by construction,
 * roundings, NaNs and integer wrapping included.
 *   fold-constant   any foldable instruction with constant operands
 *   fold-broadcast  a broadcast of a constant array, only while tiny
 * Not folded: side effects (rng included), while loops (their trip count
 * is unbounded), iota and other operand-less ops (cheap, and they would
 * only grow the module), elided constants ({...}: values unknown), and
 * results of more than MAX_RESULT elements. */
#include "compint.h"
#include "../eval/eval.h"

#include <stdlib.h>
#include <string.h>

#define MAX_RESULT 1024        /* elements of a folded result */
#define MAX_BROADCAST 16       /* broadcasts expand: fold only tiny ones */
#define MAX_OPERAND (1 << 16)  /* elements of an operand: bounds the work */

/* A constant whose values are known, of a static array shape. */
static bool known_const(const tr_instr *x) {
  if (x->op != TR_OP_CONSTANT || !x->literal || x->literal->elided || !x->literal->data ||
      !tr_shape_is_array(x->shape) || x->shape->dynamic)
    return false;
  int64_t n = tr_shape_count(x->shape);
  return n >= 0 && n <= MAX_OPERAND;
}

/* Copies of the computations an instruction calls, into the small module
 * t, made on demand by remap_calls. */
typedef struct {
  tr_module *t;        /* the small module */
  tr_comp **cmap;      /* source computation id -> copy */
  tr_instr **imap;     /* source instruction id -> copy */
  int nids;
} copier;

static tr_comp *copy_comp(copier *cp, const tr_comp *k, int depth);

/* Points y's called-computation attributes at copies in cp->t. Returns
 * false when a computation cannot be copied (a call chain deeper than
 * real modules have: a bad, cyclic one). */
static bool remap_calls(copier *cp, tr_instr *y, int depth) {
  for (int i = 0; i < y->nattrs; i++) {
    tr_attr *at = &y->attrs[i];
    if (at->kind == TR_AK_COMP) {
      if (!(at->u.comp = copy_comp(cp, at->u.comp, depth + 1))) return false;
    } else if (at->kind == TR_AK_COMPS) {
      tr_comp **v = tr_arena_alloc(cp->t->arena, sizeof(tr_comp *) * (size_t)(at->n + 1));
      for (int k = 0; k < at->n; k++)
        if (!(v[k] = copy_comp(cp, at->u.comps[k], depth + 1))) return false;
      at->u.comps = v;
    }
  }
  return true;
}

static tr_comp *copy_comp(copier *cp, const tr_comp *k, int depth) {
  if (k->id < 0 || k->id >= cp->nids || depth > 16) return NULL;
  if (cp->cmap[k->id]) return cp->cmap[k->id];
  tr_comp *nk = tr_comp_new(cp->t, k->name);
  cp->cmap[k->id] = nk;
  tr_instr **ops = NULL;
  int cap = 0;
  bool ok = true;
  for (int i = 0; ok && i < k->ninstrs; i++) {
    tr_instr *x = k->instrs[i];
    if (x->noperands > cap) {
      cap = x->noperands;
      ops = tr_xrealloc(ops, sizeof(tr_instr *) * (size_t)cap);
    }
    for (int j = 0; j < x->noperands; j++) ops[j] = cp->imap[x->operands[j]->id];
    tr_instr *y = tr_bc_copy_instr(nk, NULL, x, x->name, NULL, ops, x->noperands);
    cp->imap[x->id] = y;
    ok = remap_calls(cp, y, depth);
  }
  tr_free(ops);
  if (!ok) return NULL;
  nk->root = k->root ? cp->imap[k->root->id] : NULL;
  nk->nparams = k->nparams;
  nk->params = tr_arena_alloc(cp->t->arena, sizeof(tr_instr *) * (size_t)(k->nparams + 1));
  for (int i = 0; i < k->nparams; i++) nk->params[i] = k->params[i] ? cp->imap[k->params[i]->id] : NULL;
  return nk;
}

/* Loops inside a folded call or conditional still run at compile time:
 * one that runs longer than this is not folded. */
#define MAX_TRIPS 65536

/* Evaluates in on its constant operands with the reference interpreter.
 * Returns the result tensor, or NULL when the reference declines. */
static tr_tensor *eval_alone(const tr_module *m, tr_instr *in) {
  copier cp = {tr_module_new("fold"), NULL, NULL, 0};
  /* Maps over the whole module, only for the few that call computations. */
  if (tr_instr_called(in, NULL, 0) > 0) {
    cp.nids = m->next_id + 1;
    cp.cmap = tr_xcalloc((size_t)cp.nids, sizeof(tr_comp *));
    cp.imap = tr_xcalloc((size_t)cp.nids, sizeof(tr_instr *));
  }
  tr_module *t = cp.t;
  tr_comp *e = tr_comp_new(t, "fold");
  e->is_entry = true;
  t->entry = e;
  tr_instr **ops = tr_xmalloc(sizeof(tr_instr *) * (size_t)(in->noperands + 1));
  for (int i = 0; i < in->noperands; i++) {
    tr_buf b = {0};
    tr_buf_printf(&b, "c%d", i);
    ops[i] = tr_bc_copy_instr(e, NULL, in->operands[i], tr_buf_str(&b), NULL, NULL, 0);
    tr_buf_free(&b);
  }
  e->root = tr_bc_copy_instr(e, NULL, in, "r", NULL, ops, in->noperands);
  tr_free(ops);
  tr_tensor *res = NULL;
  if (remap_calls(&cp, e->root, 0)) {
    /* Callees first, as in a parsed module: the entry goes last. */
    memmove(&t->comps[0], &t->comps[1], sizeof(tr_comp *) * (size_t)(t->ncomps - 1));
    t->comps[t->ncomps - 1] = e;
    tr_eval_opts opts = {0};
    opts.max_while_trips = MAX_TRIPS;
    tr_tensor **outs = NULL;
    int nouts = 0;
    tr_diag d = {0};
    if (tr_eval_opt(t, &opts, NULL, 0, &outs, &nouts, &d) == TR_OK && nouts == 1) {
      res = outs[0];
      outs[0] = NULL;
    }
    tr_eval_free_outputs(outs, nouts);
    tr_diag_clear(&d);
  }
  tr_free(cp.cmap);
  tr_free(cp.imap);
  tr_module_free(t);
  return res;
}

/* The rule that folds in, or NULL when it is not foldable. */
static const char *fold_rule(const tr_instr *in) {
  tr_op op = in->op;
  if (!in->noperands || op == TR_OP_CONSTANT || op == TR_OP_PARAMETER || op == TR_OP_WHILE ||
      op == TR_OP_TUPLE || op == TR_OP_GET_TUPLE_ELEMENT || !tr_eval_supports(op))
    return NULL;
  if (!tr_shape_is_array(in->shape) || in->shape->dynamic) return NULL;
  int64_t n = tr_shape_count(in->shape);
  if (n < 0 || n > (op == TR_OP_BROADCAST ? MAX_BROADCAST : MAX_RESULT)) return NULL;
  for (int i = 0; i < in->noperands; i++)
    if (!known_const(in->operands[i])) return NULL;
  /* A broadcast scalar is the simplifier's (broadcast-scalar-const). */
  if (op == TR_OP_BROADCAST && in->operands[0]->shape->rank == 0) return NULL;
  if (tr_bc_has_side_effect(in)) return NULL;
  return op == TR_OP_BROADCAST ? "fold-broadcast" : "fold-constant";
}

/* Returns false when fuel ran out. */
static bool fold_comp(tr_bc_ctx *c, tr_module *m, tr_comp *k, bool *changed) {
  int n = k->ninstrs;
  tr_instr **list = tr_xmalloc(sizeof(tr_instr *) * (size_t)(n ? n : 1));
  memcpy(list, k->instrs, sizeof(tr_instr *) * (size_t)n);
  bool fuel = true;
  for (int i = 0; i < n && fuel; i++) {
    tr_instr *in = list[i];
    if (in->parent != k || (!in->nusers && in != k->root)) continue;
    const char *rule = fold_rule(in);
    if (!rule || !tr_bc_rule_enabled(c, rule)) continue;
    tr_tensor *t = eval_alone(m, in);
    if (!t) continue;
    bool fits = t->dtype == in->shape->dtype && t->rank == in->shape->rank;
    /* defect: f32 -> bf16 folded by truncating the low 16 bits instead of
     * rounding to nearest even; only values that round up differ */
    if (TR_INJECTED(c->inject, CONSTFOLD_BF16_TRUNCATE) && in->op == TR_OP_CONVERT &&
        t->dtype == TR_DT_BF16 && in->operands[0]->op == TR_OP_CONSTANT &&
        in->operands[0]->shape->dtype == TR_DT_F32 && in->operands[0]->literal &&
        in->operands[0]->literal->data) {
      const unsigned char *src = in->operands[0]->literal->data;
      for (size_t e = 0; e < tr_tensor_count(t); e++) {
        uint32_t fb;
        memcpy(&fb, src + 4 * e, 4);
        uint16_t hb = (uint16_t)(fb >> 16);
        memcpy((unsigned char *)t->data + 2 * e, &hb, 2);
      }
    }
    /* defect: converting f32/f64 to f16 flushes f16 subnormal results to
     * a signed zero, as a host conversion in flush-to-zero mode does */
    if (TR_INJECTED(c->inject, CONSTFOLD_F16_FLUSH_SUBNORMAL) && in->op == TR_OP_CONVERT &&
        t->dtype == TR_DT_F16 && (in->operands[0]->shape->dtype == TR_DT_F32 ||
                                  in->operands[0]->shape->dtype == TR_DT_F64)) {
      unsigned char *hp = t->data;
      for (size_t e = 0; e < tr_tensor_count(t); e++) {
        uint16_t hb;
        memcpy(&hb, hp + 2 * e, 2);
        if ((hb & 0x7c00) == 0) hb &= 0x8000;
        memcpy(hp + 2 * e, &hb, 2);
      }
    }
    for (int d = 0; fits && d < t->rank; d++) fits = t->dims[d] == in->shape->dims[d];
    if (fits && !tr_bc_fire(c, "constant-fold", rule, in)) fuel = false;
    if (fits && fuel) {
      tr_shape *sh = tr_shape_clone(m->arena, in->shape);
      tr_literal *lit = tr_arena_alloc(m->arena, sizeof *lit);
      lit->shape = sh;
      lit->data = tr_arena_alloc(m->arena, t->nbytes ? t->nbytes : 1);
      memcpy(lit->data, t->data, t->nbytes);
      tr_instr *cst = tr_instr_new(m, TR_OP_CONSTANT, tr_bc_fresh_name(k, in->name, "f"), sh);
      cst->literal = lit;
      tr_comp_insert_before(k, in, cst);
      tr_bc_replace_uses(in, cst);
      *changed = true;
    }
    tr_tensor_free(t);
  }
  tr_free(list);
  return fuel;
}

tr_status tr_pass_constfold(tr_bc_ctx *c, tr_module *m, bool *changed, tr_diag *d) {
  (void)d;
  *changed = false;
  int n = m->ncomps;
  tr_comp **comps = tr_xmalloc(sizeof(tr_comp *) * (size_t)(n ? n : 1));
  memcpy(comps, m->comps, sizeof(tr_comp *) * (size_t)n);
  for (int i = 0; i < n; i++)
    if (!fold_comp(c, m, comps[i], changed)) break;
  tr_free(comps);
  return TR_OK;
}
