/* bisect.c - the instruction level, keeping the compiler's context:
 * bisection along the entry's program order (operands first) with
 * sub-modules that keep the whole prefix up to a cut and return every
 * value live across it. A prefix whose live values are all right puts
 * the bug after the cut; so the first cut that fails names an
 * instruction whose operands were right and whose result is wrong, found
 * in about log2(N) target runs. Returning only the live values (not
 * every value, as --per-instruction does) leaves what the compiler fuses
 * and folds before the cut as it was.
 *
 * Two cross-checks follow: the culprit alone, fed the reference's values
 * of its operands, and the anchored per-instruction check (anchor.h). A
 * culprit that is right alone needs its context; the report says so. */
#include "triageint.h"
#include "../oracle/anchor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Position of every entry instruction, by id. */
static int *positions(const tr_module *m) {
  int *pos = tr_xcalloc((size_t)m->next_id + 1, sizeof *pos);
  for (int i = 0; i < m->next_id + 1; i++) pos[i] = -1;
  for (int i = 0; i < m->entry->ninstrs; i++) pos[m->entry->instrs[i]->id] = i;
  return pos;
}

/* Whether in is read after position cut: by an instruction after it, by
 * the root (it reads its operands last, wherever it is written: a module
 * may have dead instructions after it), or through a tuple before the cut
 * that is (tuples are not blamable, so no cut returns them: a value that
 * reaches the root only in a nested tuple would be lost). */
static bool used_after(const tr_module *m, const tr_instr *in, int cut, const int *pos, int depth) {
  for (int u = 0; u < in->nusers; u++) {
    const tr_instr *x = in->users[u];
    if (pos[x->id] > cut || x == m->entry->root) return true;
    if (x->op == TR_OP_TUPLE && depth < 16 && used_after(m, x, cut, pos, depth + 1)) return true;
  }
  return false;
}

/* The prefix module of cut k: every blamable value up to bl[k] that is
 * used after it (or is the root) becomes an output. */
static tr_module *prefix_module(const tr_module *m, const tr_instr **bl, int k, const int *pos) {
  int cut = pos[bl[k]->id];
  int *ids = tr_xcalloc((size_t)k + 2, sizeof *ids);
  int n = 0;
  for (int j = 0; j <= k; j++) {
    const tr_instr *in = bl[j];
    if (in == m->entry->root || j == k || used_after(m, in, cut, pos, 0)) ids[n++] = in->id;
  }
  tr_module *x = tg_with_root(m, ids, n);
  tr_free(ids);
  return x;
}

int tg_bisect(tg_ctx *g, tr_level *lv, const tr_module *m, const tr_instr **bl, int nbl,
              tr_tensor *const *ins, int nins, const tr_check_sig *want) {
  if (nbl < 1) return -1;
  int *pos = positions(m);
  int lo = -1, hi = nbl - 1;
  /* The last cut is the whole module when it is the root; else it must
   * be seen to fail (the bug could be in what no cut returns). */
  if (bl[hi] != m->entry->root) {
    tr_module *x = prefix_module(m, bl, hi, pos);
    bool bad = x && tg_fails(g, lv, x, ins, nins, want);
    tr_module_free(x);
    if (!bad) {
      tr_free(pos);
      return -1;
    }
  }
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    tr_module *x = prefix_module(m, bl, mid, pos);
    bool bad = x && tg_fails(g, lv, x, ins, nins, want);
    tr_module_free(x);
    tg_progress(g, "bisect: cut at %%%s (%d of %d): %s", bl[mid]->name, mid + 1, nbl, bad ? "fails" : "passes");
    if (bad) hi = mid;
    else lo = mid;
  }
  tr_free(pos);
  return hi;
}

/* The culprit alone on the target, its operands the reference's values:
 * 1 wrong, 0 right, -1 could not tell. */
static int alone(tg_ctx *g, tr_level *lv, const tr_module *m, const tr_instr *in) {
  tr_check_report cr;
  if (!tg_check_alone(g, lv, m, in, &cr)) return -1;
  int verdict = cr.outcome == TR_CHECK_FINDING ? 1 : cr.outcome == TR_CHECK_PASS || cr.outcome == TR_CHECK_WEAK ? 0 : -1;
  tr_check_report_free(&cr);
  return verdict;
}

