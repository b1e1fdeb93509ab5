/* core.c - the interpreter core (core.h): limits, liveness, frames, and the
 * ops that route values between computations, for any value domain. A
 * frame evaluates only the instructions that feed its root, in textual
 * order (the verifier checked that operands come first), and drops each
 * value after its last use so long chains keep few values alive. */
#include "core.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- limits ---- */

static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ev_limits_start(ev_ctx *c) {
  int64_t t = c->opts.max_while_trips;
  c->max_trips = t == 0 ? TR_EVAL_DEFAULT_TRIPS : t < 0 ? 0 : t;
  c->deadline = c->opts.deadline_s > 0 ? mono_now() + c->opts.deadline_s : 0;
  c->ticks = 0;
}

/* Reading the clock costs tens of nanoseconds: once per 256 instructions
 * keeps it out of per-element calls of reduce and map. */
tr_status ev_tick(ev_ctx *c, const tr_instr *in) {
  if (c->deadline <= 0 || (++c->ticks & 255) != 0) return TR_OK;
  if (mono_now() < c->deadline) return TR_OK;
  return ev_err(c, in, TR_ERR_UNSUPPORTED, "reference deadline of %g s passed", c->opts.deadline_s);
}

tr_status ev_trip(ev_ctx *c, const tr_instr *in, int64_t trips) {
  if (c->max_trips <= 0 || trips < c->max_trips) return TR_OK;
  return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: while loop ran past the limit of %lld trips",
                (long long)c->max_trips);
}

tr_status ev_oom(ev_ctx *c, size_t bytes) {
  const tr_instr *in = c->at;
  const char *file = c->m->file ? c->m->file : "<module>";
  char where[512], what[300];
  if (in && in->line > 0) snprintf(where, sizeof where, "%s:%d:%d", file, in->line, in->col);
  else snprintf(where, sizeof where, "%s", file);
  if (in) snprintf(what, sizeof what, "evaluating %%%s", in->name);
  else snprintf(what, sizeof what, "evaluating the module");
  tr_heap_diag(c->d, where, what, bytes);
  return TR_ERR_UNSUPPORTED;
}

/* ---- per-module tables ---- */

void evc_begin(ev_ctx *c, const tr_module *m) {
  ev_limits_start(c);
  c->nids = m->next_id > 0 ? m->next_id : 0;
  c->pos = tr_xmalloc(sizeof(int) * ((size_t)c->nids + 1));
  for (int i = 0; i < c->nids; i++) c->pos[i] = -1;
  c->info = tr_xcalloc((size_t)c->nids + 1, sizeof(ev_compinfo));
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++) {
      const tr_instr *in = m->comps[k]->instrs[i];
      if (in->id >= 0 && in->id < c->nids) c->pos[in->id] = i;
    }
}

void evc_end(ev_ctx *c) {
  for (int i = 0; i < c->nids; i++) {
    tr_free(c->info[i].live);
    tr_free(c->info[i].lastuse);
  }
  tr_free(c->info);
  tr_free(c->pos);
  c->info = NULL;
  c->pos = NULL;
  c->nids = 0;
}

