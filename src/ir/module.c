/* module.c - the op and attribute tables, and building, cloning and
 * querying modules, computations and instructions. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

#define K TR_OPF_K
#define E TR_OPF_E
#define C TR_OPF_C
#define I TR_OPF_I
#define S TR_OPF_S
#define M TR_OPF_M
#define P TR_OPF_P
const tr_op_info tr_ops[TR_OP_COUNT] = {
#define X(En, name, arity, rule, types, flags, attrs, w, cls, modes) \
  {name, arity, TR_RULE_##rule, types, (unsigned)(flags), attrs, w, TR_OPC_##cls, modes},
#include "ops.def"
#undef X
};
#undef K
#undef E
#undef C
#undef I
#undef S
#undef M
#undef P

const tr_attr_info tr_attrs[TR_ATTR_COUNT] = {
#define X(En, name, kind, allowed) {name, TR_AK_##kind, allowed},
#include "attrs.def"
#undef X
};

bool tr_op_can(tr_op op, tr_mode m) {
  return (unsigned)op < TR_OP_COUNT && strchr(tr_ops[op].modes, (int)m) != NULL;
}

bool tr_op_is_unary_kernel(tr_op op) {
  if ((unsigned)op >= TR_OP_COUNT) return false;
  tr_opclass c = tr_ops[op].cls;
  return c == TR_OPC_UFLOAT || c == TR_OPC_UNUM || c == TR_OPC_UINT;
}

bool tr_op_is_binary_kernel(tr_op op) {
  if ((unsigned)op >= TR_OP_COUNT) return false;
  return tr_ops[op].cls == TR_OPC_BARITH || tr_ops[op].cls == TR_OPC_BBIT;
}

bool tr_op_lookup(const char *s, size_t n, tr_op *op) {
  for (int i = 0; i < TR_OP_COUNT; i++) {
    const char *nm = tr_ops[i].name;
    if (nm[0] && strlen(nm) == n && memcmp(nm, s, n) == 0) {
      *op = (tr_op)i;
      return true;
    }
  }
  return false;
}

bool tr_attr_lookup(const char *s, size_t n, tr_attr_key *k) {
  for (int i = 0; i < TR_ATTR_COUNT; i++) {
    if (strlen(tr_attrs[i].name) == n && memcmp(tr_attrs[i].name, s, n) == 0) {
      *k = (tr_attr_key)i;
      return true;
    }
  }
  return false;
}

bool tr_attr_value_allowed(const char *allowed, const char *v) {
  size_t n = strlen(v);
  for (const char *q = allowed; *q;) {
    const char *e = strchr(q, '|');
    if (!e) e = q + strlen(q);
    if ((size_t)(e - q) == n && memcmp(q, v, n) == 0) return true;
    q = *e ? e + 1 : e;
  }
  return false;
}

bool tr_op_models_attr(tr_op op, tr_attr_key k, bool *required) {
  const char *p = tr_ops[op].attrs, *nm = tr_attrs[k].name;
  size_t n = strlen(nm);
  while (*p) {
    while (*p == ' ') p++;
    bool req = *p == '+';
    if (req) p++;
    const char *e = p;
    while (*e && *e != ' ') e++;
    if ((size_t)(e - p) == n && memcmp(p, nm, n) == 0) {
      if (required) *required = req;
      return true;
    }
    p = e;
  }
  return false;
}

/* ---- shapes ---- */
bool tr_shape_is_array(const tr_shape *s) { return tr_dtype_is_array(s->dtype); }

int64_t tr_shape_count(const tr_shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0) return -1;
    n *= s->dims[i];
  }
  return n;
}

