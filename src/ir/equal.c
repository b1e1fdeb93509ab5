/* equal.c - structural equality of modules: what the round-trip tests and
 * the reducer use to tell that two modules are the same program. */
#include "ir.h"

#include <string.h>

#define FAIL(...)                                   \
  do {                                              \
    if (why) tr_buf_printf(why, __VA_ARGS__);       \
    return false;                                   \
  } while (0)

static bool streq(const char *a, const char *b) {
  if (!a || !b) return a == b;
  return strcmp(a, b) == 0;
}

static bool shape_identical(const tr_shape *a, const tr_shape *b) {
  if (!tr_shape_equal(a, b)) return false;
  if (a->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < a->nelems; i++)
      if (!shape_identical(a->elems[i], b->elems[i])) return false;
    return true;
  }
  if (a->has_layout != b->has_layout || !streq(a->layout_ext, b->layout_ext)) return false;
  if ((a->layout == NULL) != (b->layout == NULL)) return false;
  if (a->layout && memcmp(a->layout, b->layout, sizeof(int64_t) * (size_t)a->rank)) return false;
  for (int i = 0; i < a->rank; i++) {
    int da = a->dynamic ? a->dynamic[i] : 0, db = b->dynamic ? b->dynamic[i] : 0;
    if (da != db) return false;
  }
  return true;
}

static bool literal_equal(const tr_literal *a, const tr_literal *b) {
  if (a->elided != b->elided || !shape_identical(a->shape, b->shape)) return false;
  if (a->nelems != b->nelems) return false;
  for (int i = 0; i < a->nelems; i++)
    if (!literal_equal(a->elems[i], b->elems[i])) return false;
  if ((a->data == NULL) != (b->data == NULL)) return false;
  if (!a->data && a->single != b->single) return false;
  if (!a->data && a->single && memcmp(a->one, b->one, sizeof a->one)) return false;
  if (a->data && a->shape->dtype != TR_DT_TUPLE) {
    size_t n = (size_t)tr_shape_count(a->shape) * (size_t)tr_dtype_size(a->shape->dtype);
    if (memcmp(a->data, b->data, n)) return false;
  }
  return true;
}

static bool attr_equal(const tr_attr *a, const tr_attr *b) {
  if (a->key != b->key || a->kind != b->kind || !streq(a->name, b->name)) return false;
  if (a->kind != TR_AK_INT && a->kind != TR_AK_BOOL && a->kind != TR_AK_STR &&
      a->kind != TR_AK_IDENT && a->kind != TR_AK_RAW && a->kind != TR_AK_COMP && a->n != b->n)
    return false;
  size_t n = (size_t)a->n;
  switch (a->kind) {
  case TR_AK_INT: return a->u.i == b->u.i;
  case TR_AK_BOOL: return a->u.b == b->u.b;
  case TR_AK_STR: case TR_AK_IDENT: case TR_AK_RAW: return streq(a->u.s, b->u.s);
  case TR_AK_INTS: return !n || !memcmp(a->u.ints, b->u.ints, n * sizeof(int64_t));
  case TR_AK_INTSS:
    for (size_t i = 0; i < n; i++) {
      if (a->u.intss.lens[i] != b->u.intss.lens[i]) return false;
      if (memcmp(a->u.intss.v[i], b->u.intss.v[i], sizeof(int64_t) * (size_t)a->u.intss.lens[i]))
        return false;
    }
    return true;
  case TR_AK_COMP: return streq(a->u.comp->name, b->u.comp->name);
  case TR_AK_COMPS:
    for (size_t i = 0; i < n; i++)
      if (!streq(a->u.comps[i]->name, b->u.comps[i]->name)) return false;
    return true;
  case TR_AK_INSTRS:
    for (size_t i = 0; i < n; i++)
      if (!streq(a->u.instrs[i]->name, b->u.instrs[i]->name)) return false;
    return true;
  case TR_AK_SLICE:
    for (size_t i = 0; i < n; i++)
      if (a->u.slice[i].start != b->u.slice[i].start || a->u.slice[i].limit != b->u.slice[i].limit ||
          a->u.slice[i].stride != b->u.slice[i].stride)
        return false;
    return true;
  case TR_AK_PADDING:
    for (size_t i = 0; i < n; i++)
      if (a->u.pad[i].lo != b->u.pad[i].lo || a->u.pad[i].hi != b->u.pad[i].hi ||
          a->u.pad[i].interior != b->u.pad[i].interior)
        return false;
    return true;
  case TR_AK_WINDOW:
    for (size_t i = 0; i < n; i++) {
      const tr_window_dim *x = &a->u.win[i], *y = &b->u.win[i];
      if (x->size != y->size || x->stride != y->stride || x->pad_lo != y->pad_lo ||
          x->pad_hi != y->pad_hi || x->lhs_dilate != y->lhs_dilate ||
          x->rhs_dilate != y->rhs_dilate || x->reversal != y->reversal)
        return false;
    }
    return true;
  case TR_AK_DIMLABELS: {
    const tr_convdims *x = a->u.conv, *y = b->u.conv;
    size_t ns = (size_t)x->nspatial * sizeof(int64_t);
    return x->nspatial == y->nspatial && x->in_batch == y->in_batch &&
           x->in_feature == y->in_feature && x->k_in == y->k_in && x->k_out == y->k_out &&
           x->out_batch == y->out_batch && x->out_feature == y->out_feature &&
           (ns == 0 || /* no spatial dims: the arrays may be NULL */
            (!memcmp(x->in_spatial, y->in_spatial, ns) && !memcmp(x->k_spatial, y->k_spatial, ns) &&
             !memcmp(x->out_spatial, y->out_spatial, ns)));
  }
  }
  return false;
}

