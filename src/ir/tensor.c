/* tensor.c - dense tensors: allocation with bounded sizes and element
 * access in the slot layout of tensor.h. */
#include "tensor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

tr_tensor *tr_tensor_new(tr_dtype dtype, int rank, const int64_t *dims,
                         tr_diag *d) {
  if ((unsigned)dtype >= TR_DT_COUNT || !tr_dtype_is_array(dtype)) {
    tr_diag_errorf(d, "tensor: %s is not an array element type",
                   (unsigned)dtype < TR_DT_COUNT ? tr_dtype_name(dtype) : "?");
    return NULL;
  }
  if (rank < 0 || rank > TR_TENSOR_MAX_RANK) {
    tr_diag_errorf(d, "tensor: rank %d is outside 0..%d", rank,
                   TR_TENSOR_MAX_RANK);
    return NULL;
  }
  /* As numpy: the product of the nonzero dims (times the element size)
   * must fit in int64 even when another dim is 0, so index arithmetic on
   * any sub-shape cannot overflow; the bytes actually held must stay under
   * TR_TENSOR_MAX_BYTES. */
  uint64_t esize = (uint64_t)tr_dtype_size(dtype), bound = esize;
  bool empty = false;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0) {
      tr_diag_errorf(d, "tensor: dim %d is negative (%lld)", i,
                     (long long)dims[i]);
      return NULL;
    }
    uint64_t n = (uint64_t)dims[i];
    if (n == 0) {
      empty = true;
    } else if (bound > (uint64_t)INT64_MAX / n) {
      tr_diag_errorf(d, "tensor: %s tensor of %d dims overflows 64-bit sizes",
                     tr_dtype_name(dtype), rank);
      return NULL;
    } else {
      bound *= n;
    }
  }
  if (!empty && bound > TR_TENSOR_MAX_BYTES) {
    tr_diag_errorf(d, "tensor: %s tensor of %llu bytes is larger than the "
                   "limit of %zu", tr_dtype_name(dtype),
                   (unsigned long long)bound, (size_t)TR_TENSOR_MAX_BYTES);
    return NULL;
  }
  size_t count = empty ? 0 : (size_t)(bound / esize);
  size_t nbytes = count * esize;
  tr_tensor *t = tr_xcalloc(1, sizeof *t);
  t->dims = tr_xcalloc(rank ? (size_t)rank : 1, sizeof(int64_t));
  /* calloc rather than tr_xcalloc: a big but legal size may still fail,
   * and that is the caller's input, not an internal error. */
  t->data = tr_try_calloc(nbytes ? nbytes : 1, 1);
  /* In a heap frame (an evaluation, a check) running out of memory is the
   * frame's verdict, so no caller has to tell it from a NULL it ignores. */
  if (!t->data && tr_heap_active()) tr_heap_raise(nbytes);
  if (!t->data) {
    tr_diag_errorf(d, "tensor: out of memory for %zu bytes", nbytes);
    tr_free(t->dims);
    tr_free(t);
    return NULL;
  }
  t->dtype = dtype;
  t->rank = rank;
  if (rank) memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
  t->nbytes = nbytes;
  return t;
}

tr_tensor *tr_tensor_clone(const tr_tensor *t) {
  tr_tensor *c = tr_xcalloc(1, sizeof *c);
  *c = *t;
  c->dims = tr_xcalloc(t->rank ? (size_t)t->rank : 1, sizeof(int64_t));
  if (t->rank) memcpy(c->dims, t->dims, sizeof(int64_t) * (size_t)t->rank);
  c->data = tr_xmalloc(t->nbytes ? t->nbytes : 1);
  memcpy(c->data, t->data, t->nbytes);
  return c;
}

void tr_tensor_free(tr_tensor *t) {
  if (!t) return;
  tr_free(t->dims);
  tr_free(t->data);
  tr_free(t);
}

size_t tr_tensor_count(const tr_tensor *t) {
  size_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= (size_t)t->dims[i];
  return n;
}

bool tr_tensor_equal_bits(const tr_tensor *a, const tr_tensor *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return a->nbytes == b->nbytes && memcmp(a->data, b->data, a->nbytes) == 0;
}

void tr_tensor_print_type(tr_buf *b, const tr_tensor *t) {
  tr_buf_printf(b, "%s[", tr_dtype_name(t->dtype));
  for (int i = 0; i < t->rank; i++)
    tr_buf_printf(b, "%s%lld", i ? "," : "", (long long)t->dims[i]);
  tr_buf_putc(b, ']');
}