/* The anchored per-instruction check on the failing inputs: the first
 * mismatching instruction's name into out ("" when none). */
static void per_instruction(tg_ctx *g, tr_level *lv, const tr_module *m, char *out, size_t nout) {
  out[0] = 0;
  tr_anchored a;
  tr_diag dd = {0};
  if (tr_anchor_module(m, false, &a, &dd) != TR_OK) {
    tr_diag_clear(&dd);
    return;
  }
  tr_run_opts ro;
  memset(&ro, 0, sizeof ro);
  ro.timeout_s = g->o->timeout_s;
  tr_run_result res;
  tr_run_result_init(&res);
  tr_status st = tr_anchor_run(&a, g->t, g->r->inputs, g->r->ninputs, &ro, &res, &dd);
  lv->runs += a.nparts;
  g->r->total_runs += a.nparts;
  if (st == TR_OK && res.verdict == TR_VERDICT_OK) {
    tr_anchor_opts ao;
    tr_anchor_opts_default(&ao);
    ao.k = g->o->k;
    ao.profile = g->o->profile;
    tr_anchor_summary s;
    if (tr_anchor_judge(&a, g->r->inputs, g->r->ninputs, res.outputs, res.noutputs, &ao, &s, &dd) == TR_OK) {
      if (s.first_bad >= 0) snprintf(out, nout, "%s", a.anchors[s.first_bad].in->name);
      tr_anchor_summary_free(&s);
    }
  }
  tr_run_result_free(&res);
  tr_anchored_free(&a);
  tr_diag_clear(&dd);
}

/* A culprit that only wraps computations (call, conditional, while):
 * inline it (the branch the reference takes; one trip of a loop) and
 * bisect again, keeping the context, to the wrong instruction inside;
 * deeper while the culprit found is call-like again. Names it in
 * r->inner (an instruction of the inlined copy: the callee's name, made
 * unique in the entry). Returns the inlined module holding it, *inner
 * (NULL: none, and nothing returned). */
static tr_module *descend(tg_ctx *g, tr_level *lv, const tr_module *m, const tr_instr *in,
                          const tr_instr **inner) {
  tr_triage_report *r = g->r;
  tr_module *cur = NULL;
  *inner = NULL;
  int id = in->id;
  for (int depth = 0; depth < 4; depth++) {
    const tr_module *base = cur ? cur : m;
    const tr_instr *c = NULL;
    for (int i = 0; i < base->entry->ninstrs; i++)
      if (base->entry->instrs[i]->id == id) c = base->entry->instrs[i];
    if (!c || (c->op != TR_OP_CALL && c->op != TR_OP_CONDITIONAL && c->op != TR_OP_WHILE)) break;
    tr_module *x = tg_move_inline(base, id, r->inputs, r->ninputs);
    if (!x) break;
    int nbl = 0;
    const tr_instr **bl = tg_blamable(x, &nbl);
    int k = tg_bisect(g, lv, x, bl, nbl, r->inputs, r->ninputs, &r->sig);
    /* Only an instruction the inlining made (not one of the caller's)
     * is inside the culprit. */
    bool inside = k >= 0 && !tr_comp_find(m->entry, bl[k]->name);
    if (!inside) {
      tr_free(bl);
      tr_module_free(x);
      break;
    }
    snprintf(r->inner, sizeof r->inner, "%s", bl[k]->name);
    r->inner_op = bl[k]->op;
    id = bl[k]->id;
    *inner = bl[k];
    tr_free(bl);
    tr_module_free(cur);
    cur = x;
  }
  return cur;
}

/* The recorded bug (known.def) whose trigger in and r->kase match. */
static void name_known(tr_triage_report *r, const tr_instr *in) {
  const char *title = NULL;
  const char *id = tr_known_match(r->target, in, &r->kase, &r->sig, &title);
  if (!id) return;
  snprintf(r->known, sizeof r->known, "%s", id);
  snprintf(r->known_title, sizeof r->known_title, "%s", title);
}

