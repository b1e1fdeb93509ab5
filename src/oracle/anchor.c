/* anchor.c - per-instruction checking (anchor.h): the anchored module and
 * the judgement of each anchored instruction on the target's own operand
 * values. */
#include "anchor.h"
#include "alts.h"

#include "../target/target.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- the anchored module ---- */

static bool is_anchor(const tr_instr *in) {
  switch (in->op) {
  case TR_OP_PARAMETER: case TR_OP_CONSTANT: case TR_OP_TUPLE: return false;
  case TR_OP_GET_TUPLE_ELEMENT:
    if (in->noperands == 1 && in->operands[0]->op == TR_OP_PARAMETER) return false;
    break;
  default: break;
  }
  if (tr_ops[in->op].flags & TR_OPF_S) return false;
  return in->shape && tr_shape_leaves(in->shape, NULL, 0) > 0;
}

typedef struct {
  tr_module *x;
  tr_comp *e;
  tr_instr **leaves;
  int n, cap;
  int fresh;
} leafer;

static void push_leaf(leafer *l, tr_instr *in) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->leaves = tr_xrealloc(l->leaves, sizeof(tr_instr *) * (size_t)l->cap);
  }
  l->leaves[l->n++] = in;
}

/* Appends the array leaves of v (an instruction of the anchored entry),
 * depth-first, adding get-tuple-elements for tuple parts: the same order
 * as tr_shape_leaves. */
static void add_leaves(leafer *l, tr_instr *v) {
  const tr_shape *s = v->shape;
  if (s->dtype != TR_DT_TUPLE) {
    if (tr_dtype_is_array(s->dtype)) push_leaf(l, v);
    return;
  }
  for (int i = 0; i < s->nelems; i++) {
    if (tr_shape_leaves(s->elems[i], NULL, 0) == 0) continue;
    tr_buf nb = {0};
    do {
      nb.n = 0;
      tr_buf_printf(&nb, "trench.anchor.%d", l->fresh++);
    } while (tr_comp_find(l->e, tr_buf_str(&nb)));
    tr_instr *g = tr_instr_new(l->x, TR_OP_GET_TUPLE_ELEMENT, tr_buf_str(&nb), s->elems[i]);
    tr_buf_free(&nb);
    tr_attr *at = tr_instr_add_attr(l->x, g, TR_ATTR_INDEX, TR_AK_INT, NULL);
    at->u.i = i;
    tr_comp_append(l->e, g);
    tr_instr_set_operands(g, &v, 1);
    add_leaves(l, g);
  }
}

/* Ops a compiler fuses into their consumer: elementwise and index-only. */
static bool fusible(const tr_instr *in) {
  unsigned f = tr_ops[in->op].flags;
  if ((f & TR_OPF_E) && !(f & TR_OPF_S)) return true;
  switch (in->op) {
  case TR_OP_BROADCAST: case TR_OP_RESHAPE: case TR_OP_BITCAST: case TR_OP_TRANSPOSE:
  case TR_OP_SLICE: case TR_OP_DYNAMIC_SLICE: case TR_OP_IOTA:
    return true;
  default: return false;
  }
}

/* A copy of m whose entry root is the flat tuple of the original root's
 * leaves (when with_root) and the leaves of anchors [a0, a1). */
static tr_module *make_part(const tr_anchored *an, bool with_root, int a0, int a1, int *nleaves) {
  const tr_module *m = an->src;
  tr_module *x = tr_module_clone(m);
  leafer l = {x, x->entry, NULL, 0, 0, 0};
  /* The clone keeps ids: map the original's entry instructions by id. */
  tr_instr **byid = tr_xcalloc((size_t)x->next_id + 1, sizeof *byid);
  for (int i = 0; i < l.e->ninstrs; i++) byid[l.e->instrs[i]->id] = l.e->instrs[i];
  if (with_root) add_leaves(&l, byid[m->entry->root->id]);
  for (int k = a0; k < a1; k++) add_leaves(&l, byid[an->anchors[k].in->id]);
  tr_free(byid);
  tr_shape **shapes = tr_xcalloc((size_t)l.n + 1, sizeof *shapes);
  for (int i = 0; i < l.n; i++) shapes[i] = l.leaves[i]->shape;
  tr_instr *root = tr_instr_new(x, TR_OP_TUPLE, "trench.anchors", tr_shape_tuple(x->arena, l.n, shapes));
  while (tr_comp_find(l.e, root->name)) root->name = tr_arena_strdup(x->arena, "trench.anchors.1");
  tr_free(shapes);
  tr_comp_append(l.e, root);
  tr_instr_set_operands(root, l.leaves, l.n);
  l.e->root = root;
  tr_free(l.leaves);
  tr_drop_entry_layout(x);
  *nleaves = l.n;
  return x;
}