/* Liveness and last uses of k's instructions, built on first use. */
ev_compinfo *ev_comp_info(ev_ctx *c, const tr_instr *caller, const tr_comp *k) {
  if (k->id < 0 || k->id >= c->nids) {
    ev_err(c, caller, TR_ERR_INVALID, "computation %s has an id outside the module", k->name);
    return NULL;
  }
  ev_compinfo *ci = &c->info[k->id];
  if (ci->live) return ci;
  int n = k->ninstrs;
  for (int i = 0; i < n; i++) {
    const tr_instr *in = k->instrs[i];
    if (in->id < 0 || in->id >= c->nids || c->pos[in->id] != i) {
      ev_err(c, in, TR_ERR_INVALID, "instruction id is not unique in the module");
      return NULL;
    }
  }
  if (!k->root || k->root->parent != k) {
    ev_err(c, caller, TR_ERR_INVALID, "computation %s has no root", k->name);
    return NULL;
  }
  unsigned char *live = tr_xcalloc((size_t)n + 1, 1);
  int *last = tr_xcalloc((size_t)n + 1, sizeof(int));
  live[c->pos[k->root->id]] = 1;
  for (int i = n - 1; i >= 0; i--) {
    const tr_instr *in = k->instrs[i];
    if (!live[i]) continue;
    for (int j = 0; j < in->noperands; j++) {
      const tr_instr *o = in->operands[j];
      if (!o || o->parent != k || o->id < 0 || o->id >= c->nids || c->pos[o->id] >= i) {
        tr_free(live);
        tr_free(last);
        ev_err(c, in, TR_ERR_INVALID, "operand %d is not defined before its use", j);
        return NULL;
      }
      live[c->pos[o->id]] = 1;
    }
  }
  for (int i = 0; i < n; i++) last[i] = n;
  for (int i = 0; i < n; i++)
    if (live[i])
      for (int j = 0; j < k->instrs[i]->noperands; j++) last[c->pos[k->instrs[i]->operands[j]->id]] = i;
  last[c->pos[k->root->id]] = n;
  ci->live = live;
  ci->lastuse = last;
  return ci;
}

/* ---- frames ---- */

/* Whether value v has shape s (dtype and dims; layouts aside). A check on
 * every result keeps a kernel bug from turning into a bad read later. */
static bool fits(const ev_domain *D, const ev_v *v, const tr_shape *s) {
  if (!v) return false;
  ev_kind kd = v->kind;
  if (s->dtype == TR_DT_TUPLE) {
    if (kd != EV_TUPLE || v->nelems != s->nelems) return false;
    for (int i = 0; i < s->nelems; i++)
      if (!fits(D, v->elems[i], s->elems[i])) return false;
    return true;
  }
  if (s->dtype == TR_DT_TOKEN) return kd == EV_TOKEN;
  if (kd != EV_ARRAY) return false;
  tr_dtype dt;
  int rank;
  const int64_t *dims;
  D->shape(v, &dt, &rank, &dims);
  if (dt != s->dtype || rank != s->rank) return false;
  for (int i = 0; i < rank; i++)
    if (dims[i] != s->dims[i]) return false;
  return true;
}

#define MAX_DEPTH 256

tr_status evc_call(const ev_core *k, const tr_instr *caller, const tr_comp *comp,
                   ev_v *const *params, int np, ev_v **out) {
  const ev_domain *D = k->d;
  ev_ctx *c = k->ev;
  *out = NULL;
  if (c->depth >= MAX_DEPTH)
    return ev_err(c, caller, TR_ERR_UNSUPPORTED,
                  "unsupported: computations nest more than %d deep (recursion?)", MAX_DEPTH);
  ev_compinfo *ci = ev_comp_info(c, caller, comp);
  if (!ci) return TR_ERR_INVALID;
  c->depth++;
  int n = comp->ninstrs;
  /* on the stack for small computations: reducers and comparators are
   * called once per element */
  ev_v *vsmall[32], **vals = vsmall;
  if (n + 1 > 32) vals = tr_xcalloc((size_t)n + 1, sizeof(ev_v *));
  else memset(vsmall, 0, sizeof(ev_v *) * (size_t)(n + 1));
  ev_v *small[8], **ops = small;
  int cap = 8;
  tr_status st = TR_OK;
  const int *pos = c->pos;
  for (int i = 0; i < n && st == TR_OK; i++) {
    const tr_instr *in = comp->instrs[i];
    if (!ci->live[i]) continue;
    if (c->depth == 1) c->at = in;
    if ((st = ev_tick(c, in)) != TR_OK) break;
    if (in->op == TR_OP_PARAMETER) {
      if (in->param_index < 0 || in->param_index >= np || !params[in->param_index]) {
        st = ev_err(c, in, TR_ERR_INVALID, "parameter %lld is not passed (%d given)",
                    (long long)in->param_index, np);
        break;
      }
      vals[i] = ev_value_ref(params[in->param_index]);
      continue;
    }
    if (in->noperands > cap) {
      if (ops != small) tr_free(ops);
      cap = in->noperands;
      ops = tr_xmalloc(sizeof(ev_v *) * (size_t)cap);
    }
    for (int j = 0; j < in->noperands; j++) {
      ops[j] = vals[pos[in->operands[j]->id]];
      if (!ops[j]) {
        st = ev_err(c, in, TR_ERR_INVALID, "operand %d has no value", j);
        break;
      }
      if (D->operand) D->operand(k->dc, in, j, ops[j]);
    }
    if (st == TR_OK) st = D->instr(k->dc, in, ops, &vals[i]);
    if (st == TR_OK && !fits(D, vals[i], in->shape))
      st = ev_err(c, in, TR_ERR_INVALID, "internal error: the %s does not have the declared shape",
                  D->name);
    if (st != TR_OK) break;
    for (int j = 0; j < in->noperands; j++) {
      int p = pos[in->operands[j]->id];
      if (ci->lastuse[p] == i && vals[p]) {
        ev_value_unref(D->layout, vals[p]);
        vals[p] = NULL;
      }
    }
  }
  if (st == TR_OK) *out = ev_value_ref(vals[pos[comp->root->id]]);
  for (int i = 0; i < n; i++) ev_value_unref(D->layout, vals[i]);
  if (vals != vsmall) tr_free(vals);
  if (ops != small) tr_free(ops);
  c->depth--;
  return st;
}

