/* infer_contract.c - shape rules of contractions (dot, with sparse
 * operands, and convolution) and of the linear algebra ops (cholesky,
 * triangular-solve). */
#include "inferint.h"

#include <stdio.h>
#include <string.h>

/* Operand types of dot and convolution: XLA does not compare them (bf16 x
 * s4 weights, f32 x pred masks occur in real dumps); only arrays are
 * required. The result type is the declared, preferred one. */
static bool contraction_types(in_ctx *c, const tr_shape *x, const tr_shape *y) {
  if (in_is_array(x) && in_is_array(y)) return true;
  return in_bad(c, "operands of %s must be arrays, not %s and %s", c->op, in_str(c, x), in_str(c, y));
}

/* The result element type: the declared (preferred) one, else the wider
 * operand type. Integers may not be narrowed (XLA's MaybeUpcast). */
static bool contraction_dtype(in_ctx *c, const tr_shape *x, const tr_shape *y, tr_dtype *out) {
  tr_dtype hi = tr_dtypes[y->dtype].bits > tr_dtypes[x->dtype].bits ? y->dtype : x->dtype;
  if (!c->decl || !in_is_array(c->decl)) {
    *out = hi;
    return true;
  }
  *out = c->decl->dtype;
  if (*out != hi && !in_is_float(hi) && tr_dtypes[*out].bits < tr_dtypes[hi].bits)
    return in_bad(c, "%s result type %s is narrower than its operand type %s", c->op,
                  tr_dtype_name(*out), tr_dtype_name(hi));
  return true;
}

/* A sparse dot's operand holds n of every m values along one dimension
 * (sparsity=L.1@2:4 for lhs dimension 1); its logical size is m/n times
 * the stored one. Returns the logical shape. */
static const tr_shape *sparse_logical(in_ctx *c, const tr_shape *s, char side) {
  const tr_instr *in = c->in;
  for (int i = 0; i < in->nattrs; i++) {
    if (in->attrs[i].key != TR_ATTR_RAW || strcmp(in->attrs[i].name, "sparsity") != 0) continue;
    const char *p = in->attrs[i].u.s;
    while (*p) {
      long long dim, n, m;
      if (sscanf(p, "%*c.%lld@%lld:%lld", &dim, &n, &m) == 3 && *p == side && dim >= 0 &&
          dim < s->rank && n > 0 && m > 0 && s->dims[dim] >= 0) {
        tr_shape *t = in_clone(c, s);
        t->dims[dim] = s->dims[dim] / n * m;
        s = t;
      }
      const char *u = strchr(p, '_');
      if (!u) break;
      p = u + 1;
    }
  }
  return s;
}