static void free_parts(tr_anchored *a) {
  for (int p = 0; p < a->nparts; p++) tr_module_free(a->parts[p]);
  tr_free(a->parts);
  a->parts = NULL;
  a->nparts = 0;
}

tr_status tr_anchor_split(tr_anchored *a, int max_leaves, tr_diag *d) {
  free_parts(a);
  a->parts = tr_xcalloc((size_t)a->nanchors + 2, sizeof *a->parts);
  int k = 0;
  do {
    int n = a->nparts == 0 ? a->norig : 0, k1 = k;
    /* At least one anchor per part, so every part makes progress. */
    while (k1 < a->nanchors && (k1 == k || max_leaves <= 0 || n + a->anchors[k1].nleaves <= max_leaves))
      n += a->anchors[k1++].nleaves;
    int got;
    tr_module *x = make_part(a, a->nparts == 0, k, k1, &got);
    a->parts[a->nparts++] = x;
    tr_status st = tr_verify(x, d);
    if (st != TR_OK) return st;
    k = k1;
  } while (k < a->nanchors);
  return TR_OK;
}

tr_status tr_anchor_module(const tr_module *m, bool chains, tr_anchored *out, tr_diag *d) {
  memset(out, 0, sizeof *out);
  if (!m->entry || !m->entry->root) {
    tr_diag_errorf(d, "%s: error: module has no ENTRY root", m->file ? m->file : "<module>");
    return TR_ERR_INVALID;
  }
  const tr_comp *oe = m->entry;
  out->src = m;
  out->norig = tr_shape_leaves(oe->root->shape, NULL, 0);
  /* head[id]: the anchored instruction an absorbed producer is judged
   * with (chains), found from the users down. */
  const tr_instr **head = tr_xcalloc((size_t)m->next_id + 1, sizeof *head);
  for (int i = oe->ninstrs - 1; i >= 0; i--) {
    const tr_instr *in = oe->instrs[i];
    if (!is_anchor(in)) continue;
    head[in->id] = in;
    if (!chains || !fusible(in) || in->nusers != 1 || in == oe->root) continue;
    const tr_instr *u = in->users[0];
    if (u->parent == oe && head[u->id]) head[in->id] = head[u->id];
  }
  int n = out->norig;
  out->anchors = tr_xcalloc((size_t)oe->ninstrs + 1, sizeof *out->anchors);
  for (int i = 0; i < oe->ninstrs; i++) {
    const tr_instr *in = oe->instrs[i];
    if (!is_anchor(in) || head[in->id] != in) continue;
    tr_anchor *a = &out->anchors[out->nanchors++];
    a->in = in;
    a->first = n;
    a->nleaves = tr_shape_leaves(in->shape, NULL, 0);
    n += a->nleaves;
    int nm = 0;
    for (int j = 0; j <= i; j++)
      if (head[oe->instrs[j]->id] == in) nm++;
    a->members = tr_xcalloc((size_t)nm + 1, sizeof *a->members);
    for (int j = 0; j <= i; j++)
      if (head[oe->instrs[j]->id] == in) a->members[a->nmembers++] = oe->instrs[j];
  }
  tr_free(head);
  out->nleaves = n;
  tr_status st = tr_anchor_split(out, 0, d);
  if (st != TR_OK) tr_anchored_free(out);
  return st;
}

void tr_anchored_free(tr_anchored *a) {
  free_parts(a);
  for (int i = 0; i < a->nanchors; i++) tr_free((void *)a->anchors[i].members);
  tr_free(a->anchors);
  memset(a, 0, sizeof *a);
}

tr_status tr_anchor_run(tr_anchored *a, tr_target *t, tr_tensor *const *ins, int nins,
                        const tr_run_opts *ro, tr_run_result *res, tr_diag *d) {
  tr_run_result_init(res);
  for (int attempt = 0; attempt < 2; attempt++) {
    tr_run_result_free(res);
    res->outputs = tr_xcalloc((size_t)a->nleaves + 1, sizeof *res->outputs);
    for (int p = 0; p < a->nparts; p++) {
      tr_run_result r;
      tr_run_result_init(&r);
      tr_status st = tr_target_run(t, a->parts[p], ins, nins, ro, &r, d);
      if (st != TR_OK) {
        tr_run_result_free(&r);
        return st;
      }
      if (r.verdict != TR_VERDICT_OK || res->noutputs + r.noutputs > a->nleaves) {
        /* Keep the part's verdict and words, drop what came before. */
        for (int i = 0; i < res->noutputs; i++) tr_tensor_free(res->outputs[i]);
        tr_free(res->outputs);
        tr_tensor **keep = r.outputs;
        int nkeep = r.noutputs;
        *res = r;
        if (res->verdict == TR_VERDICT_OK) {
          res->verdict = TR_VERDICT_PROTOCOL_ERROR;
          for (int i = 0; i < nkeep; i++) tr_tensor_free(keep[i]);
          tr_free(keep);
          res->outputs = NULL;
          res->noutputs = 0;
        }
        break;
      }
      for (int i = 0; i < r.noutputs; i++) res->outputs[res->noutputs++] = r.outputs[i];
      r.noutputs = 0;
      tr_run_result_free(&r);
    }
    /* A target that refuses one module this wide (the built-in compiler
     * takes at most 256 tuple leaves) gets it in parts. */
    if (res->verdict == TR_VERDICT_UNSUPPORTED && a->nparts == 1 && a->nleaves > 200) {
      tr_status st = tr_anchor_split(a, 200, d);
      if (st != TR_OK) return st;
      continue;
    }
    break;
  }
  return TR_OK;
}