/* ---- routing ops ---- */

/* A result computed under an unsure control value, through the domain's
 * hook (consumes *v's reference). */
static tr_status unsure_result(const ev_core *k, const tr_instr *in, ev_v **v) {
  if (!k->d->unsure) return TR_OK;
  ev_v *m = k->d->unsure(k->dc, in, *v);
  ev_value_unref(k->d->layout, *v);
  *v = m;
  return m ? TR_OK : TR_ERR_UNSUPPORTED;
}

static tr_status route_while(const ev_core *k, const tr_instr *in, ev_v **ops, ev_v **out) {
  const ev_domain *D = k->d;
  ev_ctx *c = k->ev;
  const tr_comp *cond = tr_attr_comp(in, TR_ATTR_CONDITION), *body = tr_attr_comp(in, TR_ATTR_BODY);
  if (!cond || !body) return ev_err(c, in, TR_ERR_INVALID, "while needs condition and body");
  ev_v *state = ev_value_ref(ops[0]);
  bool unsure = false; /* a trip decision that a correct run may take otherwise */
  for (int64_t trips = 0;; trips++) {
    ev_v *p = NULL;
    tr_status st = evc_call(k, in, cond, &state, 1, &p);
    if (st != TR_OK) {
      ev_value_unref(D->layout, state);
      return st;
    }
    tr_dtype dt;
    uint64_t go;
    bool u = false;
    if (!D->control(p, &dt, &go, &u) || dt != TR_DT_PRED) {
      ev_value_unref(D->layout, p);
      ev_value_unref(D->layout, state);
      return ev_err(c, in, TR_ERR_INVALID, "while condition did not return pred[]");
    }
    unsure |= u;
    ev_value_unref(D->layout, p);
    if (!go) break;
    if ((st = ev_trip(c, in, trips)) != TR_OK) {
      ev_value_unref(D->layout, state);
      return st;
    }
    ev_v *next = NULL;
    st = evc_call(k, in, body, &state, 1, &next);
    ev_value_unref(D->layout, state);
    if (st != TR_OK) return st;
    state = next;
  }
  *out = state;
  return unsure ? unsure_result(k, in, out) : TR_OK;
}

/* pred selector: true runs branch 0, false branch 1; s32: an index outside
 * [0, N) runs the last branch (operation_semantics.md, Conditional). */
