/* infer_index.c - shape rules of indexed access: dynamic-slice,
 * dynamic-update-slice, gather and scatter, with the start-index, index
 * vector and batching-dimension checks they share. */
#include "inferint.h"

/* Start indices of dynamic-slice and dynamic-update-slice, from operand
 * `first` on: one integer scalar per dimension, all of one type; the old
 * form with a single rank-1 index vector is accepted too. */
static bool start_indices_ok(in_ctx *c, int first, int rank) {
  int n = in_nopnds(c) - first;
  bool scalars = n == rank;
  for (int i = first; scalars && i < in_nopnds(c); i++) scalars = in_is_scalar(in_opnd(c, i));
  bool vector = !scalars && n == 1 && in_is_array(in_opnd(c, first)) && in_opnd(c, first)->rank == 1 &&
                in_dim_eq(in_opnd(c, first)->dims[0], rank);
  if (!scalars && !vector)
    return in_bad(c, "%s of a rank-%d operand needs %d scalar start indices but has %d", c->op,
                  rank, rank, n);
  for (int i = first; i < in_nopnds(c); i++) {
    tr_dtype t = in_opnd(c, i)->dtype;
    if (!in_is_int(t))
      return in_bad(c, "start index (operand %d) of %s must be an integer but has shape %s", i,
                    c->op, in_str(c, in_opnd(c, i)));
    if (t != in_opnd(c, first)->dtype)
      return in_bad(c, "start indices of %s must share one type; operand %d is %s but operand %d is %s",
                    c->op, first, in_str(c, in_opnd(c, first)), i, in_str(c, in_opnd(c, i)));
  }
  return true;
}

tr_shape *in_r_dynamic_slice(in_ctx *c) {
  if (!in_min_operands(c, 1) || !in_want_array(c, 0)) return NULL;
  const tr_shape *o = in_opnd(c, 0);
  if (!start_indices_ok(c, 1, o->rank)) return NULL;
  const tr_attr *at = in_need(c, TR_ATTR_DYNAMIC_SLICE_SIZES);
  if (!at) return NULL;
  if (at->n != o->rank)
    return IN_FAIL("dynamic_slice_sizes=%s has %d entries but the operand %s has rank %d",
                   in_list(c, at->u.ints, at->n), at->n, in_str(c, o), o->rank);
  tr_shape *r = in_new_array(c, o->dtype, o->rank);
  for (int i = 0; i < o->rank; i++) {
    int64_t s = at->u.ints[i];
    if (s < 0 || (o->dims[i] >= 0 && s > o->dims[i]))
      return IN_FAIL("dynamic-slice size %lld of dimension %d is not within [0, %lld] of %s",
                     (long long)s, i, (long long)o->dims[i], in_str(c, o));
    r->dims[i] = s;
  }
  return r;
}

tr_shape *in_r_dynamic_update_slice(in_ctx *c) {
  if (!in_min_operands(c, 2) || !in_want_arrays(c, 0, 2)) return NULL;
  const tr_shape *o = in_opnd(c, 0), *u = in_opnd(c, 1);
  if (u->rank != o->rank || u->dtype != o->dtype)
    return IN_FAIL("update %s of dynamic-update-slice must have the rank and type of operand %s",
                   in_str(c, u), in_str(c, o));
  for (int i = 0; i < o->rank; i++)
    if (u->dims[i] >= 0 && o->dims[i] >= 0 && u->dims[i] > o->dims[i])
      return IN_FAIL("update %s of dynamic-update-slice is larger than operand %s in dimension %d",
                     in_str(c, u), in_str(c, o), i);
  if (!start_indices_ok(c, 2, o->rank)) return NULL;
  return in_clone(c, o);
}

/* Index vector dim of gather/scatter and the indices' dims with the
 * implicit trailing 1 when index_vector_dim equals their rank. */