void tr_anchor_opts_default(tr_anchor_opts *o) {
  memset(o, 0, sizeof *o);
  o->k = 1;
}

/* ---- values of the original entry's instructions, as the target gave
 * them ---- */

typedef struct {
  tr_tensor **t; /* borrowed or in owned */
  int n;         /* leaves; -1: unknown */
} leafvals;

static void literal_leaves(const tr_literal *lit, tr_tensor ***own, int *nown, leafvals *v) {
  if (lit->shape->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < lit->nelems; i++) literal_leaves(lit->elems[i], own, nown, v);
    return;
  }
  if (!tr_dtype_is_array(lit->shape->dtype)) return;
  if (lit->elided || !lit->data) {
    v->n = -1;
    return;
  }
  tr_tensor *t = tr_tensor_new(lit->shape->dtype, lit->shape->rank, lit->shape->dims, NULL);
  if (!t) {
    v->n = -1;
    return;
  }
  memcpy(t->data, lit->data, t->nbytes);
  *own = tr_xrealloc(*own, sizeof(tr_tensor *) * (size_t)(*nown + 1));
  (*own)[(*nown)++] = t;
  if (v->n >= 0) {
    v->t = tr_xrealloc(v->t, sizeof(tr_tensor *) * (size_t)(v->n + 1));
    v->t[v->n++] = t;
  }
}

static void set_vals(leafvals *v, tr_tensor *const *ts, int n) {
  v->n = n;
  v->t = tr_xcalloc((size_t)n + 1, sizeof(tr_tensor *));
  for (int i = 0; i < n; i++) v->t[i] = ts[i];
}

/* ---- judging one instruction ---- */

typedef struct {
  const tr_anchor_opts *o;
  tr_module *x;            /* the instruction alone */
  tr_tensor **ins;         /* its inputs */
  int nins;
  double *in_ulps;         /* per input, or NULL */
} one;

static tr_shadow_out *shadow_of(const one *w, tr_tensor **ins, const tr_module *mod, unsigned mask,
                                int *n) {
  return tr_profile_shadow(w->o->profile, mask, mod, ins, w->nins, w->in_ulps, n);
}

static int rank_of(tr_judgement j) {
  return j == TR_JUDGE_MISMATCH ? 2 : j == TR_JUDGE_WEAK ? 1 : 0;
}