tr_shape *in_r_dot(in_ctx *c) {
  if (!in_want_arrays(c, 0, 2)) return NULL;
  const tr_shape *x = sparse_logical(c, in_opnd(c, 0), 'L'), *y = sparse_logical(c, in_opnd(c, 1), 'R');
  int nlb, nlc, nrb, nrc;
  const int64_t *lb = in_ints(c, TR_ATTR_LHS_BATCH_DIMS, &nlb), *lc = in_ints(c, TR_ATTR_LHS_CONTRACTING_DIMS, &nlc);
  const int64_t *rb = in_ints(c, TR_ATTR_RHS_BATCH_DIMS, &nrb), *rc = in_ints(c, TR_ATTR_RHS_CONTRACTING_DIMS, &nrc);
  tr_dtype dt;
  if (!contraction_types(c, x, y) || !contraction_dtype(c, x, y, &dt)) return NULL;
  if (nlb != nrb)
    return IN_FAIL("dot lhs_batch_dims=%s and rhs_batch_dims=%s must have the same length", in_list(c, lb, nlb), in_list(c, rb, nrb));
  if (nlc != nrc)
    return IN_FAIL("dot lhs_contracting_dims=%s and rhs_contracting_dims=%s must have the same length",
                   in_list(c, lc, nlc), in_list(c, rc, nrc));
  if (!in_dims_ok(c, "lhs_batch_dims", lb, nlb, x->rank, false) ||
      !in_dims_ok(c, "lhs_contracting_dims", lc, nlc, x->rank, false) ||
      !in_dims_ok(c, "rhs_batch_dims", rb, nrb, y->rank, false) ||
      !in_dims_ok(c, "rhs_contracting_dims", rc, nrc, y->rank, false) ||
      !in_disjoint(c, "lhs_batch_dims", lb, nlb, "lhs_contracting_dims", lc, nlc) ||
      !in_disjoint(c, "rhs_batch_dims", rb, nrb, "rhs_contracting_dims", rc, nrc))
    return NULL;
  for (int i = 0; i < nlb; i++)
    if (!in_dim_eq(x->dims[lb[i]], y->dims[rb[i]]))
      return IN_FAIL("dot batch dimension %lld of lhs %s and %lld of rhs %s differ in size",
                     (long long)lb[i], in_str(c, x), (long long)rb[i], in_str(c, y));
  for (int i = 0; i < nlc; i++)
    if (!in_dim_eq(x->dims[lc[i]], y->dims[rc[i]]))
      return IN_FAIL("dot contracting dimension %lld of lhs %s and %lld of rhs %s differ in size",
                     (long long)lc[i], in_str(c, x), (long long)rc[i], in_str(c, y));
  tr_shape *r = in_new_array(c, dt, x->rank + y->rank - nlb - 2 * nlc);
  int k = 0;
  for (int i = 0; i < nlb; i++) r->dims[k++] = x->dims[lb[i]];
  for (int i = 0; i < x->rank; i++)
    if (!tr_ints_has(lb, nlb, i) && !tr_ints_has(lc, nlc, i)) r->dims[k++] = x->dims[i];
  for (int i = 0; i < y->rank; i++)
    if (!tr_ints_has(rb, nrb, i) && !tr_ints_has(rc, nrc, i)) r->dims[k++] = y->dims[i];
  return r;
}

/* Positions of one side of dim_labels must be a permutation of 0..rank-1. */
static bool conv_perm(in_ctx *c, const char *side, int64_t a, int64_t b, const int64_t *sp, int ns) {
  int rank = ns + 2;
  int64_t *v = in_scratch_ints(c, rank);
  v[0] = a;
  v[1] = b;
  for (int i = 0; i < ns; i++) v[2 + i] = sp[i];
  for (int i = 0; i < rank; i++) {
    if (v[i] < 0 || v[i] >= rank || tr_ints_has(v, i, v[i]))
      return in_bad(c, "convolution dim_labels: the %s dimensions are not a permutation of 0..%d", side, rank - 1);
  }
  return true;
}