/* ---- raw slots ---- */

static uint64_t load(const tr_tensor *t, size_t i) {
  const unsigned char *p = (const unsigned char *)t->data;
  TR_ASSERT(i < tr_tensor_count(t));
  switch (tr_dtype_size(t->dtype)) {
  case 1: return p[i];
  case 2: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
  case 4: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
  case 8: { uint64_t v; memcpy(&v, p + 8 * i, 8); return v; }
  default: TR_ASSERT(!"bad slot size"); return 0;
  }
}

static void store(tr_tensor *t, size_t i, uint64_t v) {
  unsigned char *p = (unsigned char *)t->data;
  TR_ASSERT(i < tr_tensor_count(t));
  switch (tr_dtype_size(t->dtype)) {
  case 1: p[i] = (unsigned char)v; break;
  case 2: { uint16_t x = (uint16_t)v; memcpy(p + 2 * i, &x, 2); break; }
  case 4: { uint32_t x = (uint32_t)v; memcpy(p + 4 * i, &x, 4); break; }
  case 8: memcpy(p + 8 * i, &v, 8); break;
  default: TR_ASSERT(!"bad slot size");
  }
}

/* The slot value of integer v in an integer or pred type: the low bits,
 * sign-extended for signed types so that s4 -1 is the byte 0xff. */
static uint64_t int_slot(tr_dtype dt, uint64_t v) {
  const tr_dtype_info *f = &tr_dtypes[dt];
  if (f->kind == TR_DK_PRED) return v != 0;
  if (f->bits >= 64) return v;
  uint64_t mask = ((uint64_t)1 << f->bits) - 1;
  v &= mask;
  if (f->kind == TR_DK_SINT && (v >> (f->bits - 1)) & 1) v |= ~mask;
  return v;
}

/* The slot as a signed value (sign-extended from the slot width). */
static int64_t slot_signed(const tr_tensor *t, size_t i) {
  uint64_t v = load(t, i);
  int sb = tr_dtype_size(t->dtype) * 8;
  if (sb < 64 && (v >> (sb - 1)) & 1) v |= ~(((uint64_t)1 << sb) - 1);
  return (int64_t)v;
}

uint64_t tr_tensor_get_bits(const tr_tensor *t, size_t i) {
  const tr_dtype_info *f = &tr_dtypes[t->dtype];
  TR_ASSERT(f->kind != TR_DK_COMPLEX);
  uint64_t v = load(t, i);
  if (f->bits < 64) v &= ((uint64_t)1 << f->bits) - 1;
  return v;
}

void tr_tensor_set_bits(tr_tensor *t, size_t i, uint64_t bits) {
  const tr_dtype_info *f = &tr_dtypes[t->dtype];
  TR_ASSERT(f->kind != TR_DK_COMPLEX);
  if (f->kind == TR_DK_FLOAT) {
    if (f->bits < 64) bits &= ((uint64_t)1 << f->bits) - 1;
    store(t, i, bits);
  } else {
    store(t, i, int_slot(t->dtype, bits));
  }
}

/* ---- typed access ---- */

int64_t tr_tensor_get_i(const tr_tensor *t, size_t i) {
  tr_dkind k = tr_dtypes[t->dtype].kind;
  TR_ASSERT(k == TR_DK_SINT || k == TR_DK_UINT || k == TR_DK_PRED);
  return k == TR_DK_SINT ? slot_signed(t, i) : (int64_t)load(t, i);
}

uint64_t tr_tensor_get_u(const tr_tensor *t, size_t i) {
  return (uint64_t)tr_tensor_get_i(t, i);
}

void tr_tensor_set_i(tr_tensor *t, size_t i, int64_t v) {
  tr_tensor_set_u(t, i, (uint64_t)v);
}

void tr_tensor_set_u(tr_tensor *t, size_t i, uint64_t v) {
  tr_dkind k = tr_dtypes[t->dtype].kind;
  TR_ASSERT(k == TR_DK_SINT || k == TR_DK_UINT || k == TR_DK_PRED);
  store(t, i, int_slot(t->dtype, v));
}

void tr_tensor_get_c(const tr_tensor *t, size_t i, double *re, double *im) {
  TR_ASSERT(tr_dtypes[t->dtype].kind == TR_DK_COMPLEX);
  TR_ASSERT(i < tr_tensor_count(t));
  if (t->dtype == TR_DT_C64) {
    float p[2];
    memcpy(p, (const char *)t->data + 8 * i, 8);
    *re = p[0];
    *im = p[1];
  } else {
    double p[2];
    memcpy(p, (const char *)t->data + 16 * i, 16);
    *re = p[0];
    *im = p[1];
  }
}