static tr_status route_conditional(const ev_core *k, const tr_instr *in, ev_v **ops, ev_v **out) {
  ev_ctx *c = k->ev;
  const tr_attr *bc = tr_instr_attr(in, TR_ATTR_BRANCH_COMPUTATIONS);
  tr_comp *two[2] = {tr_attr_comp(in, TR_ATTR_TRUE_COMPUTATION), tr_attr_comp(in, TR_ATTR_FALSE_COMPUTATION)};
  tr_comp **br = bc ? bc->u.comps : two;
  int nb = bc ? bc->n : 2;
  tr_dtype dt;
  uint64_t v;
  bool unsure = false;
  if (!k->d->control(ops[0], &dt, &v, &unsure) || tr_dtype_is_float(dt))
    return ev_err(c, in, TR_ERR_INVALID, "conditional selector is not an integer scalar");
  int64_t idx = dt == TR_DT_PRED ? (v ? 0 : 1) : (int64_t)v;
  if (idx < 0 || idx >= nb) idx = nb - 1;
  if (nb < 1 || !br || !br[idx] || idx + 1 >= in->noperands)
    return ev_err(c, in, TR_ERR_INVALID, "conditional branch %lld or its operand is missing",
                  (long long)idx);
  tr_status st = evc_call(k, in, br[idx], &ops[idx + 1], 1, out);
  /* Another branch may run in a correct implementation. */
  if (st == TR_OK && unsure) st = unsure_result(k, in, out);
  return st;
}

/* Map: the computation on each element's scalars (or, where the domain
 * can, over whole arrays). */
static tr_status route_map(const ev_core *k, const tr_instr *in, ev_v **ops, ev_v **out) {
  const ev_domain *D = k->d;
  ev_ctx *c = k->ev;
  const tr_comp *f = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  int n = in->noperands;
  if (!f || n < 1) return ev_err(c, in, TR_ERR_INVALID, "malformed map");
  for (int i = 0; i < n; i++)
    if (ops[i]->kind != EV_ARRAY) return ev_err(c, in, TR_ERR_INVALID, "operand %d is not an array", i);
  if (D->map_whole) {
    tr_status st = D->map_whole(k->dc, in, f, ops, out);
    if (st != TR_OK || *out) return st;
  }
  const tr_shape *s = in->shape;
  ev_v *r = D->array(k->dc, in, s);
  if (!r) return TR_ERR_UNSUPPORTED;
  ev_v **args = tr_xcalloc((size_t)n, sizeof(ev_v *));
  tr_status st = TR_OK;
  size_t cnt = D->count(r);
  for (size_t e = 0; e < cnt && st == TR_OK; e++) {
    int made = 0;
    for (int i = 0; i < n && st == TR_OK; i++, made++)
      if (!(args[i] = D->scalar_at(k->dc, in, ops[i], e))) st = TR_ERR_UNSUPPORTED;
    ev_v *v = NULL;
    if (st == TR_OK) st = evc_call(k, in, f, args, n, &v);
    for (int i = 0; i < made; i++) ev_value_unref(D->layout, args[i]);
    if (st == TR_OK && !D->put(r, e, v))
      st = ev_err(c, in, TR_ERR_INVALID, "to_apply of map did not return a %s scalar",
                  tr_dtype_name(s->dtype));
    ev_value_unref(D->layout, v);
  }
  tr_free(args);
  if (st != TR_OK) {
    ev_value_unref(D->layout, r);
    return st;
  }
  *out = r;
  return TR_OK;
}

/* async-start / -update / -done wrapping a computation, with the
 * single-replica semantics of docs/SEMANTICS.md: the start runs the
 * wrapped computation at once and holds ((operands), result, context...)
 * (context zeros: it is the runtime's state, opaque to the program), an
 * update passes its operand on, the done takes the result out. */