tr_shape *in_r_convolution(in_ctx *c) {
  if (!in_want_arrays(c, 0, 2)) return NULL;
  const tr_shape *x = in_opnd(c, 0), *k = in_opnd(c, 1);
  const tr_attr *dl = in_need(c, TR_ATTR_DIM_LABELS), *w = in_attr(c, TR_ATTR_WINDOW);
  const tr_attr *fg = in_attr(c, TR_ATTR_FEATURE_GROUP_COUNT), *bg = in_attr(c, TR_ATTR_BATCH_GROUP_COUNT);
  if (!dl) return NULL;
  const tr_convdims *cd = dl->u.conv;
  int ns = cd->nspatial, nw = w ? w->n : 0;
  int64_t fgc = fg ? fg->u.i : 1, bgc = bg ? bg->u.i : 1;
  tr_dtype dt;
  if (!contraction_types(c, x, k) || !contraction_dtype(c, x, k, &dt)) return NULL;
  if (fgc <= 0) return IN_FAIL("feature_group_count must be positive, not %lld", (long long)fgc);
  if (bgc <= 0) return IN_FAIL("batch_group_count must be positive, not %lld", (long long)bgc);
  if (fgc > 1 && bgc > 1)
    return IN_FAIL("feature_group_count %lld and batch_group_count %lld cannot both exceed 1",
                   (long long)fgc, (long long)bgc);
  if (nw != ns)
    return IN_FAIL("convolution window has %d dimensions but dim_labels has %d spatial dimensions", nw, ns);
  if (x->rank != ns + 2)
    return IN_FAIL("lhs %s of convolution must have rank %d", in_str(c, x), ns + 2);
  if (k->rank != ns + 2)
    return IN_FAIL("kernel %s of convolution must have rank %d", in_str(c, k), ns + 2);
  if (!conv_perm(c, "input", cd->in_batch, cd->in_feature, cd->in_spatial, ns) ||
      !conv_perm(c, "kernel", cd->k_in, cd->k_out, cd->k_spatial, ns) ||
      !conv_perm(c, "output", cd->out_batch, cd->out_feature, cd->out_spatial, ns))
    return NULL;
  int64_t batch = x->dims[cd->in_batch], feat = x->dims[cd->in_feature];
  int64_t kin = k->dims[cd->k_in], kout = k->dims[cd->k_out];
  if (kout >= 0 && kout % bgc)
    return IN_FAIL("kernel output features %lld of convolution must be a multiple of batch_group_count %lld",
                   (long long)kout, (long long)bgc);
  if (feat >= 0 && kin >= 0 && (feat % fgc || feat / fgc != kin))
    return IN_FAIL("convolution input features %lld must be feature_group_count %lld times the kernel input features %lld",
                   (long long)feat, (long long)fgc, (long long)kin);
  if (kout >= 0 && kout % fgc)
    return IN_FAIL("kernel output features %lld of convolution must be a multiple of feature_group_count %lld",
                   (long long)kout, (long long)fgc);
  if (batch >= 0 && batch % bgc)
    return IN_FAIL("convolution input batch %lld must be a multiple of batch_group_count %lld",
                   (long long)batch, (long long)bgc);
  int64_t *base = in_scratch_ints(c, ns), *out = in_scratch_ints(c, ns);
  for (int i = 0; i < ns; i++) {
    base[i] = x->dims[cd->in_spatial[i]];
    if (!in_dim_eq(w->u.win[i].size, k->dims[cd->k_spatial[i]]))
      return IN_FAIL("convolution window size %lld of spatial dimension %d does not match kernel %s",
                     (long long)w->u.win[i].size, i, in_str(c, k));
  }
  if (!in_window_out(c, w ? w->u.win : NULL, ns, base, out)) return NULL;
  tr_shape *r = in_new_array(c, dt, ns + 2);
  r->dims[cd->out_batch] = batch < 0 ? -1 : batch / bgc;
  r->dims[cd->out_feature] = kout;
  for (int i = 0; i < ns; i++) r->dims[cd->out_spatial[i]] = out[i];
  return r;
}

tr_shape *in_r_cholesky(in_ctx *c) {
  const tr_shape *o = in_opnd(c, 0);
  if (o->rank < 2 || !in_dim_eq(o->dims[o->rank - 1], o->dims[o->rank - 2]))
    return IN_FAIL("cholesky needs square matrices [..., n, n], not %s", in_str(c, o));
  return in_clone(c, o);
}

tr_shape *in_r_triangular_solve(in_ctx *c) {
  const tr_shape *a = in_opnd(c, 0), *b = in_opnd(c, 1);
  const tr_attr *ls = in_attr(c, TR_ATTR_LEFT_SIDE);
  bool left = ls && ls->u.b;
  int r = a->rank;
  if (a->dtype != b->dtype)
    return IN_FAIL("operands %s and %s of triangular-solve must have one element type", in_str(c, a), in_str(c, b));
  if (r < 2 || !in_dim_eq(a->dims[r - 1], a->dims[r - 2]))
    return IN_FAIL("a of triangular-solve must be square matrices [..., m, m], not %s", in_str(c, a));
  if (b->rank != r)
    return IN_FAIL("b %s of triangular-solve must have the rank of a %s", in_str(c, b), in_str(c, a));
  for (int i = 0; i < r - 2; i++)
    if (!in_dim_eq(a->dims[i], b->dims[i]))
      return IN_FAIL("batch dimension %d of triangular-solve operands %s and %s differ", i, in_str(c, a), in_str(c, b));
  if (!in_dim_eq(b->dims[left ? r - 2 : r - 1], a->dims[r - 1]))
    return IN_FAIL("b %s of triangular-solve must be %s for a %s", in_str(c, b),
                   left ? "[..., m, n]" : "[..., n, m]", in_str(c, a));
  return in_clone(c, b);
}
