/* build.h - the inferring IR builder: make computations and add
 * parameters, constants and ops whose result shape comes from the shape
 * inference the verifier uses (infer.c), so code that constructs modules
 * (the generator, passes, tests) never writes a shape by hand that the
 * verifier would then reject.
 *
 * An op is made in three steps: tr_build_begin (opcode and operands),
 * attribute setters, tr_build_end (infer, then append). tr_build_end
 * returns NULL with the reason in why when the instruction is invalid and
 * leaves the computation as it was, so a caller may try something else. */
#ifndef TR_BUILD_H
#define TR_BUILD_H

#include "ir.h"

/* A computation of m; the entry when entry is set (one per module). */
tr_comp *tr_build_comp(tr_module *m, const char *name, bool entry);
/* Parameter number c->nparams of shape s (copied, layout included). */
tr_instr *tr_build_param(tr_comp *c, const tr_shape *s);
/* A constant of shape s (array) whose values are data: tr_shape_count(s)
 * slots of tr_dtype_size(s->dtype) bytes in the literal encoding (ir.h). */
tr_instr *tr_build_constant(tr_comp *c, const tr_shape *s, const void *data);
/* Makes c's result in. */
void tr_build_root(tr_comp *c, tr_instr *in);

/* An instruction of op on operands (copied), not yet in c. */
tr_instr *tr_build_begin(tr_comp *c, tr_op op, tr_instr *const *ops, int n);
/* Typed attributes (keys of attrs.def; arrays are copied). */
void tr_build_int(tr_instr *in, tr_attr_key k, int64_t v);
void tr_build_bool(tr_instr *in, tr_attr_key k, bool v);
void tr_build_ints(tr_instr *in, tr_attr_key k, const int64_t *v, int n);
void tr_build_ident(tr_instr *in, tr_attr_key k, const char *v);
void tr_build_callee(tr_instr *in, tr_attr_key k, tr_comp *callee);
void tr_build_callees(tr_instr *in, tr_attr_key k, tr_comp *const *callees, int n);
void tr_build_slice(tr_instr *in, const tr_slice_dim *v, int n);
void tr_build_padding(tr_instr *in, const tr_pad_dim *v, int n);
void tr_build_window(tr_instr *in, const tr_window_dim *v, int n);
void tr_build_convdims(tr_instr *in, const tr_convdims *cd);
/* Infers in's shape and appends it to its computation. decl is the result
 * shape for rules that need one (broadcast, reshape, convert, iota,
 * bitcast-convert, bitcast) and the preferred element type of dot and
 * convolution; NULL otherwise. A layout on decl is kept. Returns in, or
 * NULL with the reason in why (may be NULL). */
tr_instr *tr_build_end(tr_instr *in, const tr_shape *decl, tr_buf *why);

/* One-call forms for the common ops (NULL and why on failure). */
tr_instr *tr_build_unary(tr_comp *c, tr_op op, tr_instr *x, tr_buf *why);
tr_instr *tr_build_binary(tr_comp *c, tr_op op, tr_instr *x, tr_instr *y, tr_buf *why);
tr_instr *tr_build_compare(tr_comp *c, tr_instr *x, tr_instr *y, const char *dir, tr_buf *why);
tr_instr *tr_build_convert(tr_comp *c, tr_instr *x, tr_dtype to, tr_buf *why);
/* Broadcast of x to dims (rank n); operand dimension i goes to map[i]. */
tr_instr *tr_build_broadcast(tr_comp *c, tr_instr *x, const int64_t *dims, int n,
                             const int64_t *map, tr_buf *why);
tr_instr *tr_build_reshape(tr_comp *c, tr_instr *x, const int64_t *dims, int n, tr_buf *why);
tr_instr *tr_build_transpose(tr_comp *c, tr_instr *x, const int64_t *perm, tr_buf *why);
tr_instr *tr_build_tuple(tr_comp *c, tr_instr *const *xs, int n, tr_buf *why);
tr_instr *tr_build_gte(tr_comp *c, tr_instr *t, int64_t index, tr_buf *why);

/* Sets s's layout (minor_to_major, s->rank entries), copied into a. */
void tr_shape_set_layout(tr_arena *a, tr_shape *s, const int64_t *minor_to_major);

#endif