static tr_status route_async(const ev_core *k, const tr_instr *in, ev_v **ops, ev_v **out) {
  const ev_domain *D = k->d;
  ev_ctx *c = k->ev;
  if (in->op != TR_OP_ASYNC_START) {
    if (in->noperands != 1 || ops[0]->kind != EV_TUPLE || ops[0]->nelems < 2)
      return ev_err(c, in, TR_ERR_INVALID, "%s needs the async-start or -update tuple", ev_opname(in));
    *out = ev_value_ref(in->op == TR_OP_ASYNC_UPDATE ? ops[0] : ops[0]->elems[1]);
    return TR_OK;
  }
  const tr_comp *f = tr_attr_comp(in, TR_ATTR_CALLS);
  const tr_shape *s = in->shape;
  if (!f) return ev_err(c, in, TR_ERR_INVALID, "async-start names no computation (calls=)");
  if (s->dtype != TR_DT_TUPLE || s->nelems < 2)
    return ev_err(c, in, TR_ERR_INVALID, "async-start's shape is not ((operands), result, context...)");
  ev_v *r = NULL;
  tr_status st = evc_call(k, in, f, ops, in->noperands, &r);
  if (st != TR_OK) return st;
  ev_v *t = ev_value_tuple(D->layout, s->nelems, NULL);
  ev_v *args = t->elems[0] = ev_value_tuple(D->layout, in->noperands, NULL);
  for (int i = 0; i < in->noperands; i++) args->elems[i] = ev_value_ref(ops[i]);
  t->elems[1] = r;
  for (int i = 2; i < s->nelems; i++)
    if (!(t->elems[i] = D->zero(k->dc, in, s->elems[i]))) {
      ev_value_unref(D->layout, t);
      return TR_ERR_UNSUPPORTED;
    }
  *out = t;
  return TR_OK;
}

bool evc_routes(tr_op op) {
  switch (op) {
  case TR_OP_CALL: case TR_OP_FUSION: case TR_OP_WHILE: case TR_OP_CONDITIONAL: case TR_OP_MAP:
  case TR_OP_ASYNC_START: case TR_OP_ASYNC_UPDATE: case TR_OP_ASYNC_DONE: case TR_OP_TUPLE:
  case TR_OP_GET_TUPLE_ELEMENT: case TR_OP_SCAN:
    return true;
  default: return false;
  }
}

tr_status evc_route(const ev_core *k, const tr_instr *in, ev_v **ops, ev_v **out) {
  const ev_domain *D = k->d;
  ev_ctx *c = k->ev;
  *out = NULL;
  switch (in->op) {
  case TR_OP_TUPLE:
    *out = ev_value_tuple(D->layout, in->noperands, NULL);
    for (int i = 0; i < in->noperands; i++) (*out)->elems[i] = ev_value_ref(ops[i]);
    return TR_OK;
  case TR_OP_GET_TUPLE_ELEMENT: {
    const tr_attr *ia = tr_instr_attr(in, TR_ATTR_INDEX);
    int64_t i = ia ? ia->u.i : -1;
    if (ops[0]->kind != EV_TUPLE || i < 0 || i >= ops[0]->nelems)
      return ev_err(c, in, TR_ERR_INVALID, "get-tuple-element index %lld is out of range", (long long)i);
    *out = ev_value_ref(ops[0]->elems[i]);
    return TR_OK;
  }
  case TR_OP_CALL: case TR_OP_FUSION: {
    const tr_comp *f = tr_attr_comp(in, in->op == TR_OP_CALL ? TR_ATTR_TO_APPLY : TR_ATTR_CALLS);
    if (!f) return ev_err(c, in, TR_ERR_INVALID, "%s names no computation", ev_opname(in));
    return evc_call(k, in, f, ops, in->noperands, out);
  }
  case TR_OP_WHILE: return route_while(k, in, ops, out);
  case TR_OP_CONDITIONAL: return route_conditional(k, in, ops, out);
  case TR_OP_MAP: return route_map(k, in, ops, out);
  case TR_OP_SCAN: return evc_route_scan(k, in, ops, out);
  case TR_OP_ASYNC_START: case TR_OP_ASYNC_UPDATE: case TR_OP_ASYNC_DONE:
    return route_async(k, in, ops, out);
  default: return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: %s", ev_opname(in));
  }
}

