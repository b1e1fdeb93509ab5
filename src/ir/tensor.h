/* tensor.h - dense arrays of one dtype, kept apart from the IR, and their
 * exchange format: .npy files (docs/NPY.md). */
#ifndef TR_TENSOR_H
#define TR_TENSOR_H

#include "dtype.h"

/* Element storage is the one of tr_literal (ir.h): row-major, one
 * tr_dtype_size() slot per element in host byte order, holding the dtype's
 * bit pattern: f16/bf16 as uint16 bits, f8 (and f4/f6) as one byte of bits,
 * s4/u4 (s1/s2/u1/u2) sign-/zero-extended into one byte each, pred as a 0/1
 * byte, complex as two floats (c64) or two doubles (c128). Keeping every
 * slot canonical lets tr_tensor_equal_bits compare with memcmp. */
typedef struct {
  tr_dtype dtype; /* an array dtype (tr_dtype_is_array) */
  int rank;       /* number of dims, 0 for a scalar */
  int64_t *dims;  /* rank sizes, each >= 0 (heap, never NULL) */
  void *data;     /* nbytes bytes (heap, never NULL, even when empty) */
  size_t nbytes;  /* tr_tensor_count * tr_dtype_size */
} tr_tensor;

/* Sizes past these are refused with a diagnostic, never allocated: they
 * come from files and command lines, and a lying header must not make
 * trench abort or swap. numpy's own limit on dims is 64. */
#define TR_TENSOR_MAX_RANK 64
#define TR_TENSOR_MAX_BYTES ((size_t)1 << 34) /* 16 GiB */

/* A zero-filled tensor. Returns NULL and adds a diagnostic when dtype is
 * not an array type, rank or a dim is out of range, the product of the
 * nonzero dims times the element size overflows int64 (numpy's rule: an
 * empty array may have other huge dims), or the bytes pass
 * TR_TENSOR_MAX_BYTES; and when its data cannot be allocated (outside a
 * heap frame: inside one that unwinds the frame, base.h). */
tr_tensor *tr_tensor_new(tr_dtype dtype, int rank, const int64_t *dims,
                         tr_diag *d);
/* A copy of t. Out of memory unwinds the heap frame it runs in (base.h:
 * the evaluation's, the check's), which makes it a verdict. */
tr_tensor *tr_tensor_clone(const tr_tensor *t);
void tr_tensor_free(tr_tensor *t); /* NULL is fine */
/* Number of elements (the product of dims; 1 for a scalar). */
size_t tr_tensor_count(const tr_tensor *t);
/* Same dtype, dims and element bits (NaNs compare by pattern). */
bool tr_tensor_equal_bits(const tr_tensor *a, const tr_tensor *b);
/* "f32[2,3]", for messages. */
void tr_tensor_print_type(tr_buf *b, const tr_tensor *t);
/* A value as a person reads it, with enough digits to give back the same
 * value: %.17g for f64 (and c128 parts), %.9g for f32 and narrower
 * floats, integers exactly (from the element, so s64/u64 beyond 2^53
 * too), pred as true/false, complex as (re, im). */
void tr_tensor_put_elem(tr_buf *b, const tr_tensor *t, size_t i);
/* The same for a value already held as a double. */
void tr_put_value(tr_buf *b, tr_dtype dt, double v);

/* Element access by flat row-major index i < tr_tensor_count(t).
 * get_f: the value as a double, for any dtype (complex: the real part;
 *   ints beyond 2^53 round).
 * set_f: floats round to nearest even (tr_float_from_double); ints and pred
 *   take the value truncated toward zero and saturated, NaN giving 0 (pred:
 *   nonzero is 1); complex sets the real part and zeroes the imaginary.
 * get_i/get_u: ints and pred only; a value outside int64 (get_i of a large
 *   u64) or uint64 (get_u of a negative) wraps as in C.
 * set_i/set_u: ints and pred only; keeps the low bits of the value, as an
 *   integer convert does (pred: nonzero is 1).
 * get_bits/set_bits: the raw pattern of any non-complex element, e.g.
 *   0x3f80 for bf16 1.0 (s4: the low 4 bits). */
double tr_tensor_get_f(const tr_tensor *t, size_t i);
void tr_tensor_set_f(tr_tensor *t, size_t i, double v);
int64_t tr_tensor_get_i(const tr_tensor *t, size_t i);
uint64_t tr_tensor_get_u(const tr_tensor *t, size_t i);
void tr_tensor_set_i(tr_tensor *t, size_t i, int64_t v);
void tr_tensor_set_u(tr_tensor *t, size_t i, uint64_t v);
uint64_t tr_tensor_get_bits(const tr_tensor *t, size_t i);
void tr_tensor_set_bits(tr_tensor *t, size_t i, uint64_t bits);
/* Complex elements (c64, c128). */
void tr_tensor_get_c(const tr_tensor *t, size_t i, double *re, double *im);
void tr_tensor_set_c(tr_tensor *t, size_t i, double re, double im);

/* ---- .npy files (npy.c; docs/NPY.md) ---- */
/* Reads format 1.0, 2.0 and 3.0, either byte order, C or Fortran order.
 * expect is the dtype the caller wants, or TR_DT_COUNT for none. It names
 * the type of raw-bits data ('<V2', '|V1': how numpy saves ml_dtypes
 * arrays) and of bit views ('<u2' holding bf16 bits); otherwise a file of
 * another dtype is an error. name is the file name shown in messages.
 * On error returns non-OK, *out = NULL and one diagnostic "name: ...". On
 * success the diagnostics may gain a "name: warning: ..." (trailing bytes
 * after the data). */
tr_status tr_npy_parse(const char *name, const void *buf, size_t len,
                       tr_dtype expect, tr_tensor **out, tr_diag *d);
tr_status tr_npy_read(const char *path, tr_dtype expect, tr_tensor **out,
                      tr_diag *d);
/* Appends t as a .npy file in the bytes numpy (with ml_dtypes for the types
 * numpy lacks) writes: format 1.0, little-endian, C order. */
tr_status tr_npy_encode(const tr_tensor *t, tr_buf *out, tr_diag *d);
tr_status tr_npy_write(const char *path, const tr_tensor *t, tr_diag *d);
/* The descr written for dtype t ("<f4", "<V2", ...). */
const char *tr_npy_descr(tr_dtype t);

#endif