/* Judges the leaves tgt[0..n) of w->x's result; fills r. */
static void judge_one(const one *w, tr_tensor *const *tgt, int n, tr_anchor_result *r) {
  memset(r, 0, sizeof *r);
  int nref = 0;
  tr_shadow_out *ref = shadow_of(w, w->ins, w->x, 0, &nref);
  if (!ref) {
    r->status = 1;
    r->reason = "the reference cannot evaluate it";
    return;
  }
  if (nref != n) {
    r->status = 1;
    r->reason = "leaf count differs";
    tr_shadow_free(ref, nref);
    return;
  }
  const tr_profile *p = w->o->profile;
  tr_profile_alts a;
  memset(&a, 0, sizeof a);
  bool have_alts = false;
  bool best_set = false;
  for (int i = 0; i < n; i++) {
    tr_compare_opts co;
    tr_compare_opts_default(&co);
    co.k = w->o->k;
    co.profile = p;
    tr_compare_result cr;
    tr_diag d = {0};
    tr_status st = tr_compare_output(&ref[i], tgt[i], &co, &cr, &d);
    if (st == TR_OK && cr.failing && p) {
      /* The other references only where something failed: they cost a
       * shadow evaluation each. */
      if (!have_alts) tr_profile_alts_compute(p, w->x, w->ins, w->nins, w->in_ulps, &a);
      have_alts = true;
      tr_profile_alts_use(&a, i, &co);
      for (int dt = 0; dt < TR_DT_COUNT; dt++)
        co.result_flush[dt] = p->on[TR_PR_FLUSH_RESULTS] && tr_profile_flushes_results(p, w->x, (tr_dtype)dt);
      st = tr_compare_output(&ref[i], tgt[i], &co, &cr, &d);
    }
    tr_diag_clear(&d);
    if (st != TR_OK) {
      r->status = 1;
      r->reason = "the target's value has another shape";
      break;
    }
    for (int q = 0; q < TR_PR_COUNT; q++)
      if (cr.excused_by[q]) r->excused |= 1u << q;
    if (cr.excused_tables)
      r->excused |= 1u << TR_PR_TRANSCENDENTAL_ULPS | 1u << TR_PR_RECIPROCAL_DIVIDE;
    /* "Constant output" is weak for a module output (it says little about
     * the module); an instruction whose inputs are constants or single
     * values (a broadcast of one element) must give a constant, and every
     * element was checked against the one right answer. */
    bool single = true;
    for (int q = 0; q < w->nins; q++) single &= tr_tensor_count(w->ins[q]) <= 1;
    if (cr.judgement == TR_JUDGE_WEAK && single && cr.weak_reason &&
        strcmp(cr.weak_reason, "constant output") == 0 && cr.uncertain == 0) {
      cr.judgement = TR_JUDGE_PASS;
      cr.weak_reason = NULL;
    }
    if (!best_set || rank_of(cr.judgement) > rank_of(r->judgement) ||
        (rank_of(cr.judgement) == rank_of(r->judgement) && cr.worst_ratio > r->r.worst_ratio)) {
      r->judgement = cr.judgement;
      r->leaf = i;
      r->r = cr;
      r->reason = cr.weak_reason;
      best_set = true;
    }
  }
  if (have_alts) tr_profile_alts_free(&a);
  tr_shadow_free(ref, nref);
}

/* The target's values of every entry instruction of a->src, by id: the
 * inputs for parameters, the outputs for anchors, literals for constants
 * (new tensors appended to *own), tuples and get-tuple-elements put
 * together from those; n = -1 where unknown. */
static leafvals *resolve_vals(const tr_anchored *a, tr_tensor *const *ins, int nins,
                              tr_tensor *const *outs, tr_tensor ***own, int *nown) {
  const tr_module *m = a->src;
  const tr_comp *e = m->entry;
  leafvals *vals = tr_xcalloc((size_t)m->next_id + 1, sizeof *vals);
  /* Parameters: the module inputs, leaves in parameter order. */
  int next = 0;
  for (int i = 0; i < e->nparams; i++) {
    const tr_instr *p = e->params[i];
    int n = p ? tr_shape_leaves(p->shape, NULL, 0) : 0;
    if (p && next + n <= nins) set_vals(&vals[p->id], ins + next, n);
    else if (p) vals[p->id].n = -1;
    next += n;
  }
  int ai = 0;
  for (int i = 0; i < e->ninstrs; i++) {
    const tr_instr *in = e->instrs[i];
    leafvals *v = &vals[in->id];
    if (ai < a->nanchors && a->anchors[ai].in == in) {
      set_vals(v, outs + a->anchors[ai].first, a->anchors[ai].nleaves);
      ai++;
    } else if (in->op == TR_OP_CONSTANT && in->literal) {
      literal_leaves(in->literal, own, nown, v);
    } else if (in->op == TR_OP_TUPLE) {
      for (int k = 0; k < in->noperands && v->n >= 0; k++) {
        const leafvals *ov = &vals[in->operands[k]->id];
        if (ov->n < 0 || (!ov->t && tr_shape_leaves(in->operands[k]->shape, NULL, 0))) {
          v->n = -1;
          break;
        }
        v->t = tr_xrealloc(v->t, sizeof(tr_tensor *) * (size_t)(v->n + ov->n + 1));
        for (int q = 0; q < ov->n; q++) v->t[v->n++] = ov->t[q];
      }
    } else if (in->op == TR_OP_GET_TUPLE_ELEMENT && in->noperands == 1) {
      const tr_instr *src = in->operands[0];
      const leafvals *ov = &vals[src->id];
      const tr_attr *at = tr_instr_attr(in, TR_ATTR_INDEX);
      if (ov->n < 0 || !ov->t || !at || src->shape->dtype != TR_DT_TUPLE) {
        v->n = -1;
      } else {
        int off = 0;
        for (int k = 0; k < at->u.i && k < src->shape->nelems; k++)
          off += tr_shape_leaves(src->shape->elems[k], NULL, 0);
        int n = tr_shape_leaves(in->shape, NULL, 0);
        if (off + n <= ov->n) set_vals(v, ov->t + off, n);
        else v->n = -1;
      }
    } else if (in->op != TR_OP_PARAMETER && in->shape && tr_shape_leaves(in->shape, NULL, 0) > 0) {
      v->n = -1; /* not anchored: its value is unknown */
    }                /* (a token has no leaves: nothing to know) */
  }
  return vals;
}