/* ---- entry ---- */

/* The value of a parameter (leaf) of shape s from args[*next...]. */
static tr_status bind_one(const ev_core *k, const tr_instr *p, const tr_shape *s,
                          tr_tensor *const *args, int nargs, int *next, bool top, ev_v **out) {
  const ev_domain *D = k->d;
  ev_ctx *c = k->ev;
  if (s->dtype == TR_DT_TUPLE) {
    ev_v *t = ev_value_tuple(D->layout, s->nelems, NULL);
    for (int i = 0; i < s->nelems; i++) {
      tr_status st = bind_one(k, p, s->elems[i], args, nargs, next, false, &t->elems[i]);
      if (st != TR_OK) {
        ev_value_unref(D->layout, t);
        return st;
      }
    }
    *out = t;
    return TR_OK;
  }
  if (s->dtype == TR_DT_TOKEN) {
    *out = ev_value_token(D->layout);
    return TR_OK;
  }
  if (!tr_dtype_is_array(s->dtype))
    return ev_err(c, p, TR_ERR_UNSUPPORTED, "unsupported: %s parameter", tr_dtype_name(s->dtype));
  if (*next >= nargs)
    return ev_err(c, p, TR_ERR_USAGE, "parameter needs argument %d but only %d were given",
                  *next, nargs);
  const tr_tensor *a = args[*next];
  bool ok = a && a->dtype == s->dtype && a->rank == s->rank;
  for (int i = 0; ok && i < s->rank; i++) ok = a->dims[i] == s->dims[i];
  if (!ok) {
    tr_buf want = {0}, got = {0};
    tr_shape_print(&want, s, false);
    if (a) tr_tensor_print_type(&got, a);
    else tr_buf_puts(&got, "nothing");
    ev_err(c, p, TR_ERR_USAGE, "argument %d is %s but the parameter is %s", *next,
           tr_buf_str(&got), tr_buf_str(&want));
    tr_buf_free(&want);
    tr_buf_free(&got);
    return TR_ERR_USAGE;
  }
  (*next)++;
  return D->arg(k->dc, p, a, top, out);
}

tr_status evc_bind(const ev_core *k, const tr_comp *e, tr_tensor *const *args, int nargs,
                   ev_v **params) {
  tr_status st = TR_OK;
  int next = 0;
  for (int i = 0; i < e->nparams && st == TR_OK; i++) {
    const tr_instr *p = e->params ? e->params[i] : NULL;
    if (!p || !p->shape) st = ev_err(k->ev, NULL, TR_ERR_INVALID, "entry parameter %d is missing", i);
    else st = bind_one(k, p, p->shape, args, nargs, &next, true, &params[i]);
  }
  if (st == TR_OK && next != nargs)
    st = ev_err(k->ev, NULL, TR_ERR_USAGE, "%d argument(s) given but the entry takes %d", nargs, next);
  return st;
}

static void leaves(const ev_core *k, ev_v *v, ev_v ***out, int *n, int *cap) {
  ev_kind kd = v->kind;
  if (kd == EV_ARRAY) {
    if (*n == *cap) {
      *cap = *cap ? *cap * 2 : 4;
      *out = tr_xrealloc(*out, sizeof(ev_v *) * (size_t)*cap);
    }
    (*out)[(*n)++] = v;
    return;
  }
  if (kd == EV_TUPLE)
    for (int i = 0; i < v->nelems; i++) leaves(k, v->elems[i], out, n, cap);
}

ev_v **evc_leaves(const ev_core *k, ev_v *v, int *n) {
  ev_v **out = NULL;
  int cap = 0;
  *n = 0;
  leaves(k, v, &out, n, &cap);
  if (!out) out = tr_xcalloc(1, sizeof(ev_v *));
  return out;
}