tr_status tg_bisect_level(tg_ctx *g, const tr_module *m) {
  tr_triage_report *r = g->r;
  tr_level *lv = &r->instr;
  double t0 = tg_now_ms();
  int nbl = 0;
  const tr_instr **bl = tg_blamable(m, &nbl);
  int k = tg_bisect(g, lv, m, bl, nbl, r->inputs, r->ninputs, &r->sig);
  r->bisect_runs = lv->runs;
  if (k < 0) {
    lv->state = TR_LEVEL_NONE;
    tg_note(lv, "no prefix of the %d instructions fails; the finding is in what no cut returns", nbl);
    /* The per-instruction check may still name one (each instruction
     * fed the reference's operands: a bug that needs the whole module's
     * context to show in its outputs); else a recorded bug of the root's
     * form (a result type the target gets wrong is seen only in the whole
     * module's outputs)? */
    per_instruction(g, lv, m, r->per_instr, sizeof r->per_instr);
    const tr_instr *pi = r->per_instr[0] ? tr_comp_find(m->entry, r->per_instr) : NULL;
    if (pi) {
      tg_case(g, lv, m, pi, &r->kase);
      tg_note(lv, "no prefix of the %d instructions fails (the bug needs the whole module's context); "
                  "the per-instruction check names %%%s (%s)", nbl, pi->name, tr_ops[pi->op].name);
      name_known(r, pi);
    } else {
      /* the root, else what a tuple root returns (one level down) */
      const tr_instr *root = m->entry->root;
      for (int j = -1; !r->known[0] && j < (root->op == TR_OP_TUPLE ? root->noperands : 0); j++) {
        const tr_instr *x = j < 0 ? root : root->operands[j];
        tg_case_static(m, x, &r->kase);
        name_known(r, x);
      }
      if (!r->known[0]) tg_case_static(m, root, &r->kase);
    }
    tr_free(bl);
    lv->ms = tg_now_ms() - t0;
    return TR_OK;
  }
  const tr_instr *in = bl[k];
  snprintf(r->culprit, sizeof r->culprit, "%s", in->name);
  r->culprit_op = in->op;
  r->culprit_pos = k;
  r->inner_op = TR_OP_COUNT;
  const tr_instr *inner = NULL;
  tr_module *inl = descend(g, lv, m, in, &inner);
  int a = alone(g, lv, m, in);
  /* The wrong element, and a recorded bug it may be (known.def). */
  const tr_module *cm = inner ? inl : m;
  const tr_instr *ci = inner ? inner : in;
  tg_case(g, lv, cm, ci, &r->kase);
  name_known(r, ci);
  tr_module_free(inl);
  snprintf(r->alone, sizeof r->alone, "%s", a == 1 ? "wrong" : a == 0 ? "right" : "unknown");
  per_instruction(g, lv, m, r->per_instr, sizeof r->per_instr);
  r->agree = a == 1 && strcmp(r->per_instr, in->name) == 0;
  lv->state = TR_LEVEL_FOUND;
  const char *why = a == 0 ? "; right alone on the reference's operands: the bug needs its context"
                    : a == 1 ? "; wrong alone on the reference's operands too" : "";
  char pi[200];
  if (!r->per_instr[0]) snprintf(pi, sizeof pi, "; the per-instruction check names nothing (it changes the context)");
  else if (strcmp(r->per_instr, in->name) == 0) snprintf(pi, sizeof pi, "; the per-instruction check agrees");
  else snprintf(pi, sizeof pi, "; the per-instruction check names %%%s instead", r->per_instr);
  char innertxt[200] = "";
  if (r->inner[0])
    snprintf(innertxt, sizeof innertxt, "; inside it (inlined, bisected again) %%%s (%s)", r->inner, tr_ops[r->inner_op].name);
  tg_note(lv, "%%%s (%s, %d of %d in program order; bisection %d runs)%s%s%s", in->name, tr_ops[in->op].name,
          k + 1, nbl, r->bisect_runs, innertxt, why, pi);
  tr_free(bl);
  lv->ms = tg_now_ms() - t0;
  return TR_OK;
}