void tr_tensor_set_c(tr_tensor *t, size_t i, double re, double im) {
  TR_ASSERT(tr_dtypes[t->dtype].kind == TR_DK_COMPLEX);
  TR_ASSERT(i < tr_tensor_count(t));
  if (t->dtype == TR_DT_C64) {
    float p[2] = {(float)re, (float)im};
    memcpy((char *)t->data + 8 * i, p, 8);
  } else {
    double p[2] = {re, im};
    memcpy((char *)t->data + 16 * i, p, 16);
  }
}

double tr_tensor_get_f(const tr_tensor *t, size_t i) {
  switch (tr_dtypes[t->dtype].kind) {
  case TR_DK_FLOAT: return tr_float_to_double(t->dtype, load(t, i));
  case TR_DK_SINT: return (double)slot_signed(t, i);
  case TR_DK_UINT:
  case TR_DK_PRED: return (double)load(t, i);
  case TR_DK_COMPLEX: {
    double re, im;
    tr_tensor_get_c(t, i, &re, &im);
    return re;
  }
  default: TR_ASSERT(!"not an array dtype"); return 0;
  }
}

void tr_tensor_set_f(tr_tensor *t, size_t i, double v) {
  tr_dtype dt = t->dtype;
  switch (tr_dtypes[dt].kind) {
  case TR_DK_FLOAT: store(t, i, tr_float_from_double(dt, v)); return;
  case TR_DK_PRED: store(t, i, v != 0); return;
  case TR_DK_SINT: {
    int64_t lo = tr_int_min(dt), hi = (int64_t)tr_int_max(dt);
    int64_t x;
    if (isnan(v)) x = 0;
    else if (v <= (double)lo) x = lo;
    /* (double)hi may round up to 2^63, so compare with >=. */
    else if (v >= (double)hi) x = hi;
    else x = (int64_t)v;
    store(t, i, int_slot(dt, (uint64_t)x));
    return;
  }
  case TR_DK_UINT: {
    uint64_t hi = tr_int_max(dt), x;
    if (isnan(v) || v <= 0) x = 0;
    else if (v >= (double)hi) x = hi;
    else x = (uint64_t)v;
    store(t, i, x);
    return;
  }
  case TR_DK_COMPLEX: tr_tensor_set_c(t, i, v, 0); return;
  default: TR_ASSERT(!"not an array dtype");
  }
}

void tr_put_value(tr_buf *b, tr_dtype dt, double v) {
  if (dt == TR_DT_PRED) {
    tr_buf_puts(b, v != 0 ? "true" : "false");
  } else if (tr_dtype_is_float(dt) || (tr_dtypes[dt].kind == TR_DK_COMPLEX)) {
    bool wide = dt == TR_DT_F64 || dt == TR_DT_C128;
    tr_buf_printf(b, wide ? "%.17g" : "%.9g", v);
  } else if (v == v && v > -9007199254740992.0 && v < 9007199254740992.0) {
    tr_buf_printf(b, "%lld", (long long)v); /* exact below 2^53 */
  } else {
    tr_buf_printf(b, "%.17g", v);
  }
}

void tr_tensor_put_elem(tr_buf *b, const tr_tensor *t, size_t i) {
  tr_dtype dt = t->dtype;
  if ((tr_dtypes[dt].kind == TR_DK_COMPLEX)) {
    double re, im;
    tr_tensor_get_c(t, i, &re, &im);
    tr_dtype part = dt == TR_DT_C128 ? TR_DT_F64 : TR_DT_F32;
    tr_buf_putc(b, '(');
    tr_put_value(b, part, re);
    tr_buf_puts(b, ", ");
    tr_put_value(b, part, im);
    tr_buf_putc(b, ')');
  } else if (dt == TR_DT_PRED || tr_dtype_is_float(dt)) {
    tr_put_value(b, dt, tr_tensor_get_f(t, i));
  } else if (tr_dtypes[dt].kind == TR_DK_UINT) {
    tr_buf_printf(b, "%llu", (unsigned long long)tr_tensor_get_u(t, i));
  } else {
    tr_buf_printf(b, "%lld", (long long)tr_tensor_get_i(t, i));
  }
}