static void free_vals(const tr_anchored *a, leafvals *vals, tr_tensor **own, int nown) {
  for (int i = 0; i < a->src->next_id; i++) tr_free(vals[i].t);
  tr_free(vals);
  for (int i = 0; i < nown; i++) tr_tensor_free(own[i]);
  tr_free(own);
}

tr_status tr_anchor_judge(const tr_anchored *a, tr_tensor *const *ins, int nins,
                          tr_tensor *const *outs, int nouts, const tr_anchor_opts *o,
                          tr_anchor_summary *s, tr_diag *d) {
  memset(s, 0, sizeof *s);
  s->first_bad = -1;
  s->worst = -1;
  if (nouts != a->nleaves) {
    tr_diag_errorf(d, "the anchored module has %d outputs, the target gave %d", a->nleaves, nouts);
    return TR_ERR_INVALID;
  }
  s->nper = a->nanchors;
  s->per = tr_xcalloc((size_t)a->nanchors + 1, sizeof *s->per);
  const tr_module *m = a->src;
  tr_tensor **own = NULL;
  int nown = 0;
  leafvals *vals = resolve_vals(a, ins, nins, outs, &own, &nown);
  /* Each anchor alone on the target's operand values. */
  for (int k = 0; k < a->nanchors; k++) {
    const tr_anchor *an = &a->anchors[k];
    tr_anchor_result *r = &s->per[k];
    int nopnds = 0;
    for (int q = 0; q < an->nmembers; q++) nopnds += an->members[q]->noperands;
    const tr_instr **srcs = tr_xcalloc((size_t)nopnds + 1, sizeof *srcs);
    int nsrc = 0;
    tr_module *x = tr_extract_group(m, an->members, an->nmembers, srcs, &nsrc);
    /* A narrowing rule changes the reference itself (same parameters). */
    int ndots = 0;
    tr_module *nx = x ? tr_profile_narrowed(o->profile, x, &ndots) : NULL;
    one w = {o, nx ? nx : x, NULL, 0, NULL};
    /* Input bounds per operand leaf under the profile's input rules. */
    double *in_rule[2] = {NULL, NULL};
    static const tr_prule in_rules[2] = {TR_PR_NARROW_IN_F32, TR_PR_FMA_CONTRACTION};
    bool any_rule[2] = {false, false};
    bool known = x != NULL;
    for (int q = 0; known && q < nsrc; q++) {
      const leafvals *ov = &vals[srcs[q]->id];
      if (ov->n < 0) {
        known = false;
        break;
      }
      w.ins = tr_xrealloc(w.ins, sizeof(tr_tensor *) * (size_t)(w.nins + ov->n + 1));
      for (int g = 0; g < 2; g++)
        in_rule[g] = tr_xrealloc(in_rule[g], sizeof(double) * (size_t)(w.nins + ov->n + 1));
      /* Only values the target computed carry an input bound; module
       * inputs are exact. */
      bool anchored = srcs[q]->op != TR_OP_PARAMETER &&
                      !(srcs[q]->op == TR_OP_GET_TUPLE_ELEMENT && srcs[q]->operands[0]->op == TR_OP_PARAMETER);
      /* fma-contraction: the target may have added the unrounded
       * product, not the stored one. */
      bool fma = false;
      for (int g = 0; g < an->nmembers && srcs[q]->op == TR_OP_MULTIPLY; g++) {
        const tr_instr *u = an->members[g];
        if (u->op != TR_OP_ADD && u->op != TR_OP_SUBTRACT) continue;
        for (int i = 0; i < u->noperands; i++) fma |= u->operands[i] == srcs[q];
      }
      for (int j = 0; j < ov->n; j++) {
        tr_tensor *t = ov->t[j];
        in_rule[0][w.nins] = anchored ? tr_profile_input_ulps(o->profile, in_rules[0], t->dtype) : 0;
        in_rule[1][w.nins] = fma ? tr_profile_input_ulps(o->profile, in_rules[1], t->dtype) : 0;
        for (int g = 0; g < 2; g++) any_rule[g] |= in_rule[g][w.nins] > 0;
        w.ins[w.nins++] = t;
      }
    }
    if (!known) {
      r->status = 1;
      r->reason = x ? "an operand's value is unknown" : "cannot extract it";
    } else {
      /* Strictly first: exact operands. Only a mismatch is offered to
       * the input rules, each alone and then together, so the report
       * names the rule that excused it; without any excuse the result
       * with every input bound stands (what the profile allows). */
      judge_one(&w, outs + an->first, an->nleaves, r);
      if (!r->status && r->judgement == TR_JUDGE_MISMATCH && (any_rule[0] || any_rule[1])) {
        unsigned strict_excused = r->excused;
        w.in_ulps = tr_xcalloc((size_t)w.nins + 1, sizeof(double));
        unsigned sets[3];
        int nsets = 0;
        for (int g = 0; g < 2; g++)
          if (any_rule[g]) sets[nsets++] = 1u << g;
        if (nsets == 2) sets[nsets++] = 3; /* the last set has every rule */
        for (int k2 = 0; k2 < nsets; k2++) {
          unsigned set = sets[k2];
          for (int q = 0; q < w.nins; q++) {
            double u = 0;
            for (int g = 0; g < 2; g++)
              if ((set & (1u << g)) && in_rule[g][q] > u) u = in_rule[g][q];
            w.in_ulps[q] = u;
          }
          tr_anchor_result tr;
          judge_one(&w, outs + an->first, an->nleaves, &tr);
          bool excused = !tr.status && tr.judgement != TR_JUDGE_MISMATCH;
          if (excused || (k2 == nsets - 1 && !tr.status)) {
            *r = tr;
            r->excused |= strict_excused;
            for (int g = 0; excused && g < 2; g++)
              if (set & (1u << g)) r->excused |= 1u << in_rules[g];
          }
          if (excused) break;
        }
      }
    }
    for (int g = 0; g < 2; g++) tr_free(in_rule[g]);
    tr_free(w.ins);
    tr_free(w.in_ulps);
    tr_free(srcs);
    tr_module_free(x);
    tr_module_free(nx);
    if (r->status) {
      s->skipped++;
      continue;
    }
    s->checked++;
    if (ndots) s->narrowed++;
    for (int q = 0; q < TR_PR_COUNT; q++)
      if (r->excused & (1u << q)) s->excused_by[q]++;
    if (r->judgement == TR_JUDGE_PASS) s->pass++;
    else if (r->judgement == TR_JUDGE_WEAK) s->weak++;
    else {
      s->mismatch++;
      if (s->first_bad < 0) s->first_bad = k;
    }
    if (r->r.worst_ratio > s->worst_ratio || s->worst < 0) {
      s->worst_ratio = r->r.worst_ratio;
      s->worst = k;
    }
  }
  free_vals(a, vals, own, nown);
  return TR_OK;
}

