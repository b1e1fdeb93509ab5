/* ref.h - the reference side of trench verify: an HLO module evaluated
 * symbolically, one output element at a time, through the cone of
 * influence of that element (ref.c). Float parameters are vx symbols
 * (parameter p, flat element e), integer ones bitvector symbols, except
 * the parameters used as indices, which are concrete values
 * (docs/VERIFY.md says why). This is the reference interpreter's
 * third value domain in miniature: exact and shadow compute numbers,
 * this computes expressions, per element on demand. */
#ifndef TR_REF_H
#define TR_REF_H

#include "../ir/ir.h"
#include "../ir/tensor.h"
#include "vx.h"

typedef struct vr_ctx vr_ctx;

/* ints: per entry parameter, its concrete tensor for integer parameters
 * (NULL for float ones). */
vr_ctx *vr_new(const tr_module *m, vx_ctx *cx, tr_tensor *const *ints);
void vr_free(vr_ctx *r);
/* Sets idx[p] for the entry parameters used as indices (in the cone of a
 * gather's or scatter's indices or a dynamic slice's starts): they are
 * concrete values, every other integer parameter is a symbol. */
void vr_index_params(const tr_module *m, bool *idx);
/* Output leaves of the entry's root (an array or a tuple of arrays). */
int vr_nouts(const vr_ctx *r);
const tr_shape *vr_out_shape(const vr_ctx *r, int out);
/* The expression of element flat of output out; NULL with a located
 * diagnostic when an op on the path is not modelled. */
vx *vr_elem(vr_ctx *r, int out, int64_t flat, tr_diag *d);

#endif
