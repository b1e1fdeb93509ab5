/* same.c - structural equality with names aside: whether the module a
 * compiler says it received is the module trench sent it. Names, metadata
 * and instruction order change on the way through a compiler's importer
 * (XLA's HLO -> MLIR -> HLO trip renames everything and reorders); what
 * must not change is the program: each instruction's opcode, shape,
 * literal, attributes and the structure of its operands.
 *
 * Every instruction gets a key string whose operands are the numbers of
 * their own keys in one table shared by both modules (hash consing), so
 * equal structures get equal numbers whatever their names; called
 * computations are numbered by their parameters and root. The modules are
 * the same program when the entries hold the same multiset of numbers and
 * the called computations the same set. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  char **keys;    /* by number */
  char **shows;   /* by number: the key with operands as opcodes, for diffs */
  int n, cap;
  tr_strmap index; /* key -> number + 1 */
} keytab;

/* The number of key (taking ownership of key and show when new). */
static int tab_intern(keytab *t, char *key, char *show) {
  intptr_t i = (intptr_t)tr_strmap_get(&t->index, key);
  if (i) {
    tr_free(key);
    tr_free(show);
    return (int)i - 1;
  }
  if (t->n == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 256;
    t->keys = tr_xrealloc(t->keys, sizeof(char *) * (size_t)t->cap);
    t->shows = tr_xrealloc(t->shows, sizeof(char *) * (size_t)t->cap);
  }
  t->keys[t->n] = key;
  t->shows[t->n] = show;
  tr_strmap_put(&t->index, key, (void *)(intptr_t)(t->n + 1));
  return t->n++;
}

static void tab_free(keytab *t) {
  for (int i = 0; i < t->n; i++) {
    tr_free(t->keys[i]);
    tr_free(t->shows[i]);
  }
  tr_free(t->keys);
  tr_free(t->shows);
  tr_strmap_free(&t->index);
}

static char *take(tr_buf *b) {
  char *s = tr_xstrdup(tr_buf_str(b));
  tr_buf_free(b);
  return s;
}

/* A shape; a layout only where it is not the default one (major to minor
 * in dimension order), which the importer writes out everywhere. */
static void put_shape(tr_buf *b, const tr_shape *s) {
  if (s->dtype == TR_DT_TUPLE) {
    tr_buf_putc(b, '(');
    for (int i = 0; i < s->nelems; i++) {
      if (i) tr_buf_puts(b, ", ");
      put_shape(b, s->elems[i]);
    }
    tr_buf_putc(b, ')');
    return;
  }
  bool dflt = !s->layout_ext || !s->layout_ext[0];
  for (int i = 0; dflt && s->layout && i < s->rank; i++) dflt = s->layout[i] == s->rank - 1 - i;
  tr_shape_print(b, s, !dflt);
}