static int64_t *expand_indices(in_ctx *c, const tr_shape *idx, int64_t ivd, int *er) {
  if (ivd < 0 || ivd > idx->rank) {
    in_bad(c, "%s index_vector_dim=%lld is out of range for indices %s", c->op, (long long)ivd, in_str(c, idx));
    return NULL;
  }
  *er = idx->rank + (ivd == idx->rank);
  int64_t *ed = in_scratch_ints(c, *er);
  for (int i = 0; i < idx->rank; i++) ed[i] = idx->dims[i];
  if (ivd == idx->rank) ed[idx->rank] = 1;
  return ed;
}

/* Batching dims shared by gather and scatter: the operand side sorted and
 * unique, the indices side unique and not the index vector dim, pairwise of
 * equal size. */
static bool batching_ok(in_ctx *c, const char *on, const int64_t *ob, int nob, const char *in,
                        const int64_t *ib, int nib, const tr_shape *o, const tr_shape *idx,
                        int64_t ivd) {
  if (!in_dims_ok(c, on, ob, nob, o->rank, true) || !in_dims_ok(c, in, ib, nib, idx->rank, false))
    return false;
  if (tr_ints_has(ib, nib, ivd))
    return in_bad(c, "%s %s=%s contains index_vector_dim %lld", c->op, in, in_list(c, ib, nib), (long long)ivd);
  if (nob != nib)
    return in_bad(c, "%s %s=%s and %s=%s must have the same length", c->op, on, in_list(c, ob, nob), in,
                  in_list(c, ib, nib));
  for (int i = 0; i < nob; i++)
    if (!in_dim_eq(o->dims[ob[i]], idx->dims[ib[i]]))
      return in_bad(c, "%s batching dimension %lld of %s and dimension %lld of indices %s differ in size",
                    c->op, (long long)ob[i], in_str(c, o), (long long)ib[i], in_str(c, idx));
  return true;
}

tr_shape *in_r_gather(in_ctx *c) {
  if (!in_want_arrays(c, 0, 2)) return NULL;
  const tr_shape *o = in_opnd(c, 0), *idx = in_opnd(c, 1);
  if (!in_is_int(idx->dtype))
    return IN_FAIL("start indices of gather must be integers but have shape %s", in_str(c, idx));
  const tr_attr *a_off = in_need(c, TR_ATTR_OFFSET_DIMS), *a_col = in_need(c, TR_ATTR_COLLAPSED_SLICE_DIMS),
                *a_map = in_need(c, TR_ATTR_START_INDEX_MAP), *a_ivd = in_need(c, TR_ATTR_INDEX_VECTOR_DIM),
                *a_ss = in_need(c, TR_ATTR_SLICE_SIZES);
  if (!a_off || !a_col || !a_map || !a_ivd || !a_ss) return NULL;
  int noff = a_off->n, ncol = a_col->n, nmap = a_map->n, nss = a_ss->n, nob, nib, er;
  const int64_t *off = a_off->u.ints, *col = a_col->u.ints, *map = a_map->u.ints, *ss = a_ss->u.ints;
  const int64_t *ob = in_ints(c, TR_ATTR_OPERAND_BATCHING_DIMS, &nob);
  const int64_t *ib = in_ints(c, TR_ATTR_START_INDICES_BATCHING_DIMS, &nib);
  int64_t ivd = a_ivd->u.i;
  int64_t *ed = expand_indices(c, idx, ivd, &er);
  if (!ed) return NULL;
  if (noff + ncol + nob != o->rank)
    return IN_FAIL("gather offset_dims (%d), collapsed_slice_dims (%d) and operand_batching_dims (%d) "
                   "must add up to the operand rank %d", noff, ncol, nob, o->rank);
  int rr = noff + er - 1;
  if (!in_dims_ok(c, "offset_dims", off, noff, rr, true) ||
      !in_dims_ok(c, "collapsed_slice_dims", col, ncol, o->rank, true) ||
      !batching_ok(c, "operand_batching_dims", ob, nob, "start_indices_batching_dims", ib, nib, o, idx, ivd) ||
      !in_disjoint(c, "collapsed_slice_dims", col, ncol, "operand_batching_dims", ob, nob) ||
      !in_dims_ok(c, "start_index_map", map, nmap, o->rank, false) ||
      !in_disjoint(c, "start_index_map", map, nmap, "operand_batching_dims", ob, nob))
    return NULL;
  if (!in_dim_eq(nmap, ed[ivd]))
    return IN_FAIL("gather start_index_map=%s has %d entries but dimension %lld of indices %s has size %lld",
                   in_list(c, map, nmap), nmap, (long long)ivd, in_str(c, idx), (long long)ed[ivd]);
  if (nss != o->rank)
    return IN_FAIL("gather slice_sizes=%s has %d entries but the operand %s has rank %d", in_list(c, ss, nss),
                   nss, in_str(c, o), o->rank);
  for (int i = 0; i < nss; i++) {
    if (ss[i] < 0 || (o->dims[i] >= 0 && ss[i] > o->dims[i]))
      return IN_FAIL("gather slice size %lld of dimension %d is not within [0, %lld] of %s",
                     (long long)ss[i], i, (long long)o->dims[i], in_str(c, o));
    if ((tr_ints_has(col, ncol, i) || tr_ints_has(ob, nob, i)) && ss[i] > 1)
      return IN_FAIL("gather slice size of collapsed or batching dimension %d must be 0 or 1, not %lld",
                     i, (long long)ss[i]);
  }
  tr_shape *r = in_new_array(c, o->dtype, rr);
  int si = 0, bi = 0;
  for (int i = 0; i < rr; i++) {
    if (tr_ints_has(off, noff, i)) {
      while (tr_ints_has(col, ncol, si) || tr_ints_has(ob, nob, si)) si++;
      r->dims[i] = ss[si++];
    } else {
      if (bi == ivd) bi++;
      r->dims[i] = ed[bi++];
    }
  }
  return r;
}