bool tr_shape_same_dims(const tr_shape *a, const tr_shape *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

bool tr_shape_equal(const tr_shape *a, const tr_shape *b) {
  if (a->dtype != b->dtype || a->buffer != b->buffer) return false;
  if (a->dtype == TR_DT_TUPLE) {
    if (a->nelems != b->nelems) return false;
    for (int i = 0; i < a->nelems; i++)
      if (!tr_shape_equal(a->elems[i], b->elems[i])) return false;
    return true;
  }
  return tr_shape_same_dims(a, b);
}

tr_shape *tr_shape_clone(tr_arena *a, const tr_shape *s) {
  tr_shape *c = tr_arena_memdup(a, s, sizeof *s);
  if (s->rank) {
    c->dims = tr_arena_memdup(a, s->dims, sizeof(int64_t) * (size_t)s->rank);
    if (s->dynamic) c->dynamic = tr_arena_memdup(a, s->dynamic, (size_t)s->rank);
  }
  if (s->layout)
    c->layout = tr_arena_memdup(a, s->layout, sizeof(int64_t) * (size_t)s->rank);
  if (s->layout_ext) c->layout_ext = tr_arena_strdup(a, s->layout_ext);
  if (s->nelems) {
    c->elems = tr_arena_alloc(a, sizeof(tr_shape *) * (size_t)s->nelems);
    for (int i = 0; i < s->nelems; i++) c->elems[i] = tr_shape_clone(a, s->elems[i]);
  }
  return c;
}

tr_shape *tr_shape_array(tr_arena *a, tr_dtype dt, int rank, const int64_t *dims) {
  tr_shape *s = tr_arena_alloc(a, sizeof *s);
  s->dtype = dt;
  s->rank = rank;
  if (rank) s->dims = tr_arena_memdup(a, dims, sizeof(int64_t) * (size_t)rank);
  return s;
}

tr_shape *tr_shape_tuple(tr_arena *a, int n, tr_shape *const *elems) {
  tr_shape *s = tr_arena_alloc(a, sizeof *s);
  s->dtype = TR_DT_TUPLE;
  s->nelems = n;
  if (n) s->elems = tr_arena_memdup(a, elems, sizeof(tr_shape *) * (size_t)n);
  return s;
}

/* ---- modules ---- */
tr_module *tr_module_new(const char *name) {
  tr_arena *a = tr_arena_new();
  tr_module *m = tr_arena_alloc(a, sizeof *m);
  m->arena = a;
  m->name = tr_arena_strdup(a, name ? name : "module");
  return m;
}

void tr_module_free(tr_module *m) {
  if (!m) return;
  /* Growable arrays (instruction lists, users, comps) are arena-backed
   * too, so one free releases everything. */
  tr_arena_free(m->arena);
}

/* Arena-backed growth: old blocks are abandoned in the arena, which is fine
 * because lists double and so waste at most as much as they hold. */
static void *grow(tr_arena *a, void *p, int n, int *cap, size_t elem) {
  if (n < *cap) return p;
  int nc = *cap ? *cap * 2 : 4;
  void *q = tr_arena_alloc(a, elem * (size_t)nc);
  if (n) memcpy(q, p, elem * (size_t)n);
  *cap = nc;
  return q;
}

tr_comp *tr_comp_new(tr_module *m, const char *name) {
  tr_comp *c = tr_arena_alloc(m->arena, sizeof *c);
  c->id = m->next_id++;
  c->name = tr_arena_strdup(m->arena, name);
  c->module = m;
  m->comps = grow(m->arena, m->comps, m->ncomps, &m->capcomps, sizeof(tr_comp *));
  m->comps[m->ncomps++] = c;
  return c;
}

tr_comp *tr_module_find_comp(const tr_module *m, const char *name) {
  for (int i = 0; i < m->ncomps; i++)
    if (strcmp(m->comps[i]->name, name) == 0) return m->comps[i];
  return NULL;
}

tr_instr *tr_comp_find(const tr_comp *c, const char *name) {
  for (int i = 0; i < c->ninstrs; i++)
    if (strcmp(c->instrs[i]->name, name) == 0) return c->instrs[i];
  return NULL;
}

tr_instr *tr_instr_new(tr_module *m, tr_op op, const char *name, tr_shape *shape) {
  tr_instr *in = tr_arena_alloc(m->arena, sizeof *in);
  in->id = m->next_id++;
  in->op = op;
  in->opname = tr_ops[op].name;
  in->name = tr_arena_strdup(m->arena, name);
  in->shape = shape;
  return in;
}

void tr_comp_append(tr_comp *c, tr_instr *in) {
  tr_arena *a = c->module->arena;
  c->instrs = grow(a, c->instrs, c->ninstrs, &c->capinstrs, sizeof(tr_instr *));
  c->instrs[c->ninstrs++] = in;
  in->parent = c;
}

void tr_instr_add_user(tr_instr *in, tr_instr *user) {
  /* A user's operands are added together, so a repeat (add(x, x)) can only
   * be the latest entry: checking it keeps this O(1) for values with
   * thousands of users. */
  if (in->nusers && in->users[in->nusers - 1] == user) return;
  tr_arena *a = in->parent ? in->parent->module->arena : user->parent->module->arena;
  in->users = grow(a, in->users, in->nusers, &in->capusers, sizeof(tr_instr *));
  in->users[in->nusers++] = user;
}

void tr_instr_set_operands(tr_instr *in, tr_instr **ops, int n) {
  tr_arena *a = in->parent->module->arena;
  in->operands = n ? tr_arena_memdup(a, ops, sizeof(tr_instr *) * (size_t)n) : NULL;
  in->noperands = n;
  for (int i = 0; i < n; i++) tr_instr_add_user(ops[i], in);
}

void tr_module_rebuild_users(tr_module *m) {
  for (int c = 0; c < m->ncomps; c++)
    for (int i = 0; i < m->comps[c]->ninstrs; i++) m->comps[c]->instrs[i]->nusers = 0;
  for (int c = 0; c < m->ncomps; c++)
    for (int i = 0; i < m->comps[c]->ninstrs; i++) {
      tr_instr *in = m->comps[c]->instrs[i];
      for (int k = 0; k < in->noperands; k++) tr_instr_add_user(in->operands[k], in);
    }
}

/* ---- editing ---- */
static bool uses(const tr_instr *user, const tr_instr *in) {
  for (int i = 0; i < user->noperands; i++)
    if (user->operands[i] == in) return true;
  return false;
}

void tr_instr_remove_user(tr_instr *in, tr_instr *user) {
  int k = 0;
  for (int i = 0; i < in->nusers; i++)
    if (in->users[i] != user) in->users[k++] = in->users[i];
  in->nusers = k;
}

/* Adds user to in's list unless it is already there (anywhere). */
static void add_user_once(tr_instr *in, tr_instr *user) {
  for (int i = 0; i < in->nusers; i++)
    if (in->users[i] == user) return;
  tr_arena *a = in->parent->module->arena;
  in->users = grow(a, in->users, in->nusers, &in->capusers, sizeof(tr_instr *));
  in->users[in->nusers++] = user;
}

void tr_instr_replace_operand(tr_instr *in, int i, tr_instr *with) {
  TR_ASSERT(i >= 0 && i < in->noperands);
  tr_instr *old = in->operands[i];
  if (old == with) return;
  in->operands[i] = with;
  if (!uses(in, old)) tr_instr_remove_user(old, in);
  add_user_once(with, in);
}

void tr_instr_replace_uses(tr_instr *old, tr_instr *with) {
  TR_ASSERT(old != with);
  /* Copy: the user list shrinks as operands are redirected. */
  int n = old->nusers;
  tr_instr **us = tr_xmalloc(sizeof(tr_instr *) * (size_t)(n + 1));
  if (n) memcpy(us, old->users, sizeof(tr_instr *) * (size_t)n);
  for (int k = 0; k < n; k++)
    for (int i = 0; i < us[k]->noperands; i++)
      if (us[k]->operands[i] == old) tr_instr_replace_operand(us[k], i, with);
  tr_free(us);
  if (old->parent && old->parent->root == old) old->parent->root = with;
}

void tr_comp_insert_before(tr_comp *c, tr_instr *pos, tr_instr *in) {
  tr_comp_append(c, in);
  if (!pos) return;
  int at = -1;
  for (int i = 0; i < c->ninstrs; i++)
    if (c->instrs[i] == pos) at = i;
  TR_ASSERT(at >= 0);
  memmove(&c->instrs[at + 1], &c->instrs[at], sizeof(tr_instr *) * (size_t)(c->ninstrs - 1 - at));
  c->instrs[at] = in;
}

void tr_comp_remove(tr_comp *c, tr_instr *in) {
  TR_ASSERT(in->nusers == 0 && c->root != in && in->parent == c);
  for (int i = 0; i < in->noperands; i++) tr_instr_remove_user(in->operands[i], in);
  int k = 0;
  for (int i = 0; i < c->ninstrs; i++)
    if (c->instrs[i] != in) c->instrs[k++] = c->instrs[i];
  c->ninstrs = k;
  if (in->op == TR_OP_PARAMETER && in->param_index < c->nparams && c->params[in->param_index] == in)
    c->params[in->param_index] = NULL;
  in->parent = NULL;
}

/* done[id]: 0 = not in the module, 1 = to visit, 2 = visited. A called
 * computation missing from the module (an invalid module) is skipped, so
 * out never gets more than m->ncomps entries. */
static void callee_visit(const tr_module *m, tr_comp *c, unsigned char *done, tr_comp **out,
                         int *n) {
  if (c->id < 0 || c->id >= m->next_id || done[c->id] != 1) return;
  done[c->id] = 2; /* set first: a (bad) cycle cannot recurse forever */
  for (int i = 0; i < c->ninstrs; i++) {
    tr_comp *called[64];
    int k = tr_instr_called(c->instrs[i], called, 64);
    if (k > 64) {
      tr_comp **all = tr_xmalloc(sizeof(tr_comp *) * (size_t)k);
      tr_instr_called(c->instrs[i], all, k);
      for (int j = 0; j < k; j++) callee_visit(m, all[j], done, out, n);
      tr_free(all);
    } else {
      for (int j = 0; j < k; j++) callee_visit(m, called[j], done, out, n);
    }
  }
  out[(*n)++] = c;
}

void tr_module_callee_order(const tr_module *m, tr_comp **out) {
  /* Post-order from each computation in stored order: a stored order that
   * is already callee-first comes out unchanged. */
  unsigned char *done = tr_xcalloc((size_t)m->next_id + 1, 1);
  for (int i = 0; i < m->ncomps; i++) done[m->comps[i]->id] = 1;
  int n = 0;
  for (int i = 0; i < m->ncomps; i++) callee_visit(m, m->comps[i], done, out, &n);
  tr_free(done);
}

tr_attr *tr_instr_attr(const tr_instr *in, tr_attr_key k) {
  for (int i = 0; i < in->nattrs; i++)
    if (in->attrs[i].key == k) return &in->attrs[i];
  return NULL;
}

const int64_t *tr_attr_ints(const tr_instr *in, tr_attr_key k, int *n) {
  const tr_attr *at = tr_instr_attr(in, k);
  bool ok = at && at->kind == TR_AK_INTS;
  *n = ok ? at->n : 0;
  return ok ? at->u.ints : NULL;
}

int64_t tr_attr_int(const tr_instr *in, tr_attr_key k, int64_t def) {
  const tr_attr *at = tr_instr_attr(in, k);
  return at && at->kind == TR_AK_INT ? at->u.i : def;
}

bool tr_attr_bool(const tr_instr *in, tr_attr_key k) {
  const tr_attr *at = tr_instr_attr(in, k);
  return at && at->kind == TR_AK_BOOL && at->u.b;
}

const char *tr_attr_ident(const tr_instr *in, tr_attr_key k) {
  const tr_attr *at = tr_instr_attr(in, k);
  return at && at->kind == TR_AK_IDENT ? at->u.s : NULL;
}

tr_comp *tr_attr_comp(const tr_instr *in, tr_attr_key k) {
  const tr_attr *at = tr_instr_attr(in, k);
  return at && at->kind == TR_AK_COMP ? at->u.comp : NULL;
}

bool tr_ints_has(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

tr_attr *tr_instr_add_attr(tr_module *m, tr_instr *in, tr_attr_key k,
                           tr_attr_kind kind, const char *name) {
  /* Doubling, so an instruction with many attributes costs linear time
   * and memory. The array grows in place only while attrs is still the
   * one made here: one set or shared by other code is copied first. */
  if (in->attrs != in->attrs_buf || in->nattrs >= in->capattrs) {
    int cap = in->nattrs < 4 ? 4 : in->nattrs * 2;
    tr_attr *na = tr_arena_alloc(m->arena, sizeof(tr_attr) * (size_t)cap);
    if (in->nattrs) memcpy(na, in->attrs, sizeof(tr_attr) * (size_t)in->nattrs);
    in->attrs = in->attrs_buf = na;
    in->capattrs = cap;
  }
  tr_attr *at = &in->attrs[in->nattrs++];
  at->key = k;
  at->kind = kind;
  at->name = name ? tr_arena_strdup(m->arena, name)
                  : (k < TR_ATTR_COUNT ? tr_attrs[k].name : "?");
  return at;
}

int tr_instr_called(const tr_instr *in, tr_comp **out, int max) {
  int n = 0;
  for (int i = 0; i < in->nattrs; i++) {
    const tr_attr *at = &in->attrs[i];
    if (at->kind == TR_AK_COMP) {
      if (n < max) out[n] = at->u.comp;
      n++;
    } else if (at->kind == TR_AK_COMPS) {
      for (int k = 0; k < at->n; k++) {
        if (n < max) out[n] = at->u.comps[k];
        n++;
      }
    }
  }
  return n;
}

tr_comp *tr_instr_fused(const tr_instr *in) {
  if (in->op != TR_OP_FUSION) return NULL;
  tr_attr *at = tr_instr_attr(in, TR_ATTR_CALLS);
  return at ? at->u.comp : NULL;
}

bool tr_comp_is_fusion_body(const tr_module *m, const tr_comp *c) {
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++)
      if (tr_instr_fused(m->comps[k]->instrs[i]) == c) return true;
  return false;
}

/* ---- deep clone ---- */
typedef struct {
  const tr_module *src; /* module being copied */
  tr_module *dst;       /* the copy */
  tr_instr **imap;      /* old id -> new instruction */
  tr_comp **cmap;       /* old id -> new computation */
} cloner;

static tr_literal *clone_literal(tr_arena *a, const tr_literal *l) {
  tr_literal *c = tr_arena_memdup(a, l, sizeof *l);
  c->shape = tr_shape_clone(a, l->shape);
  if (l->data) {
    size_t n = (size_t)tr_shape_count(l->shape) * (size_t)tr_dtype_size(l->shape->dtype);
    c->data = tr_arena_memdup(a, l->data, n);
  }
  if (l->nelems) {
    c->elems = tr_arena_alloc(a, sizeof(tr_literal *) * (size_t)l->nelems);
    for (int i = 0; i < l->nelems; i++) c->elems[i] = clone_literal(a, l->elems[i]);
  }
  return c;
}

static void clone_attr(cloner *cl, tr_attr *d, const tr_attr *s) {
  tr_arena *a = cl->dst->arena;
  *d = *s;
  d->name = tr_arena_strdup(a, s->name);
  size_t n = (size_t)s->n;
  switch (s->kind) {
  case TR_AK_STR: case TR_AK_IDENT: case TR_AK_RAW:
    d->u.s = tr_arena_strdup(a, s->u.s);
    break;
  case TR_AK_INTS:
    d->u.ints = tr_arena_memdup(a, s->u.ints, sizeof(int64_t) * n);
    break;
  case TR_AK_INTSS:
    d->u.intss.lens = tr_arena_memdup(a, s->u.intss.lens, sizeof(int) * n);
    d->u.intss.v = tr_arena_alloc(a, sizeof(int64_t *) * n);
    for (size_t i = 0; i < n; i++)
      d->u.intss.v[i] = tr_arena_memdup(a, s->u.intss.v[i],
                                        sizeof(int64_t) * (size_t)s->u.intss.lens[i]);
    break;
  case TR_AK_COMP: d->u.comp = cl->cmap[s->u.comp->id]; break;
  case TR_AK_COMPS:
    d->u.comps = tr_arena_alloc(a, sizeof(tr_comp *) * n);
    for (size_t i = 0; i < n; i++) d->u.comps[i] = cl->cmap[s->u.comps[i]->id];
    break;
  case TR_AK_INSTRS:
    d->u.instrs = tr_arena_alloc(a, sizeof(tr_instr *) * n);
    for (size_t i = 0; i < n; i++) d->u.instrs[i] = cl->imap[s->u.instrs[i]->id];
    break;
  case TR_AK_SLICE: d->u.slice = tr_arena_memdup(a, s->u.slice, sizeof(tr_slice_dim) * n); break;
  case TR_AK_PADDING: d->u.pad = tr_arena_memdup(a, s->u.pad, sizeof(tr_pad_dim) * n); break;
  case TR_AK_WINDOW: d->u.win = tr_arena_memdup(a, s->u.win, sizeof(tr_window_dim) * n); break;
  case TR_AK_DIMLABELS: {
    tr_convdims *c = tr_arena_memdup(a, s->u.conv, sizeof *c);
    size_t ns = (size_t)c->nspatial * sizeof(int64_t);
    c->in_spatial = tr_arena_memdup(a, s->u.conv->in_spatial, ns);
    c->k_spatial = tr_arena_memdup(a, s->u.conv->k_spatial, ns);
    c->out_spatial = tr_arena_memdup(a, s->u.conv->out_spatial, ns);
    d->u.conv = c;
    break;
  }
  case TR_AK_INT: case TR_AK_BOOL: break;
  }
}

tr_module *tr_module_clone(const tr_module *m) {
  tr_module *d = tr_module_new(m->name);
  tr_arena *a = d->arena;
  cloner cl = {m, d, NULL, NULL};
  cl.imap = tr_xcalloc((size_t)m->next_id + 1, sizeof(tr_instr *));
  cl.cmap = tr_xcalloc((size_t)m->next_id + 1, sizeof(tr_comp *));
  d->file = m->file ? tr_arena_strdup(a, m->file) : NULL;
  d->frames = m->frames ? tr_arena_strdup(a, m->frames) : NULL;
  d->nhattrs = m->nhattrs;
  d->hattrs = tr_arena_alloc(a, sizeof(tr_header_attr) * (size_t)(m->nhattrs + 1));
  for (int i = 0; i < m->nhattrs; i++) {
    d->hattrs[i].name = tr_arena_strdup(a, m->hattrs[i].name);
    d->hattrs[i].text = tr_arena_strdup(a, m->hattrs[i].text);
  }
  /* Pass 1: computations and instructions (ids kept). */
  for (int c = 0; c < m->ncomps; c++) {
    const tr_comp *sc = m->comps[c];
    tr_comp *dc = tr_comp_new(d, sc->name);
    dc->id = sc->id;
    dc->is_entry = sc->is_entry;
    dc->exec_thread = sc->exec_thread ? tr_arena_strdup(a, sc->exec_thread) : NULL;
    dc->line = sc->line;
    dc->col = sc->col;
    cl.cmap[sc->id] = dc;
    if (sc == m->entry) d->entry = dc;
    for (int i = 0; i < sc->ninstrs; i++) {
      const tr_instr *si = sc->instrs[i];
      tr_instr *di = tr_instr_new(d, si->op, si->name, tr_shape_clone(a, si->shape));
      di->id = si->id;
      di->opname = tr_arena_strdup(a, si->opname);
      di->param_index = si->param_index;
      di->operand_shapes = si->operand_shapes;
      di->line = si->line;
      di->col = si->col;
      if (si->literal) di->literal = clone_literal(a, si->literal);
      tr_comp_append(dc, di);
      cl.imap[si->id] = di;
    }
  }
  d->next_id = m->next_id;
  /* Pass 2: edges, attributes, roots, parameters. */
  for (int c = 0; c < m->ncomps; c++) {
    const tr_comp *sc = m->comps[c];
    tr_comp *dc = cl.cmap[sc->id];
    for (int i = 0; i < sc->ninstrs; i++) {
      const tr_instr *si = sc->instrs[i];
      tr_instr *di = cl.imap[si->id];
      tr_instr **ops = tr_xmalloc(sizeof(tr_instr *) * (size_t)(si->noperands + 1));
      for (int k = 0; k < si->noperands; k++) ops[k] = cl.imap[si->operands[k]->id];
      tr_instr_set_operands(di, ops, si->noperands);
      tr_free(ops);
      di->nattrs = si->nattrs;
      di->attrs = tr_arena_alloc(a, sizeof(tr_attr) * (size_t)(si->nattrs + 1));
      for (int k = 0; k < si->nattrs; k++) clone_attr(&cl, &di->attrs[k], &si->attrs[k]);
    }
    dc->root = sc->root ? cl.imap[sc->root->id] : NULL;
    dc->nparams = sc->nparams;
    dc->params = tr_arena_alloc(a, sizeof(tr_instr *) * (size_t)(sc->nparams + 1));
    for (int k = 0; k < sc->nparams; k++)
      dc->params[k] = sc->params[k] ? cl.imap[sc->params[k]->id] : NULL;
  }
  tr_free(cl.imap);
  tr_free(cl.cmap);
  return d;
}