void tr_anchor_summary_free(tr_anchor_summary *s) {
  tr_free(s->per);
  memset(s, 0, sizeof *s);
}

/* ---- reports ---- */

static void put_index(tr_buf *b, const tr_shape *s, size_t i) {
  int64_t idx[TR_TENSOR_MAX_RANK];
  int rank = s->rank < TR_TENSOR_MAX_RANK ? s->rank : TR_TENSOR_MAX_RANK;
  for (int k = rank - 1; k >= 0; k--) {
    int64_t dk = s->dims[k] > 0 ? s->dims[k] : 1;
    idx[k] = (int64_t)(i % (size_t)dk);
    i /= (size_t)dk;
  }
  tr_buf_putc(b, '[');
  for (int k = 0; k < rank; k++) tr_buf_printf(b, k ? ",%lld" : "%lld", (long long)idx[k]);
  tr_buf_putc(b, ']');
}

/* The shape of leaf j of in's result. */
static const tr_shape *leaf_shape(const tr_instr *in, int j) {
  int n = tr_shape_leaves(in->shape, NULL, 0);
  if (j < 0 || j >= n) return in->shape;
  const tr_shape **ls = tr_xcalloc((size_t)n + 1, sizeof *ls);
  tr_shape_leaves(in->shape, ls, n);
  const tr_shape *s = ls[j];
  tr_free(ls);
  return s;
}