tr_shape *in_r_scatter(in_ctx *c) {
  int n = in_nopnds(c);
  if (n < 3 || n % 2 == 0)
    return IN_FAIL("scatter needs N inputs, the indices and N updates (an odd count of at least 3), not %d operands", n);
  int nin = (n - 1) / 2;
  if (!in_want_arrays(c, 0, n)) return NULL;
  const tr_shape *o = in_opnd(c, 0), *idx = in_opnd(c, nin), *u = in_opnd(c, nin + 1);
  for (int i = 1; i < nin; i++)
    if (!in_same_dims(in_opnd(c, i), o))
      return IN_FAIL("input %d of scatter has shape %s but input 0 has %s", i, in_str(c, in_opnd(c, i)), in_str(c, o));
  for (int i = 0; i < nin; i++) {
    const tr_shape *ui = in_opnd(c, nin + 1 + i);
    if (!in_same_dims(ui, u))
      return IN_FAIL("update %d of scatter has shape %s but update 0 has %s", i, in_str(c, ui), in_str(c, u));
    if (ui->dtype != in_opnd(c, i)->dtype)
      return IN_FAIL("update %d of scatter has shape %s but input %d has element type %s", i, in_str(c, ui),
                     i, tr_dtype_name(in_opnd(c, i)->dtype));
  }
  if (!in_is_int(idx->dtype))
    return IN_FAIL("scatter indices must be integers but have shape %s", in_str(c, idx));
  const tr_attr *a_uw = in_need(c, TR_ATTR_UPDATE_WINDOW_DIMS), *a_iw = in_need(c, TR_ATTR_INSERTED_WINDOW_DIMS),
                *a_sd = in_need(c, TR_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS), *a_ivd = in_need(c, TR_ATTR_INDEX_VECTOR_DIM);
  if (!a_uw || !a_iw || !a_sd || !a_ivd) return NULL;
  int nuw = a_uw->n, niw = a_iw->n, nsd = a_sd->n, nib, nsb, er;
  const int64_t *uw = a_uw->u.ints, *iw = a_iw->u.ints, *sd = a_sd->u.ints;
  const int64_t *ib = in_ints(c, TR_ATTR_INPUT_BATCHING_DIMS, &nib);
  const int64_t *sb = in_ints(c, TR_ATTR_SCATTER_INDICES_BATCHING_DIMS, &nsb);
  int64_t ivd = a_ivd->u.i;
  int64_t *ed = expand_indices(c, idx, ivd, &er);
  if (!ed) return NULL;
  if (nuw + niw + nib != o->rank)
    return IN_FAIL("scatter update_window_dims (%d), inserted_window_dims (%d) and input_batching_dims (%d) "
                   "must add up to the input rank %d", nuw, niw, nib, o->rank);
  if (u->rank != er - 1 + nuw)
    return IN_FAIL("updates of scatter must have rank %d but %s has rank %d", er - 1 + nuw, in_str(c, u), u->rank);
  if (!in_dims_ok(c, "update_window_dims", uw, nuw, u->rank, true) ||
      !in_dims_ok(c, "inserted_window_dims", iw, niw, o->rank, true) ||
      !batching_ok(c, "input_batching_dims", ib, nib, "scatter_indices_batching_dims", sb, nsb, o, idx, ivd) ||
      !in_disjoint(c, "inserted_window_dims", iw, niw, "input_batching_dims", ib, nib) ||
      !in_dims_ok(c, "scatter_dims_to_operand_dims", sd, nsd, o->rank, false) ||
      !in_disjoint(c, "scatter_dims_to_operand_dims", sd, nsd, "input_batching_dims", ib, nib))
    return NULL;
  if (!in_dim_eq(nsd, ed[ivd]))
    return IN_FAIL("scatter_dims_to_operand_dims=%s has %d entries but dimension %lld of indices %s has size %lld",
                   in_list(c, sd, nsd), nsd, (long long)ivd, in_str(c, idx), (long long)ed[ivd]);
  /* Window dims of the updates follow the input dims that are neither
   * inserted nor batching, in order, and may not exceed them. */
  for (int d = 0, k = 0; d < o->rank; d++) {
    if (tr_ints_has(iw, niw, d) || tr_ints_has(ib, nib, d)) continue;
    int64_t us = u->dims[uw[k]];
    if (us >= 0 && o->dims[d] >= 0 && us > o->dims[d])
      return IN_FAIL("update window dimension %lld of %s (size %lld) exceeds dimension %d of input %s",
                     (long long)uw[k], in_str(c, u), (long long)us, d, in_str(c, o));
    k++;
  }
  for (int i = 0, bi = 0; i < u->rank; i++) {
    if (tr_ints_has(uw, nuw, i)) continue;
    if (bi == ivd) bi++;
    if (!in_dim_eq(u->dims[i], ed[bi]))
      return IN_FAIL("scatter dimension %d of updates %s has size %lld but the indices %s give %lld", i,
                     in_str(c, u), (long long)u->dims[i], in_str(c, idx), (long long)ed[bi]);
    bi++;
  }
  tr_dtype *ti = tr_arena_alloc(c->a, sizeof(tr_dtype) * (size_t)nin * 3);
  for (int i = 0; i < nin; i++) {
    ti[i] = in_opnd(c, i)->dtype;
    ti[nin + i] = in_opnd(c, nin + 1 + i)->dtype;
  }
  if (!in_check_reducer(c, TR_ATTR_TO_APPLY, nin, ti, ti + nin, ti + 2 * nin)) return NULL;
  tr_shape **el = tr_arena_alloc(c->a, sizeof(tr_shape *) * (size_t)nin);
  for (int i = 0; i < nin; i++) el[i] = in_clone(c, in_opnd(c, i));
  return in_tuple_of(c, el, nin);
}