/* Attributes that say nothing about what is computed. */
static bool ignored_attr(const char *name) {
  static const char *const names[] = {"metadata", "frontend_attributes", "statistics", "origin",
                                      "control-predecessors", NULL};
  for (int i = 0; names[i]; i++)
    if (strcmp(name, names[i]) == 0) return true;
  return false;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct {
  keytab *tab;
  int *num;       /* by instruction id: its number, -1 not yet */
  int *cnum;      /* by computation id: its number */
  /* Canonical numbering (tr_module_same_canonical), else NULL: */
  const tr_instr **base; /* by id: what a reshape-like chain reshapes */
  char **splat;          /* by id: "DTYPE bytes" of a splat value, or NULL */
  char **leaves;         /* by id: a tuple's flattened leaf numbers */
  int nids;
} numbering;

/* ---- canonical forms ----
 * XLA's HLO -> MLIR -> HLO trip rewrites a module in ways that compute
 * the same values: it drops unused and duplicate instructions, identity
 * moves (a broadcast, reshape, transpose or convert to the same shape),
 * layouts, folds reshape chains (a broadcast that only adds size-1 dims
 * is a reshape), writes a splat constant as a broadcast scalar, flattens
 * nested output tuples, forwards get-tuple-element of a tuple and may
 * swap the operands of a commutative op. Canonical numbering gives each
 * of these pairs one number, so two modules that differ only so have the
 * same root number. Anything else (a folded computation, another op) is
 * still a difference. */

static bool same_dims(const tr_shape *a, const tr_shape *b) {
  if (a->dtype != b->dtype || a->rank != b->rank || a->dtype == TR_DT_TUPLE) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

/* Whether in reads its operand's elements in row-major order unchanged
 * (a reshape, or a broadcast that only inserts size-1 dims). */
static bool reshape_like(const tr_instr *in) {
  if (in->noperands != 1 || !tr_shape_is_array(in->shape) || !tr_shape_is_array(in->operands[0]->shape) ||
      in->shape->dtype != in->operands[0]->shape->dtype)
    return false;
  if (in->op == TR_OP_RESHAPE) return true;
  if (in->op != TR_OP_BROADCAST) return false;
  int n = 0;
  const int64_t *d = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
  const tr_shape *o = in->operands[0]->shape;
  if (n != o->rank) return false;
  int64_t added = tr_shape_count(in->shape), kept = tr_shape_count(o);
  if (added != kept) return false;
  for (int i = 0; i < n; i++)
    if ((i && d[i] <= d[i - 1]) || d[i] < 0 || d[i] >= in->shape->rank || in->shape->dims[d[i]] != o->dims[i])
      return false;
  return true;
}

/* Whether in gives its operand unchanged. */
static bool identity(const tr_instr *in) {
  if (in->noperands < 1 || (in->noperands != 1 && in->op != TR_OP_DYNAMIC_SLICE)) return false;
  const tr_shape *o = in->operands[0]->shape;
  if (in->op == TR_OP_COPY) return true;
  if (!same_dims(in->shape, o)) return false;
  int n = 0;
  const int64_t *d = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
  switch (in->op) {
  /* same dims: a full slice, a dynamic slice whose starts clamp to 0 */
  case TR_OP_RESHAPE: case TR_OP_CONVERT: case TR_OP_BITCAST: case TR_OP_SLICE: case TR_OP_DYNAMIC_SLICE:
    return true;
  case TR_OP_REDUCE_PRECISION: {
    /* as many exponent and mantissa bits as the type has: nothing rounds */
    const tr_dtype_info *f = &tr_dtypes[o->dtype];
    return f->kind == TR_DK_FLOAT && tr_attr_int(in, TR_ATTR_EXPONENT_BITS, -1) >= f->ebits &&
           tr_attr_int(in, TR_ATTR_MANTISSA_BITS, -1) >= f->mbits;
  }
  case TR_OP_BROADCAST: case TR_OP_TRANSPOSE:
    if (n != o->rank) return false;
    for (int i = 0; i < n; i++)
      if (d[i] != i) return false;
    return true;
  default: return false;
  }
}

/* "DTYPE bytes" when every element of constant in holds the same bits. */
static char *splat_of(const tr_instr *in) {
  const tr_literal *l = in->literal;
  if (!l || l->elided || !tr_shape_is_array(in->shape)) return NULL;
  size_t es = (size_t)tr_dtype_size(in->shape->dtype);
  int64_t n = tr_shape_count(in->shape);
  const unsigned char *p = l->single ? l->one : l->data;
  if (n < 1 || !p || es == 0 || es > 16) return NULL;
  if (l->single && n > 1) {
    /* element 0 is the value, the rest zero */
    for (size_t j = 0; j < es; j++)
      if (p[j]) return NULL;
  } else {
    for (int64_t i = 1; i < n; i++)
      if (memcmp(p, p + (size_t)i * es, es) != 0) return NULL;
  }
  tr_buf b = {0};
  tr_buf_printf(&b, "%s ", tr_dtype_name(in->shape->dtype));
  for (size_t j = 0; j < es; j++) tr_buf_printf(&b, "%02x", p[j]);
  return take(&b);
}

/* The number in gets without a key of its own, or -1: forwarded to an
 * operand's, or a splat's or a reshape chain's key. */
static int canon_number(numbering *nb, const tr_instr *in, tr_buf *k) {
  const tr_instr *op0 = in->noperands ? in->operands[0] : NULL;
  if (in->op == TR_OP_CONSTANT && (nb->splat[in->id] = splat_of(in))) {
    tr_shape_print(k, in->shape, false);
    tr_buf_printf(k, " splat(%s)", nb->splat[in->id]);
    return -2;
  }
  if (op0 && nb->num[op0->id] >= 0 && identity(in)) {
    if (nb->splat[op0->id]) nb->splat[in->id] = tr_xstrdup(nb->splat[op0->id]);
    nb->base[in->id] = nb->base[op0->id];
    return nb->num[op0->id];
  }
  if (op0 && nb->splat[op0->id] && tr_shape_is_array(in->shape) &&
      (in->op == TR_OP_BROADCAST || in->op == TR_OP_RESHAPE || in->op == TR_OP_TRANSPOSE)) {
    nb->splat[in->id] = tr_xstrdup(nb->splat[op0->id]);
    tr_shape_print(k, in->shape, false);
    tr_buf_printf(k, " splat(%s)", nb->splat[in->id]);
    return -2;
  }
  if (op0 && reshape_like(in)) {
    const tr_instr *b = nb->base[op0->id] ? nb->base[op0->id] : op0;
    nb->base[in->id] = b;
    if (same_dims(in->shape, b->shape)) return nb->num[b->id];
    tr_shape_print(k, in->shape, false);
    tr_buf_printf(k, " reshape(#%d)", nb->num[b->id]);
    return -2;
  }
  /* An iota along dim k, or a 1-d iota broadcast along k. */
  int64_t iota_dim = -1;
  if (in->op == TR_OP_IOTA && tr_shape_is_array(in->shape))
    iota_dim = tr_attr_int(in, TR_ATTR_IOTA_DIMENSION, -1);
  if (in->op == TR_OP_BROADCAST && op0 && op0->op == TR_OP_IOTA && op0->shape->rank == 1 &&
      op0->shape->dtype == in->shape->dtype) {
    int n = 0;
    const int64_t *d = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
    if (n == 1 && in->shape->dims[d[0]] == op0->shape->dims[0]) iota_dim = d[0];
  }
  if (iota_dim >= 0) {
    tr_shape_print(k, in->shape, false);
    tr_buf_printf(k, " iota(%lld)", (long long)iota_dim);
    return -2;
  }
  if (in->op == TR_OP_GET_TUPLE_ELEMENT && op0 && op0->op == TR_OP_TUPLE) {
    int64_t i = tr_attr_int(in, TR_ATTR_INDEX, -1);
    if (i >= 0 && i < op0->noperands) {
      const tr_instr *e = op0->operands[i];
      nb->base[in->id] = nb->base[e->id];
      if (nb->splat[e->id]) nb->splat[in->id] = tr_xstrdup(nb->splat[e->id]);
      if (nb->leaves[e->id]) nb->leaves[in->id] = tr_xstrdup(nb->leaves[e->id]);
      return nb->num[e->id];
    }
  }
  if (in->op == TR_OP_TUPLE) {
    tr_buf l = {0};
    for (int i = 0; i < in->noperands; i++) {
      const tr_instr *e = in->operands[i];
      if (nb->leaves[e->id]) tr_buf_printf(&l, "%s%s", l.n ? "," : "", nb->leaves[e->id]);
      else tr_buf_printf(&l, "%s#%d", l.n ? "," : "", nb->num[e->id]);
    }
    nb->leaves[in->id] = take(&l);
    tr_buf_printf(k, "tuple(%s)", nb->leaves[in->id]);
    return -2;
  }
  return -1;
}

static int cmp_num(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* The key of in, its operands and callees numbered already. */
static int number_instr(numbering *nb, const tr_instr *in) {
  tr_buf k = {0}, s = {0}, at = {0};
  if (nb->base) {
    /* Layouts say how a value is stored, not what it is. */
    int f = canon_number(nb, in, &k);
    if (f >= 0) {
      tr_buf_free(&k);
      return f;
    }
    if (f == -2) {
      tr_buf_puts(&s, tr_buf_str(&k));
      return tab_intern(nb->tab, take(&k), take(&s));
    }
    tr_shape_print(&k, in->shape, false);
  } else {
    put_shape(&k, in->shape);
  }
  tr_buf_printf(&k, " %s(", in->opname);
  tr_buf_puts(&s, tr_buf_str(&k));
  if (in->op == TR_OP_PARAMETER) {
    tr_buf_printf(&k, "%lld", (long long)in->param_index);
    tr_buf_printf(&s, "%lld", (long long)in->param_index);
  } else if (in->op == TR_OP_CONSTANT && in->literal) {
    tr_buf lit = {0};
    tr_print_literal(&lit, in->literal);
    tr_buf_puts(&k, tr_buf_str(&lit));
    /* Long literals shortened in diffs only. */
    const char *l = tr_buf_str(&lit);
    if (strlen(l) > 60) tr_buf_printf(&s, "%.57s...", l);
    else tr_buf_puts(&s, l);
    tr_buf_free(&lit);
  } else {
    /* Canonically a commutative op's operands are in number order. */
    int *ord = tr_xmalloc(sizeof(int) * ((size_t)in->noperands + 1));
    for (int i = 0; i < in->noperands; i++) ord[i] = nb->num[in->operands[i]->id];
    /* clamp takes scalar bounds for arrays: the same as broadcast ones */
    if (nb->base && in->op == TR_OP_CLAMP && tr_shape_is_array(in->shape))
      for (int i = 0; i < in->noperands; i += 2) {
        const tr_instr *o = in->operands[i];
        if (o->shape->rank != 0 || in->shape->rank == 0 || !nb->splat[o->id]) continue;
        tr_buf sk = {0};
        tr_shape_print(&sk, in->shape, false);
        tr_buf_printf(&sk, " splat(%s)", nb->splat[o->id]);
        char *ks = take(&sk);
        ord[i] = tab_intern(nb->tab, ks, tr_xstrdup(ks));
      }
    if (nb->base && (tr_ops[in->op].flags & TR_OPF_C) && in->noperands == 2)
      qsort(ord, 2, sizeof(int), cmp_num);
    for (int i = 0; i < in->noperands; i++) {
      tr_buf_printf(&k, "%s#%d", i ? ", " : "", ord[i]);
      tr_buf_printf(&s, "%s%s", i ? ", " : "", in->operands[i]->opname);
    }
    tr_free(ord);
  }
  tr_buf_putc(&k, ')');
  tr_buf_putc(&s, ')');
  char **attrs = tr_xcalloc((size_t)in->nattrs + 1, sizeof *attrs);
  char **shows = tr_xcalloc((size_t)in->nattrs + 1, sizeof *shows);
  int na = 0;
  for (int i = 0; i < in->nattrs; i++) {
    const tr_attr *a = &in->attrs[i];
    if (ignored_attr(a->name) || a->kind == TR_AK_INSTRS) continue;
    /* An empty dimension list is the default ({} contracting dims). */
    if (a->kind == TR_AK_INTS && a->n == 0) continue;
    tr_buf v = {0}, w = {0};
    tr_buf_printf(&v, "%s=", a->name);
    tr_buf_printf(&w, "%s=", a->name);
    if (a->kind == TR_AK_COMP) {
      tr_buf_printf(&v, "C%d", nb->cnum[a->u.comp->id]);
      tr_buf_printf(&w, "%%%s", a->u.comp->name);
    } else if (a->kind == TR_AK_COMPS) {
      for (int c = 0; c < a->n; c++) {
        tr_buf_printf(&v, "%sC%d", c ? "," : "{", nb->cnum[a->u.comps[c]->id]);
        tr_buf_printf(&w, "%s%%%s", c ? "," : "{", a->u.comps[c]->name);
      }
      tr_buf_putc(&v, '}');
      tr_buf_putc(&w, '}');
    } else {
      tr_print_attr_value(&v, a);
      tr_print_attr_value(&w, a);
    }
    attrs[na] = take(&v);
    shows[na++] = take(&w);
  }
  /* Attribute order is not significant; sort both lists the same way
   * (by the key text, which starts with the name). */
  for (int i = 1; i < na; i++)
    for (int j = i; j > 0 && cmp_str(&attrs[j - 1], &attrs[j]) > 0; j--) {
      char *t = attrs[j]; attrs[j] = attrs[j - 1]; attrs[j - 1] = t;
      t = shows[j]; shows[j] = shows[j - 1]; shows[j - 1] = t;
    }
  for (int i = 0; i < na; i++) {
    tr_buf_printf(&k, ", %s", attrs[i]);
    tr_buf_printf(&s, ", %s", shows[i]);
    tr_free(attrs[i]);
    tr_free(shows[i]);
  }
  tr_free(attrs);
  tr_free(shows);
  tr_buf_free(&at);
  return tab_intern(nb->tab, take(&k), take(&s));
}

/* Numbers every instruction of c, operands first (text order need not be
 * definition order). */
static void number_comp(numbering *nb, const tr_comp *c) {
  const tr_instr **stack = tr_xmalloc(sizeof(tr_instr *) * ((size_t)c->ninstrs + 2));
  for (int i = 0; i < c->ninstrs; i++) {
    if (nb->num[c->instrs[i]->id] >= 0) continue;
    int sp = 0;
    stack[sp++] = c->instrs[i];
    while (sp) {
      const tr_instr *in = stack[sp - 1];
      if (nb->num[in->id] >= 0) { sp--; continue; }
      bool ready = true;
      for (int k = 0; ready && k < in->noperands; k++) {
        const tr_instr *op = in->operands[k];
        /* Operands live in the same computation in a verified module;
         * anything else is numbered as it is (-1), never followed. */
        if (nb->num[op->id] < 0 && op->parent == c && sp < c->ninstrs + 1) {
          stack[sp++] = op;
          ready = false;
        }
      }
      if (!ready) continue;
      nb->num[in->id] = number_instr(nb, in);
      sp--;
    }
  }
  tr_free(stack);
  tr_buf k = {0};
  tr_buf_puts(&k, "computation(");
  for (int i = 0; i < c->nparams; i++) {
    if (i) tr_buf_puts(&k, ", ");
    if (c->params[i] && nb->base) tr_shape_print(&k, c->params[i]->shape, false);
    else if (c->params[i]) put_shape(&k, c->params[i]->shape);
  }
  tr_buf_printf(&k, ") -> #%d", c->root ? nb->num[c->root->id] : -1);
  tr_buf s = {0};
  tr_buf_printf(&s, "computation %s", c->name);
  nb->cnum[c->id] = tab_intern(nb->tab, take(&k), take(&s));
}

static void number_module(numbering *nb, const tr_module *m) {
  int maxi = 0, maxc = 0;
  for (int c = 0; c < m->ncomps; c++) {
    if (m->comps[c]->id > maxc) maxc = m->comps[c]->id;
    for (int i = 0; i < m->comps[c]->ninstrs; i++)
      if (m->comps[c]->instrs[i]->id > maxi) maxi = m->comps[c]->instrs[i]->id;
  }
  nb->num = tr_xmalloc(sizeof(int) * (size_t)(maxi + 1));
  for (int i = 0; i <= maxi; i++) nb->num[i] = -1;
  nb->cnum = tr_xcalloc((size_t)maxc + 1, sizeof(int));
  if (nb->base) {
    nb->base = tr_xcalloc((size_t)maxi + 1, sizeof(tr_instr *));
    nb->splat = tr_xcalloc((size_t)maxi + 1, sizeof(char *));
    nb->leaves = tr_xcalloc((size_t)maxi + 1, sizeof(char *));
    nb->nids = maxi + 1;
  }
  tr_comp **order = tr_xmalloc(sizeof(tr_comp *) * (size_t)(m->ncomps + 1));
  tr_module_callee_order(m, order);
  for (int c = 0; c < m->ncomps; c++) number_comp(nb, order[c]);
  tr_free(order);
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Sorted numbers of the entry's instructions (n set) and of the other
 * computations (distinct). */
static int *entry_numbers(const numbering *nb, const tr_module *m, int *n) {
  const tr_comp *e = m->entry;
  int *v = tr_xmalloc(sizeof(int) * ((size_t)(e ? e->ninstrs : 0) + 1));
  *n = 0;
  for (int i = 0; e && i < e->ninstrs; i++) v[(*n)++] = nb->num[e->instrs[i]->id];
  qsort(v, (size_t)*n, sizeof(int), cmp_int);
  return v;
}

static int *comp_numbers(const numbering *nb, const tr_module *m, int *n) {
  int *v = tr_xmalloc(sizeof(int) * ((size_t)m->ncomps + 1));
  int k = 0;
  for (int c = 0; c < m->ncomps; c++)
    if (m->comps[c] != m->entry) v[k++] = nb->cnum[m->comps[c]->id];
  qsort(v, (size_t)k, sizeof(int), cmp_int);
  int d = 0;
  for (int i = 0; i < k; i++)
    if (!d || v[d - 1] != v[i]) v[d++] = v[i];
  *n = d;
  return v;
}

/* Lines "- X" for numbers in a not in b and "+ X" the other way (sorted
 * multisets); returns the number of lines. */
static int put_diff(tr_buf *b, const keytab *t, const int *a, int na, const int *c, int nc) {
  int i = 0, j = 0, lines = 0;
  while (i < na || j < nc) {
    if (j >= nc || (i < na && a[i] < c[j])) {
      if (b) tr_buf_printf(b, "- %s\n", t->shows[a[i]]);
      i++, lines++;
    } else if (i >= na || c[j] < a[i]) {
      if (b) tr_buf_printf(b, "+ %s\n", t->shows[c[j]]);
      j++, lines++;
    } else {
      i++, j++;
    }
  }
  return lines;
}

bool tr_module_same_program(const tr_module *a, const tr_module *b, tr_buf *diff,
                            bool *dead_only) {
  keytab tab = {0};
  numbering na = {&tab, NULL, NULL, NULL, NULL, NULL, 0}, nbb = {&tab, NULL, NULL, NULL, NULL, NULL, 0};
  number_module(&na, a);
  number_module(&nbb, b);
  int nea, neb, nca, ncb;
  int *ea = entry_numbers(&na, a, &nea), *eb = entry_numbers(&nbb, b, &neb);
  int *ca = comp_numbers(&na, a, &nca), *cb = comp_numbers(&nbb, b, &ncb);
  bool same = put_diff(NULL, &tab, ea, nea, eb, neb) == 0 && put_diff(NULL, &tab, ca, nca, cb, ncb) == 0;
  if (!same && diff) {
    put_diff(diff, &tab, ea, nea, eb, neb);
    put_diff(diff, &tab, ca, nca, cb, ncb);
  }
  if (dead_only) {
    bool roots = a->entry && b->entry && a->entry->root && b->entry->root &&
                 na.num[a->entry->root->id] == nbb.num[b->entry->root->id];
    *dead_only = !same && roots;
  }
  tr_free(ea); tr_free(eb); tr_free(ca); tr_free(cb);
  tr_free(na.num); tr_free(na.cnum); tr_free(nbb.num); tr_free(nbb.cnum);
  tab_free(&tab);
  return same;
}

static void numbering_free(numbering *nb) {
  for (int i = 0; nb->splat && i < nb->nids; i++) {
    tr_free(nb->splat[i]);
    tr_free(nb->leaves[i]);
  }
  tr_free(nb->splat);
  tr_free(nb->leaves);
  tr_free((void *)nb->base);
  tr_free(nb->num);
  tr_free(nb->cnum);
}

/* Numbers of the entry's instructions with side effects, sorted. */
static int *effect_numbers(const numbering *nb, const tr_module *m, int *n) {
  const tr_comp *e = m->entry;
  int *v = tr_xmalloc(sizeof(int) * ((size_t)(e ? e->ninstrs : 0) + 1));
  *n = 0;
  for (int i = 0; e && i < e->ninstrs; i++)
    if (tr_ops[e->instrs[i]->op].flags & TR_OPF_S) v[(*n)++] = nb->num[e->instrs[i]->id];
  qsort(v, (size_t)*n, sizeof(int), cmp_int);
  int d = 0;
  for (int i = 0; i < *n; i++)
    if (!d || v[d - 1] != v[i]) v[d++] = v[i];
  *n = d;
  return v;
}

bool tr_module_same_canonical(const tr_module *a, const tr_module *b) {
  if (!a->entry || !b->entry || !a->entry->root || !b->entry->root) return false;
  keytab tab = {0};
  /* A non-NULL base asks number_module for the canonical tables. */
  const tr_instr *ask = NULL;
  numbering na = {&tab, NULL, NULL, &ask, NULL, NULL, 0}, nbb = {&tab, NULL, NULL, &ask, NULL, NULL, 0};
  number_module(&na, a);
  number_module(&nbb, b);
  int nea, neb;
  int *ea = effect_numbers(&na, a, &nea), *eb = effect_numbers(&nbb, b, &neb);
  bool same = na.num[a->entry->root->id] == nbb.num[b->entry->root->id] && nea == neb &&
              (nea == 0 || memcmp(ea, eb, sizeof(int) * (size_t)nea) == 0);
  tr_free(ea);
  tr_free(eb);
  numbering_free(&na);
  numbering_free(&nbb);
  tab_free(&tab);
  return same;
}