static bool instr_equal(const tr_instr *a, const tr_instr *b, tr_buf *why) {
  if (!streq(a->name, b->name)) FAIL("instruction %s vs %s", a->name, b->name);
  if (a->op != b->op || !streq(a->opname, b->opname))
    FAIL("%s: opcode %s vs %s", a->name, a->opname, b->opname);
  if (!shape_identical(a->shape, b->shape)) FAIL("%s: shapes differ", a->name);
  if (a->noperands != b->noperands) FAIL("%s: operand counts differ", a->name);
  for (int i = 0; i < a->noperands; i++)
    if (!streq(a->operands[i]->name, b->operands[i]->name))
      FAIL("%s: operand %d is %s vs %s", a->name, i, a->operands[i]->name, b->operands[i]->name);
  if (a->op == TR_OP_PARAMETER && a->param_index != b->param_index)
    FAIL("%s: parameter numbers differ", a->name);
  if ((a->literal == NULL) != (b->literal == NULL) ||
      (a->literal && !literal_equal(a->literal, b->literal)))
    FAIL("%s: literals differ", a->name);
  if (a->nattrs != b->nattrs) FAIL("%s: %d vs %d attributes", a->name, a->nattrs, b->nattrs);
  /* Attribute order is not significant: the printer canonicalises it. */
  for (int i = 0; i < a->nattrs; i++) {
    const tr_attr *y = NULL;
    for (int k = 0; k < b->nattrs; k++)
      if (streq(a->attrs[i].name, b->attrs[k].name)) y = &b->attrs[k];
    if (!y || !attr_equal(&a->attrs[i], y)) FAIL("%s: attribute %s differs", a->name, a->attrs[i].name);
  }
  return true;
}

bool tr_module_equal(const tr_module *a, const tr_module *b, tr_buf *why) {
  if (!streq(a->name, b->name)) FAIL("module names %s vs %s", a->name, b->name);
  if (a->nhattrs != b->nhattrs) FAIL("header attribute counts differ");
  for (int i = 0; i < a->nhattrs; i++)
    if (!streq(a->hattrs[i].name, b->hattrs[i].name) || !streq(a->hattrs[i].text, b->hattrs[i].text))
      FAIL("header attribute %s differs", a->hattrs[i].name);
  if (!streq(a->frames, b->frames)) FAIL("stack-frame tables differ");
  if (a->ncomps != b->ncomps) FAIL("%d vs %d computations", a->ncomps, b->ncomps);
  for (int c = 0; c < a->ncomps; c++) {
    const tr_comp *x = a->comps[c], *y = b->comps[c];
    if (!streq(x->name, y->name)) FAIL("computation %s vs %s", x->name, y->name);
    if (x->is_entry != y->is_entry || (a->entry == x) != (b->entry == y))
      FAIL("%s: entry flags differ", x->name);
    if (!streq(x->exec_thread, y->exec_thread)) FAIL("%s: execution threads differ", x->name);
    if (x->ninstrs != y->ninstrs) FAIL("%s: %d vs %d instructions", x->name, x->ninstrs, y->ninstrs);
    for (int i = 0; i < x->ninstrs; i++)
      if (!instr_equal(x->instrs[i], y->instrs[i], why)) return false;
    if (!streq(x->root->name, y->root->name)) FAIL("%s: roots differ", x->name);
  }
  return true;
}