void tr_anchor_summary_text(tr_buf *b, const char *label, const tr_anchored *a,
                            const tr_anchor_summary *s) {
  tr_buf_printf(b, "%s per-instruction: %s (checked %d: pass %d, weak %d, mismatch %d; skipped %d",
                label, s->mismatch ? "mismatch" : s->weak ? "weak" : "pass", s->checked, s->pass,
                s->weak, s->mismatch, s->skipped);
  if (s->worst >= 0)
    tr_buf_printf(b, "; worst ratio %.3g at %%%s", s->worst_ratio, a->anchors[s->worst].in->name);
  for (int q = 0; q < TR_PR_COUNT; q++)
    if (s->excused_by[q]) tr_buf_printf(b, "; excused %d by %s", s->excused_by[q], tr_prule_name((tr_prule)q));
  if (s->narrowed) tr_buf_printf(b, "; narrowed %d by %s", s->narrowed, tr_prule_name(TR_PR_DOT_ACCUMULATE));
  tr_buf_puts(b, ")\n");
  if (s->first_bad >= 0) {
    const tr_anchor *an = &a->anchors[s->first_bad];
    const tr_anchor_result *r = &s->per[s->first_bad];
    tr_buf_printf(b, "%s first mismatch: %%%s (%s", label, an->in->name, an->in->opname);
    if (an->nmembers > 1) {
      tr_buf_puts(b, ", judged with");
      for (int g = 0; g < an->nmembers - 1; g++)
        tr_buf_printf(b, "%s %%%s", g ? "," : "", an->members[g]->name);
    }
    tr_buf_printf(b, ") out%d", r->leaf);
    if (r->r.has_fail) {
      tr_buf_puts(b, " at ");
      put_index(b, leaf_shape(an->in, r->leaf), r->r.first_fail);
      tr_dtype dt = leaf_shape(an->in, r->leaf)->dtype;
      tr_buf_puts(b, ": target ");
      tr_put_value(b, dt, r->r.first_target);
      tr_buf_puts(b, ", reference ");
      tr_put_value(b, dt, r->r.first_value);
      tr_buf_printf(b, ", allowed %.3g (failing %zu of %zu)", r->r.first_bound, r->r.failing, r->r.n);
    }
    tr_buf_putc(b, '\n');
  }
}

void tr_anchor_summary_json(cJSON *js, const tr_anchored *a, const tr_anchor_summary *s) {
  cJSON *o = cJSON_AddObjectToObject(js, "per_instruction");
  cJSON_AddStringToObject(o, "verdict", s->mismatch ? "mismatch" : s->weak ? "weak" : "pass");
  cJSON_AddNumberToObject(o, "instructions", a->nanchors);
  int nabs = 0;
  for (int k = 0; k < a->nanchors; k++) nabs += a->anchors[k].nmembers - 1;
  cJSON_AddNumberToObject(o, "absorbed", nabs);
  cJSON_AddNumberToObject(o, "checked", s->checked);
  cJSON_AddNumberToObject(o, "pass", s->pass);
  cJSON_AddNumberToObject(o, "weak", s->weak);
  cJSON_AddNumberToObject(o, "mismatch", s->mismatch);
  cJSON_AddNumberToObject(o, "skipped", s->skipped);
  if (s->worst >= 0) {
    cJSON_AddNumberToObject(o, "worst_ratio", isfinite(s->worst_ratio) ? s->worst_ratio : 1e308);
    cJSON_AddStringToObject(o, "worst_instruction", a->anchors[s->worst].in->name);
  }
  if (s->narrowed) {
    cJSON *nr = cJSON_AddObjectToObject(o, "narrowed");
    cJSON_AddNumberToObject(nr, tr_prule_name(TR_PR_DOT_ACCUMULATE), s->narrowed);
  }
  bool any = false;
  for (int q = 0; q < TR_PR_COUNT; q++) any |= s->excused_by[q] > 0;
  if (any) {
    cJSON *ex = cJSON_AddObjectToObject(o, "excused");
    for (int q = 0; q < TR_PR_COUNT; q++)
      if (s->excused_by[q]) cJSON_AddNumberToObject(ex, tr_prule_name((tr_prule)q), s->excused_by[q]);
  }
  if (s->first_bad >= 0) {
    const tr_anchor *an = &a->anchors[s->first_bad];
    const tr_anchor_result *r = &s->per[s->first_bad];
    cJSON *f = cJSON_AddObjectToObject(o, "first_mismatch");
    cJSON_AddStringToObject(f, "instruction", an->in->name);
    cJSON_AddStringToObject(f, "opcode", an->in->opname);
    cJSON *mem = cJSON_AddArrayToObject(f, "judged_with");
    for (int g = 0; g < an->nmembers - 1; g++)
      cJSON_AddItemToArray(mem, cJSON_CreateString(an->members[g]->name));
    cJSON_AddNumberToObject(f, "output", r->leaf);
    cJSON_AddNumberToObject(f, "failing", (double)r->r.failing);
    cJSON_AddNumberToObject(f, "elements", (double)r->r.n);
    if (r->r.has_fail) {
      cJSON_AddNumberToObject(f, "first_failing_index", (double)r->r.first_fail);
      cJSON_AddNumberToObject(f, "target", r->r.first_target);
      cJSON_AddNumberToObject(f, "reference", r->r.first_value);
      cJSON_AddNumberToObject(f, "allowed", r->r.first_bound);
    }
  }
  /* The instructions that were not a pass, in program order (capped: a
   * broken target may fail hundreds). */
  cJSON *arr = cJSON_AddArrayToObject(o, "findings");
  int shown = 0;
  for (int k = 0; k < s->nper && shown < 100; k++) {
    const tr_anchor_result *r = &s->per[k];
    if (!r->status && r->judgement == TR_JUDGE_PASS) continue;
    cJSON *f = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, f);
    shown++;
    cJSON_AddStringToObject(f, "instruction", a->anchors[k].in->name);
    cJSON_AddStringToObject(f, "opcode", a->anchors[k].in->opname);
    cJSON_AddStringToObject(f, "judgement", r->status ? "skipped" : tr_judgement_name(r->judgement));
    if (r->reason) cJSON_AddStringToObject(f, "reason", r->reason);
    if (!r->status) {
      cJSON_AddNumberToObject(f, "output", r->leaf);
      cJSON_AddNumberToObject(f, "failing", (double)r->r.failing);
      cJSON_AddNumberToObject(f, "uncertain", (double)r->r.uncertain);
      cJSON_AddNumberToObject(f, "worst_ratio", isfinite(r->r.worst_ratio) ? r->r.worst_ratio : 1e308);
    }
  }
}

static bool write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return false;
  bool ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok;
}

tr_status tr_anchor_save(const char *dir, const tr_anchored *a, int k, tr_tensor *const *ins,
                         int nins, tr_tensor *const *outs, int nouts, const char *target,
                         tr_diag *d) {
  if (k < 0 || k >= a->nanchors || nouts != a->nleaves) {
    tr_diag_errorf(d, "no such anchored instruction");
    return TR_ERR_USAGE;
  }
  const tr_anchor *an = &a->anchors[k];
  int nopnds = 0;
  for (int q = 0; q < an->nmembers; q++) nopnds += an->members[q]->noperands;
  const tr_instr **srcs = tr_xcalloc((size_t)nopnds + 1, sizeof *srcs);
  int nsrc = 0;
  tr_module *x = tr_extract_group(a->src, an->members, an->nmembers, srcs, &nsrc);
  tr_tensor **own = NULL;
  int nown = 0;
  leafvals *vals = resolve_vals(a, ins, nins, outs, &own, &nown);
  tr_status st = x ? TR_OK : TR_ERR_INVALID;
  if (!x) tr_diag_errorf(d, "cannot extract %%%s", an->in->name);
  if (st == TR_OK && mkdir(dir, 0777) != 0 && errno != EEXIST) {
    tr_diag_errorf(d, "cannot create %s: %s", dir, strerror(errno));
    st = TR_ERR_IO;
  }
  tr_buf b = {0}, path = {0}, cmd = {0};
  if (st == TR_OK) {
    tr_print_module(&b, x);
    tr_buf_printf(&path, "%s/module.hlo", dir);
    if (!write_file(tr_buf_str(&path), tr_buf_str(&b))) {
      tr_diag_errorf(d, "cannot write %s", tr_buf_str(&path));
      st = TR_ERR_IO;
    }
  }
  tr_buf_printf(&cmd, "trench check %s/module.hlo --target '%s'", dir, target ? target : "T");
  int nin = 0;
  for (int q = 0; st == TR_OK && q < nsrc; q++) {
    const leafvals *ov = &vals[srcs[q]->id];
    for (int j = 0; st == TR_OK && j < ov->n; j++) {
      path.n = 0;
      tr_buf_printf(&path, "%s/in%d.npy", dir, nin++);
      st = tr_npy_write(tr_buf_str(&path), ov->t[j], d);
      tr_buf_printf(&cmd, " --input %s", tr_buf_str(&path));
    }
    if (ov->n < 0) {
      tr_diag_errorf(d, "the value of %%%s is unknown", srcs[q]->name);
      st = TR_ERR_INVALID;
    }
  }
  for (int j = 0; st == TR_OK && j < an->nleaves; j++) {
    path.n = 0;
    tr_buf_printf(&path, "%s/target%d.npy", dir, j);
    st = tr_npy_write(tr_buf_str(&path), outs[an->first + j], d);
  }
  if (st == TR_OK) {
    tr_buf rd = {0};
    tr_buf_printf(&rd, "# First mismatching instruction\n\n%%%s (%s) of %s, alone: its operands\n"
                       "are parameters holding the target's values of them (inN.npy), as the\n"
                       "per-instruction check judged it; targetN.npy is what the target gave for it.\n\n"
                       "Run it alone on the target (a fusion bug may need the fused context\n"
                       "to show: then the whole module's bundle is one folder up):\n\n    %s\n",
                  an->in->name, an->in->opname, a->src->file ? a->src->file : "the module",
                  tr_buf_str(&cmd));
    path.n = 0;
    tr_buf_printf(&path, "%s/README.md", dir);
    if (!write_file(tr_buf_str(&path), tr_buf_str(&rd))) st = TR_ERR_IO;
    tr_buf_free(&rd);
  }
  tr_buf_free(&b);
  tr_buf_free(&path);
  tr_buf_free(&cmd);
  free_vals(a, vals, own, nown);
  tr_free(srcs);
  tr_module_free(x);
  return st;
}
