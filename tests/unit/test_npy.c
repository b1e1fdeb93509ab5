/* test_npy.c - tensors, .npy reading and writing, and the narrow float
 * conversions they rely on. The fx_* files below are the exact bytes
 * np.save (numpy 2.4, ml_dtypes 0.6) wrote for the arrays named in each
 * comment; the writer must reproduce them byte for byte. */
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../src/ir/tensor.h"

#define FX(a) a, sizeof(a) - 1

/* ---- numpy's bytes ---- */
/* np.array([[1,-2.5,nan],[-0.0,inf,1e-45]],np.float32) */
static const char fx_f32_2x3[] =
    "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, 'shape':"
    " (2, 3), }                                                          "
    "\012\000\000\200\077\000\000 \300\000\000\300\177\000\000\000\200\000"
    "\000\200\177\001\000\000\000";
/* np.array([0.1,-inf,5e-324]) */
static const char fx_f64_3[] =
    "\223NUMPY\001\000v\000{'descr': '<f8', 'fortran_order': False, 'shape':"
    " (3,), }                                                            "
    "\012\232\231\231\231\231\231\271\077\000\000\000\000\000\000\360\377"
    "\001\000\000\000\000\000\000\000";
/* np.array(np.float16(65504)) */
static const char fx_f16_0d[] =
    "\223NUMPY\001\000v\000{'descr': '<f2', 'fortran_order': False, 'shape':"
    " (), }                                                              "
    "\012\377{";
/* np.array([6e-8, -6.1e-5, 0.0, -0.0],np.float16) */
static const char fx_f16_sub[] =
    "\223NUMPY\001\000v\000{'descr': '<f2', 'fortran_order': False, 'shape':"
    " (4,), }                                                            "
    "\012\001\000\377\203\000\000\000\200";
/* np.array([True,False,False,True]) */
static const char fx_pred_4[] =
    "\223NUMPY\001\000v\000{'descr': '|b1', 'fortran_order': False, 'shape':"
    " (4,), }                                                            "
    "\012\001\000\000\001";
/* np.array([-128,127,0,-1],np.int8) */
static const char fx_s8[] =
    "\223NUMPY\001\000v\000{'descr': '|i1', 'fortran_order': False, 'shape':"
    " (4,), }                                                            "
    "\012\200\177\000\377";
/* np.array([-32768,32767,-2],np.int16) */
static const char fx_s16[] =
    "\223NUMPY\001\000v\000{'descr': '<i2', 'fortran_order': False, 'shape':"
    " (3,), }                                                            "
    "\012\000\200\377\177\376\377";
/* np.array([-2**31,2**31-1],np.int32) */
static const char fx_s32[] =
    "\223NUMPY\001\000v\000{'descr': '<i4', 'fortran_order': False, 'shape':"
    " (2,), }                                                            "
    "\012\000\000\000\200\377\377\377\177";
/* np.array([-2**63,2**63-1,-5],np.int64) */
static const char fx_s64[] =
    "\223NUMPY\001\000v\000{'descr': '<i8', 'fortran_order': False, 'shape':"
    " (3,), }                                                            "
    "\012\000\000\000\000\000\000\000\200\377\377\377\377\377\377\377\177"
    "\373\377\377\377\377\377\377\377";
/* np.array([0,255,7],np.uint8) */
static const char fx_u8[] =
    "\223NUMPY\001\000v\000{'descr': '|u1', 'fortran_order': False, 'shape':"
    " (3,), }                                                            "
    "\012\000\377\007";
/* np.array([65535,1],np.uint16) */
static const char fx_u16[] =
    "\223NUMPY\001\000v\000{'descr': '<u2', 'fortran_order': False, 'shape':"
    " (2,), }                                                            "
    "\012\377\377\001\000";
/* np.array([2**32-1],np.uint32) */
static const char fx_u32[] =
    "\223NUMPY\001\000v\000{'descr': '<u4', 'fortran_order': False, 'shape':"
    " (1,), }                                                            "
    "\012\377\377\377\377";
/* np.array([2**64-1,0],np.uint64) */
static const char fx_u64[] =
    "\223NUMPY\001\000v\000{'descr': '<u8', 'fortran_order': False, 'shape':"
    " (2,), }                                                            "
    "\012\377\377\377\377\377\377\377\377\000\000\000\000\000\000\000\000";
/* np.array([1+2j, complex(-0.5,-inf)],np.complex64) */
static const char fx_c64[] =
    "\223NUMPY\001\000v\000{'descr': '<c8', 'fortran_order': False, 'shape':"
    " (2,), }                                                            "
    "\012\000\000\200\077\000\000\000@\000\000\000\277\000\000\200\377";
/* np.array([[0.1-0.2j]],np.complex128) */
static const char fx_c128[] =
    "\223NUMPY\001\000v\000{'descr': '<c16', 'fortran_order': False, 'shape'"
    ": (1, 1), }                                                         "
    "\012\232\231\231\231\231\231\271\077\232\231\231\231\231\231\311\277";
/* np.array([1.0,-0.0,nan,inf,-3.3895313892515355e38, 9.183549615799121e-41],ml_dtypes.bfloat16) */
static const char fx_bf16[] =
    "\223NUMPY\001\000v\000{'descr': '<V2', 'fortran_order': False, 'shape':"
    " (6,), }                                                            "
    "\012\200\077\000\200\300\177\200\177\177\377\001\000";
/* np.array([448,-448,nan,-0.0,2.0**-9],ml_dtypes.float8_e4m3fn) */
static const char fx_f8e4m3fn[] =
    "\223NUMPY\001\000v\000{'descr': '<V1', 'fortran_order': False, 'shape':"
    " (5,), }                                                            "
    "\012~\376\177\200\001";
/* np.array([57344,-inf,nan,2.0**-16],ml_dtypes.float8_e5m2) */
static const char fx_f8e5m2[] =
    "\223NUMPY\001\000v\000{'descr': '<f1', 'fortran_order': False, 'shape':"
    " (4,), }                                                            "
    "\012{\374~\001";
/* np.arange(-8,8).astype(ml_dtypes.int4) */
static const char fx_s4[] =
    "\223NUMPY\001\000v\000{'descr': '<V1', 'fortran_order': False, 'shape':"
    " (16,), }                                                           "
    "\012\010\011\012\013\014\015\016\017\000\001\002\003\004\005\006\007";
/* np.arange(0,16).astype(ml_dtypes.uint4) */
static const char fx_u4[] =
    "\223NUMPY\001\000v\000{'descr': '<V1', 'fortran_order': False, 'shape':"
    " (16,), }                                                           "
    "\012\000\001\002\003\004\005\006\007\010\011\012\013\014\015\016\017";
/* np.array([240, 1.0],ml_dtypes.float8_e4m3) */
static const char fx_f8e4m3[] =
    "\223NUMPY\001\000v\000{'descr': '<V1', 'fortran_order': False, 'shape':"
    " (2,), }                                                            "
    "\012w8";
/* np.full((1,)*20, 5, np.uint8): the growth room pushes the header to 192 bytes */
static const char fx_ones_20d[] =
    "\223NUMPY\001\000\266\000{'descr': '|u1', 'fortran_order': False, 'shap"
    "e': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), }    "
    "                                                                \012"
    "\005";
/* np.zeros((0,5),np.float32) */
static const char fx_empty_0x5[] =
    "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, 'shape':"
    " (0, 5), }                                                          "
    "\012";
/* np.zeros((123456789012345,0),np.uint8) */
static const char fx_long_dim[] =
    "\223NUMPY\001\000v\000{'descr': '|u1', 'fortran_order': False, 'shape':"
    " (123456789012345, 0), }                                            "
    "\012";
/* np.array([[1,2,3],[4,5,-6]],'>f4') */
static const char fx_be_f4[] =
    "\223NUMPY\001\000v\000{'descr': '>f4', 'fortran_order': False, 'shape':"
    " (2, 3), }                                                          "
    "\012\077\200\000\000@\000\000\000@@\000\000@\200\000\000@\240\000\000"
    "\300\300\000\000";
/* np.array([1+2j],'>c8') */
static const char fx_be_c8[] =
    "\223NUMPY\001\000v\000{'descr': '>c8', 'fortran_order': False, 'shape':"
    " (1,), }                                                            "
    "\012\077\200\000\000@\000\000\000";
/* np.array([-2, 2**40+3],'>i8') */
static const char fx_be_i8[] =
    "\223NUMPY\001\000v\000{'descr': '>i8', 'fortran_order': False, 'shape':"
    " (2,), }                                                            "
    "\012\377\377\377\377\377\377\377\376\000\000\001\000\000\000\000\003";
/* np.asfortranarray(np.array([[1,2,3],[4,5,6]],np.float32)) */
static const char fx_fortran_f4[] =
    "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': True, 'shape': "
    "(2, 3), }                                                           "
    "\012\000\000\200\077\000\000\200@\000\000\000@\000\000\240@\000\000@@"
    "\000\000\300@";
/* np.asfortranarray(np.arange(24,dtype=np.int16).reshape(2,3,4)) */
static const char fx_fortran_i2_3d[] =
    "\223NUMPY\001\000v\000{'descr': '<i2', 'fortran_order': True, 'shape': "
    "(2, 3, 4), }                                                        "
    "\012\000\000\014\000\004\000\020\000\010\000\024\000\001\000\015\000"
    "\005\000\021\000\011\000\025\000\002\000\016\000\006\000\022\000\012"
    "\000\026\000\003\000\017\000\007\000\023\000\013\000\027\000";
/* np.asfortranarray(np.arange(6,dtype='>u2').reshape(3,2)) */
static const char fx_fortran_be_u2[] =
    "\223NUMPY\001\000v\000{'descr': '>u2', 'fortran_order': True, 'shape': "
    "(3, 2), }                                                           "
    "\012\000\000\000\002\000\004\000\001\000\003\000\005";
/* np.array([1.5,2.5],np.float32) saved as version 2.0 */
static const char fx_v2_f4[] =
    "\223NUMPY\002\000t\000\000\000{'descr': '<f4', 'fortran_order': False, "
    "'shape': (2,), }                                                       "
    "   \012\000\000\300\077\000\000 @";
/* np.array([[7]],np.int32) saved as version 3.0 */
static const char fx_v3_i4[] =
    "\223NUMPY\003\000t\000\000\000{'descr': '<i4', 'fortran_order': False, "
    "'shape': (1, 1), }                                                     "
    "   \012\007\000\000\000";

/* ---- helpers ---- */

static char diag_msg[1024]; /* first diagnostic of the last helper call */

/* Parses buf; returns the tensor (NULL on error) and the status in *st. */
static tr_tensor *parse(const char *buf, size_t len, tr_dtype expect,
                        tr_status *st, int *nmsgs) {
  tr_diag d = {0};
  tr_tensor *t = NULL;
  *st = tr_npy_parse("x.npy", buf, len, expect, &t, &d);
  *nmsgs = d.nmsgs;
  snprintf(diag_msg, sizeof diag_msg, "%s", d.nmsgs ? d.msgs[0] : "");
  tr_diag_clear(&d);
  return t;
}

/* A .npy file with the given header text (no padding) and data. */
static tr_buf mkfile(int major, const char *header, const void *data,
                     size_t n) {
  tr_buf b = {0};
  size_t hl = strlen(header);
  tr_buf_putn(&b, "\x93NUMPY", 6);
  tr_buf_putc(&b, (char)major);
  tr_buf_putc(&b, 0);
  int lensz = major == 1 ? 2 : 4;
  for (int i = 0; i < lensz; i++) tr_buf_putc(&b, (char)(hl >> (8 * i)));
  tr_buf_puts(&b, header);
  if (n) tr_buf_putn(&b, data, n);
  return b;
}

/* Parses a file expected to fail with status want; returns the message. */
static const char *fail_with(const char *buf, size_t len, tr_dtype expect,
                             tr_status want) {
  tr_status st;
  int nm;
  tr_tensor *t = parse(buf, len, expect, &st, &nm);
  CHECK_EQ_INT(st, want);
  CHECK(t == NULL);
  CHECK_EQ_INT(nm, 1);
  tr_tensor_free(t);
  return diag_msg;
}

static const char *hdr_fail(const char *header, size_t datalen, tr_status want) {
  static char zeros[64];
  tr_buf b = mkfile(1, header, zeros, datalen);
  const char *m = fail_with(b.p, b.n, TR_DT_COUNT, want);
  tr_buf_free(&b);
  return m;
}

/* Offset of the first differing byte, or -1 when equal. */
static long first_diff(const char *a, size_t an, const char *b, size_t bn) {
  size_t n = an < bn ? an : bn;
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return (long)i;
  return an == bn ? -1 : (long)n;
}

static uint64_t dbits(double v) {
  uint64_t b;
  memcpy(&b, &v, 8);
  return b;
}

/* ---- reading numpy's files ---- */

typedef struct {
  const char *name;
  const char *buf;
  size_t len;
  tr_dtype expect;  /* passed to the reader */
  tr_dtype dt;      /* dtype read */
  int rank;
  int64_t dims[20];
  int n;
  int64_t v[16];    /* floats: get_bits; ints and pred: get_i */
  bool exact;       /* the writer reproduces buf byte for byte */
} fixture;

#define NONE TR_DT_COUNT
static const fixture fixtures[] = {
  {"f32_2x3", FX(fx_f32_2x3), NONE, TR_DT_F32, 2, {2, 3}, 6,
   {0x3f800000, 0xc0200000, 0x7fc00000, 0x80000000, 0x7f800000, 1}, true},
  {"f64_3", FX(fx_f64_3), NONE, TR_DT_F64, 1, {3}, 3,
   {0x3fb999999999999a, (int64_t)0xfff0000000000000u, 1}, true},
  {"f16_0d", FX(fx_f16_0d), NONE, TR_DT_F16, 0, {0}, 1, {0x7bff}, true},
  {"f16_sub", FX(fx_f16_sub), NONE, TR_DT_F16, 1, {4}, 4,
   {0x0001, 0x83ff, 0, 0x8000}, true},
  {"pred_4", FX(fx_pred_4), NONE, TR_DT_PRED, 1, {4}, 4, {1, 0, 0, 1}, true},
  {"s8", FX(fx_s8), NONE, TR_DT_S8, 1, {4}, 4, {-128, 127, 0, -1}, true},
  {"s16", FX(fx_s16), NONE, TR_DT_S16, 1, {3}, 3, {-32768, 32767, -2}, true},
  {"s32", FX(fx_s32), NONE, TR_DT_S32, 1, {2}, 2, {INT32_MIN, INT32_MAX}, true},
  {"s64", FX(fx_s64), NONE, TR_DT_S64, 1, {3}, 3, {INT64_MIN, INT64_MAX, -5}, true},
  {"u8", FX(fx_u8), NONE, TR_DT_U8, 1, {3}, 3, {0, 255, 7}, true},
  {"u16", FX(fx_u16), NONE, TR_DT_U16, 1, {2}, 2, {65535, 1}, true},
  {"u32", FX(fx_u32), NONE, TR_DT_U32, 1, {1}, 1, {4294967295}, true},
  {"u64", FX(fx_u64), NONE, TR_DT_U64, 1, {2}, 2, {-1, 0}, true},
  {"bf16", FX(fx_bf16), NONE, TR_DT_BF16, 1, {6}, 6,
   {0x3f80, 0x8000, 0x7fc0, 0x7f80, 0xff7f, 0x0001}, true},
  {"f8e4m3fn", FX(fx_f8e4m3fn), TR_DT_F8E4M3FN, TR_DT_F8E4M3FN, 1, {5}, 5,
   {0x7e, 0xfe, 0x7f, 0x80, 0x01}, true},
  /* ml_dtypes saves float8_e5m2 as '<f1', which np.load refuses; trench
   * reads it but writes '<V1'. */
  {"f8e5m2", FX(fx_f8e5m2), NONE, TR_DT_F8E5M2, 1, {4}, 4,
   {0x7b, 0xfc, 0x7e, 0x01}, false},
  {"s4", FX(fx_s4), TR_DT_S4, TR_DT_S4, 1, {16}, 16,
   {-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7}, true},
  {"u4", FX(fx_u4), TR_DT_U4, TR_DT_U4, 1, {16}, 16,
   {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, true},
  {"f8e4m3", FX(fx_f8e4m3), TR_DT_F8E4M3, TR_DT_F8E4M3, 1, {2}, 2,
   {0x77, 0x38}, true},
  {"ones_20d", FX(fx_ones_20d), NONE, TR_DT_U8, 20,
   {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, {5}, true},
  {"empty_0x5", FX(fx_empty_0x5), NONE, TR_DT_F32, 2, {0, 5}, 0, {0}, true},
  {"long_dim", FX(fx_long_dim), NONE, TR_DT_U8, 2, {123456789012345, 0}, 0,
   {0}, true},
  {"be_f4", FX(fx_be_f4), NONE, TR_DT_F32, 2, {2, 3}, 6,
   {0x3f800000, 0x40000000, 0x40400000, 0x40800000, 0x40a00000, 0xc0c00000},
   false},
  {"be_i8", FX(fx_be_i8), NONE, TR_DT_S64, 1, {2}, 2,
   {-2, ((int64_t)1 << 40) + 3}, false},
  /* Fortran order comes back in C order. */
  {"fortran_f4", FX(fx_fortran_f4), NONE, TR_DT_F32, 2, {2, 3}, 6,
   {0x3f800000, 0x40000000, 0x40400000, 0x40800000, 0x40a00000, 0x40c00000},
   false},
  {"fortran_i2_3d", FX(fx_fortran_i2_3d), NONE, TR_DT_S16, 3, {2, 3, 4}, 16,
   {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, false},
  {"fortran_be_u2", FX(fx_fortran_be_u2), NONE, TR_DT_U16, 2, {3, 2}, 6,
   {0, 1, 2, 3, 4, 5}, false},
  {"v2_f4", FX(fx_v2_f4), NONE, TR_DT_F32, 1, {2}, 2,
   {0x3fc00000, 0x40200000}, false},
  {"v3_i4", FX(fx_v3_i4), NONE, TR_DT_S32, 2, {1, 1}, 1, {7}, false},
};

static int64_t elem(const tr_tensor *t, size_t i) {
  return tr_dtype_is_float(t->dtype) ? (int64_t)tr_tensor_get_bits(t, i)
                                     : tr_tensor_get_i(t, i);
}

TR_TEST(npy_read_numpy_files) {
  for (int k = 0; k < TR_NELEMS(fixtures); k++) {
    const fixture *f = &fixtures[k];
    tr_status st;
    int nm;
    tr_tensor *t = parse(f->buf, f->len, f->expect, &st, &nm);
    if (st != TR_OK || !t) {
      fprintf(stderr, "  fixture %s: %s\n", f->name, diag_msg);
      CHECK(0);
      continue;
    }
    CHECK_EQ_INT(nm, 0);
    if (t->dtype != f->dt || t->rank != f->rank)
      fprintf(stderr, "  fixture %s: got %s rank %d\n", f->name,
              tr_dtype_name(t->dtype), t->rank);
    CHECK_EQ_INT(t->dtype, f->dt);
    CHECK_EQ_INT(t->rank, f->rank);
    for (int i = 0; i < f->rank && i < t->rank; i++)
      CHECK_EQ_INT(t->dims[i], f->dims[i]);
    /* fortran_i2_3d: the first 16 of 24 are checked. */
    if (f->n < 16 || f->dt != TR_DT_S16)
      CHECK_EQ_INT(tr_tensor_count(t), f->n);
    for (int i = 0; i < f->n && (size_t)i < tr_tensor_count(t); i++) {
      if (elem(t, (size_t)i) != f->v[i])
        fprintf(stderr, "  fixture %s element %d: 0x%llx, expected 0x%llx\n",
                f->name, i, (unsigned long long)elem(t, (size_t)i),
                (unsigned long long)f->v[i]);
      CHECK(elem(t, (size_t)i) == f->v[i]);
    }
    tr_tensor_free(t);
  }
}

/* The writer gives numpy's bytes: build each tensor from its values. */
TR_TEST(npy_write_matches_numpy) {
  int exact = 0;
  for (int k = 0; k < TR_NELEMS(fixtures); k++) {
    const fixture *f = &fixtures[k];
    tr_diag d = {0};
    tr_tensor *t = tr_tensor_new(f->dt, f->rank, f->dims, &d);
    CHECK(t != NULL);
    if (!t) continue;
    for (int i = 0; i < f->n && (size_t)i < tr_tensor_count(t); i++) {
      if (tr_dtype_is_float(f->dt)) tr_tensor_set_bits(t, (size_t)i, (uint64_t)f->v[i]);
      else tr_tensor_set_i(t, (size_t)i, f->v[i]);
    }
    tr_buf b = {0};
    CHECK_EQ_INT(tr_npy_encode(t, &b, &d), TR_OK);
    if (f->exact) {
      exact++;
      long at = first_diff(b.p, b.n, f->buf, f->len);
      if (at >= 0)
        fprintf(stderr, "  fixture %s: writer differs from numpy at byte %ld"
                " (%zu vs %zu bytes)\n", f->name, at, b.n, f->len);
      CHECK_EQ_INT(at, -1);
    }
    /* Every file, numpy's form or not, reads back to the same tensor. */
    tr_tensor *back = NULL;
    tr_dtype ex = tr_dtype_size(f->dt) == 1 && tr_npy_descr(f->dt)[1] == 'V'
                      ? f->dt : TR_DT_COUNT;
    CHECK_EQ_INT(tr_npy_parse("w.npy", b.p, b.n, ex, &back, &d), TR_OK);
    CHECK(back && tr_tensor_equal_bits(t, back));
    CHECK_EQ_INT(d.nmsgs, 0);
    tr_tensor_free(back);
    tr_buf_free(&b);
    tr_tensor_free(t);
    tr_diag_clear(&d);
  }
  CHECK_EQ_INT(exact, 21);
}

TR_TEST(npy_complex) {
  tr_status st;
  int nm;
  tr_tensor *t = parse(FX(fx_c64), NONE, &st, &nm);
  CHECK(t && t->dtype == TR_DT_C64);
  double re, im;
  if (t) {
    tr_tensor_get_c(t, 0, &re, &im);
    CHECK(re == 1 && im == 2);
    tr_tensor_get_c(t, 1, &re, &im);
    CHECK(re == -0.5 && im == -INFINITY);
    tr_buf b = {0};
    tr_npy_encode(t, &b, NULL);
    CHECK_EQ_INT(first_diff(b.p, b.n, FX(fx_c64)), -1);
    tr_buf_free(&b);
  }
  tr_tensor_free(t);
  t = parse(FX(fx_c128), NONE, &st, &nm);
  CHECK(t && t->dtype == TR_DT_C128 && t->rank == 2);
  if (t) {
    tr_tensor_get_c(t, 0, &re, &im);
    CHECK(re == 0.1 && im == -0.2);
    CHECK(tr_tensor_get_f(t, 0) == 0.1);
    tr_buf b = {0};
    tr_npy_encode(t, &b, NULL);
    CHECK_EQ_INT(first_diff(b.p, b.n, FX(fx_c128)), -1);
    tr_buf_free(&b);
  }
  tr_tensor_free(t);
  /* Big-endian complex swaps each half on its own. */
  t = parse(FX(fx_be_c8), NONE, &st, &nm);
  CHECK(t && t->dtype == TR_DT_C64);
  if (t) {
    tr_tensor_get_c(t, 0, &re, &im);
    CHECK(re == 1 && im == 2);
  }
  tr_tensor_free(t);
}

/* ---- headers ---- */

TR_TEST(npy_header_layout) {
  /* np.save of float32 (2, 3): the dict, 20 spaces of room for the first
   * dim to grow, padding to 128 bytes, '\n'. */
  tr_diag d = {0};
  int64_t dims[2] = {2, 3};
  tr_tensor *t = tr_tensor_new(TR_DT_F32, 2, dims, &d);
  tr_buf b = {0};
  CHECK_EQ_INT(tr_npy_encode(t, &b, &d), TR_OK);
  CHECK_EQ_INT(b.n, 128 + 24);
  CHECK(memcmp(b.p, "\x93NUMPY\x01\x00\x76\x00", 10) == 0);
  const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  CHECK(memcmp(b.p + 10, dict, strlen(dict)) == 0);
  for (size_t i = 10 + strlen(dict); i < 127; i++) CHECK(b.p[i] == ' ');
  CHECK(b.p[127] == '\n');
  tr_buf_free(&b);
  tr_tensor_free(t);
  /* Every rank and a range of first dims: total header a multiple of 64,
   * ends in '\n', length field right, and reads back. */
  for (int rank = 0; rank <= TR_TENSOR_MAX_RANK; rank++) {
    int64_t dd[TR_TENSOR_MAX_RANK];
    /* First dims of 1 to 19 digits (the growth padding depends on it);
     * the long ones in empty arrays. */
    int64_t p10 = 1;
    for (int i = 0; i < rank % 19; i++) p10 *= 10;
    for (int i = 0; i < rank; i++) dd[i] = i == 0 ? p10 : 1;
    if (rank >= 2 && p10 > 1000) dd[rank - 1] = 0;
    t = tr_tensor_new(TR_DT_U8, rank, dd, &d);
    CHECK(t != NULL);
    if (!t) continue;
    b = (tr_buf){0};
    tr_npy_encode(t, &b, &d);
    size_t hl = (unsigned char)b.p[8] | (size_t)(unsigned char)b.p[9] << 8;
    CHECK_EQ_INT((10 + hl) % 64, 0);
    CHECK_EQ_INT(b.n, 10 + hl + t->nbytes);
    CHECK(b.p[10 + hl - 1] == '\n');
    tr_tensor *back = NULL;
    CHECK_EQ_INT(tr_npy_parse("r.npy", b.p, b.n, TR_DT_COUNT, &back, &d), TR_OK);
    CHECK(back && tr_tensor_equal_bits(t, back));
    tr_tensor_free(back);
    tr_buf_free(&b);
    tr_tensor_free(t);
  }
  CHECK_EQ_INT(d.nmsgs, 0);
  tr_diag_clear(&d);
}

TR_TEST(npy_header_shapes) {
  /* 1-d prints "(3,)", 0-d "()" (the fixtures carry numpy's exact bytes;
   * here the text alone). */
  struct { int rank; int64_t dims[3]; const char *text; } c[] = {
    {1, {3}, "'shape': (3,), }"},
    {0, {0}, "'shape': (), }"},
    {3, {4, 0, 2}, "'shape': (4, 0, 2), }"},
  };
  for (int k = 0; k < TR_NELEMS(c); k++) {
    tr_tensor *t = tr_tensor_new(TR_DT_S32, c[k].rank, c[k].dims, NULL);
    tr_buf b = {0};
    tr_npy_encode(t, &b, NULL);
    CHECK_CONTAINS(b.p + 10, c[k].text);
    CHECK_CONTAINS(b.p + 10, "{'descr': '<i4', 'fortran_order': False, ");
    tr_buf_free(&b);
    tr_tensor_free(t);
  }
}

/* Headers numpy accepts though it does not write them this way. */
TR_TEST(npy_header_variants) {
  const float one = 1.0f;
  const char *ok[] = {
    "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n",
    "{\"shape\": (1,), \"descr\": \"<f4\", \"fortran_order\": False}",
    "{'fortran_order':False,'shape':(1,),'descr':'<f4'}   \n",
    " { 'descr' : '=f4' , 'fortran_order' : True , 'shape' : ( 1 , ) } \n",
    "{'descr': 'f4', 'fortran_order': False, 'shape': (1L,), }\n",
    "{'descr': '<f4',\n 'fortran_order': False,\n 'shape': (1,)}\n",
  };
  for (int k = 0; k < TR_NELEMS(ok); k++) {
    tr_buf b = mkfile(1, ok[k], &one, 4);
    tr_status st;
    int nm;
    tr_tensor *t = parse(b.p, b.n, NONE, &st, &nm);
    if (st != TR_OK) fprintf(stderr, "  header %d: %s\n", k, diag_msg);
    CHECK_EQ_INT(st, TR_OK);
    CHECK(t && t->dtype == TR_DT_F32 && t->rank == 1 && t->dims[0] == 1);
    CHECK(t && tr_tensor_get_f(t, 0) == 1.0);
    tr_tensor_free(t);
    tr_buf_free(&b);
  }
}

/* ---- every dtype round trips ---- */

TR_TEST(npy_roundtrip_every_dtype) {
  int done = 0;
  for (int k = 0; k < TR_DT_COUNT; k++) {
    tr_dtype dt = (tr_dtype)k;
    if (!tr_dtype_is_array(dt)) continue;
    int64_t dims[2] = {3, 7};
    tr_diag d = {0};
    tr_tensor *t = tr_tensor_new(dt, 2, dims, &d);
    CHECK(t != NULL);
    if (!t) continue;
    const tr_dtype_info *f = &tr_dtypes[dt];
    size_t n = tr_tensor_count(t);
    for (size_t i = 0; i < n; i++) {
      if (f->kind == TR_DK_FLOAT) {
        /* Specials first, then spread bit patterns. */
        static const double sp[] = {1.0, -0.0, NAN, INFINITY, -INFINITY,
                                    1e-300, 448, 3.0e38, -1.5};
        if (i < (size_t)TR_NELEMS(sp)) tr_tensor_set_f(t, i, sp[i]);
        else tr_tensor_set_bits(t, i, (uint64_t)i * 0x9e3779b97f4a7c15u);
      } else if (f->kind == TR_DK_COMPLEX) {
        tr_tensor_set_c(t, i, (double)i - 10.25, i == 3 ? NAN : -0.0);
      } else {
        tr_tensor_set_i(t, i, (int64_t)(i * 0x9e3779b97f4a7c15u) >> 3);
      }
    }
    tr_buf b = {0};
    CHECK_EQ_INT(tr_npy_encode(t, &b, &d), TR_OK);
    tr_tensor *back = NULL;
    tr_status st = tr_npy_parse("rt.npy", b.p, b.n, dt, &back, &d);
    if (st != TR_OK) fprintf(stderr, "  %s: %s\n", f->name, tr_diag_first(&d));
    CHECK_EQ_INT(st, TR_OK);
    if (!back || !tr_tensor_equal_bits(t, back))
      fprintf(stderr, "  %s does not round trip\n", f->name);
    CHECK(back && tr_tensor_equal_bits(t, back));
    /* Without the hint, types with their own descr still read back. */
    tr_tensor_free(back);
    back = NULL;
    const char *descr = tr_npy_descr(dt);
    st = tr_npy_parse("rt.npy", b.p, b.n, TR_DT_COUNT, &back, &d);
    if (descr[1] == 'V' && descr[2] == '1') {
      CHECK_EQ_INT(st, TR_ERR_INVALID);
      CHECK_CONTAINS(tr_diag_first(&d), "give the expected dtype");
    } else {
      CHECK_EQ_INT(st, TR_OK);
      CHECK(back && tr_tensor_equal_bits(t, back));
    }
    tr_tensor_free(back);
    tr_buf_free(&b);
    tr_tensor_free(t);
    tr_diag_clear(&d);
    done++;
  }
  CHECK_EQ_INT(done, 32);
}

/* Concrete values the brief calls out, read back through get_f. */
TR_TEST(npy_roundtrip_values) {
  struct { tr_dtype dt; double v; uint64_t bits; } c[] = {
    {TR_DT_BF16, 1.0, 0x3f80}, {TR_DT_BF16, -0.0, 0x8000},
    {TR_DT_BF16, INFINITY, 0x7f80}, {TR_DT_BF16, 9.183549615799121e-41, 0x0001},
    {TR_DT_F8E4M3FN, 448, 0x7e}, {TR_DT_F8E4M3FN, -0.0, 0x80},
    {TR_DT_F8E4M3FN, 0.001953125, 0x01},
    {TR_DT_F8E5M2, -57344, 0xfb}, {TR_DT_F8E5M2, INFINITY, 0x7c},
    {TR_DT_F16, 5.960464477539063e-08, 0x0001}, {TR_DT_F16, -0.0, 0x8000},
    {TR_DT_F32, 1.401298464324817e-45, 0x00000001},
    {TR_DT_F64, 4.9406564584124654e-324, 1}, {TR_DT_F64, -0.0, 1ull << 63},
  };
  for (int k = 0; k < TR_NELEMS(c); k++) {
    int64_t one = 1;
    tr_tensor *t = tr_tensor_new(c[k].dt, 1, &one, NULL);
    tr_tensor_set_f(t, 0, c[k].v);
    CHECK_EQ_INT(tr_tensor_get_bits(t, 0), c[k].bits);
    tr_buf b = {0};
    tr_npy_encode(t, &b, NULL);
    tr_tensor *back = NULL;
    tr_npy_parse("v.npy", b.p, b.n, c[k].dt, &back, NULL);
    CHECK(back != NULL);
    if (back) {
      double g = tr_tensor_get_f(back, 0);
      CHECK(dbits(g) == dbits(c[k].v));
      CHECK_EQ_INT(tr_tensor_get_bits(back, 0), c[k].bits);
    }
    tr_tensor_free(back);
    tr_tensor_free(t);
    tr_buf_free(&b);
  }
  /* NaN stays NaN, with its pattern. */
  int64_t one = 1;
  tr_tensor *t = tr_tensor_new(TR_DT_F32, 1, &one, NULL);
  tr_tensor_set_bits(t, 0, 0xffc00123);
  tr_buf b = {0};
  tr_npy_encode(t, &b, NULL);
  tr_tensor *back = NULL;
  tr_npy_parse("v.npy", b.p, b.n, TR_DT_COUNT, &back, NULL);
  CHECK(back && isnan(tr_tensor_get_f(back, 0)));
  CHECK(back && tr_tensor_get_bits(back, 0) == 0xffc00123);
  tr_tensor_free(back);
  tr_tensor_free(t);
  tr_buf_free(&b);
  /* s4 -8..7 is written as numpy's int4 bytes (low nibble) and read back. */
  int64_t sixteen = 16;
  t = tr_tensor_new(TR_DT_S4, 1, &sixteen, NULL);
  for (int i = 0; i < 16; i++) tr_tensor_set_i(t, (size_t)i, i - 8);
  CHECK_EQ_INT(((unsigned char *)t->data)[0], 0xf8); /* slot: sign-extended */
  b = (tr_buf){0};
  tr_npy_encode(t, &b, NULL);
  CHECK_EQ_INT((unsigned char)b.p[b.n - 16], 0x08); /* file: low nibble */
  CHECK_EQ_INT((unsigned char)b.p[b.n - 9], 0x0f);
  back = NULL;
  tr_npy_parse("v.npy", b.p, b.n, TR_DT_S4, &back, NULL);
  for (int i = 0; back && i < 16; i++) CHECK_EQ_INT(tr_tensor_get_i(back, (size_t)i), i - 8);
  tr_tensor_free(back);
  tr_tensor_free(t);
  tr_buf_free(&b);
}

/* ---- dtype hints and bit views ---- */

TR_TEST(npy_expected_dtype) {
  /* bf16 bits saved as uint16 (a.view(np.uint16)). */
  uint16_t bits[2] = {0x3f80, 0xc000};
  tr_buf b = mkfile(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }",
                    bits, 4);
  tr_status st;
  int nm;
  tr_tensor *t = parse(b.p, b.n, TR_DT_BF16, &st, &nm);
  CHECK(t && t->dtype == TR_DT_BF16);
  CHECK(t && tr_tensor_get_f(t, 0) == 1.0 && tr_tensor_get_f(t, 1) == -2.0);
  tr_tensor_free(t);
  /* Without a hint it is just u16. */
  t = parse(b.p, b.n, NONE, &st, &nm);
  CHECK(t && t->dtype == TR_DT_U16 && tr_tensor_get_i(t, 0) == 0x3f80);
  tr_tensor_free(t);
  /* A real mismatch is an error naming both. */
  CHECK_STR(fail_with(b.p, b.n, TR_DT_F32, TR_ERR_INVALID),
            "x.npy: holds u16 ('<u2'), expected f32");
  tr_buf_free(&b);
  /* '<V2' without a hint is bf16; with a 2-byte hint it is that type. */
  b = mkfile(1, "{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }",
             bits, 4);
  t = parse(b.p, b.n, NONE, &st, &nm);
  CHECK(t && t->dtype == TR_DT_BF16 && tr_tensor_get_bits(t, 0) == 0x3f80);
  tr_tensor_free(t);
  t = parse(b.p, b.n, TR_DT_F16, &st, &nm);
  CHECK(t && t->dtype == TR_DT_F16 && tr_tensor_get_f(t, 1) == -2.0);
  tr_tensor_free(t);
  CHECK_STR(fail_with(b.p, b.n, TR_DT_F8E4M3FN, TR_ERR_INVALID),
            "x.npy: '<V2' holds 2-byte raw values, which cannot be f8e4m3fn");
  tr_buf_free(&b);
  /* '>V2': big-endian bits. */
  unsigned char be[2] = {0x3f, 0x80};
  b = mkfile(1, "{'descr': '>V2', 'fortran_order': False, 'shape': (), }", be, 2);
  t = parse(b.p, b.n, TR_DT_BF16, &st, &nm);
  CHECK(t && tr_tensor_get_bits(t, 0) == 0x3f80);
  tr_tensor_free(t);
  tr_buf_free(&b);
  /* s4 values saved as int8 and uint8; out of range is refused. */
  signed char s8[3] = {-8, 7, 9};
  b = mkfile(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }", s8, 2);
  t = parse(b.p, b.n, TR_DT_S4, &st, &nm);
  CHECK(t && t->dtype == TR_DT_S4 && tr_tensor_get_i(t, 0) == -8 &&
        tr_tensor_get_i(t, 1) == 7);
  tr_tensor_free(t);
  tr_buf_free(&b);
  b = mkfile(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }", s8, 3);
  CHECK_STR(fail_with(b.p, b.n, TR_DT_S4, TR_ERR_INVALID),
            "x.npy: element 2 is 9, outside the range of s4");
  CHECK_STR(fail_with(b.p, b.n, TR_DT_U4, TR_ERR_INVALID),
            "x.npy: element 0 is -8, outside the range of u4");
  tr_buf_free(&b);
  /* Raw s4 bytes: low nibble or sign-extended; anything else is refused. */
  unsigned char raw[3] = {0x0e, 0xfe, 0x5e};
  b = mkfile(1, "{'descr': '|V1', 'fortran_order': False, 'shape': (3,), }", raw, 3);
  CHECK_STR(fail_with(b.p, b.n, TR_DT_S4, TR_ERR_INVALID),
            "x.npy: element 2 is the byte 0x5e, not a s4 value (expected 0x0f "
            "or less, or a sign-extended byte)");
  CHECK_CONTAINS(fail_with(b.p, b.n, NONE, TR_ERR_INVALID),
                 "x.npy: '|V1' holds 1-byte raw values of a type numpy lacks");
  tr_buf_free(&b);
  b = mkfile(1, "{'descr': '|V1', 'fortran_order': False, 'shape': (2,), }", raw, 2);
  t = parse(b.p, b.n, TR_DT_S4, &st, &nm);
  CHECK(t && tr_tensor_get_i(t, 0) == -2 && tr_tensor_get_i(t, 1) == -2);
  tr_tensor_free(t);
  t = parse(b.p, b.n, TR_DT_F8E4M3FN, &st, &nm);
  CHECK(t && tr_tensor_get_bits(t, 1) == 0xfe && tr_tensor_get_f(t, 1) == -448);
  tr_tensor_free(t);
  tr_buf_free(&b);
  /* pred bytes other than 0/1 read as true, as numpy does. */
  unsigned char pb[3] = {0, 2, 255};
  b = mkfile(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", pb, 3);
  t = parse(b.p, b.n, NONE, &st, &nm);
  CHECK(t && ((unsigned char *)t->data)[0] == 0 &&
        ((unsigned char *)t->data)[1] == 1 && ((unsigned char *)t->data)[2] == 1);
  tr_tensor_free(t);
  tr_buf_free(&b);
}

/* ---- malformed files ---- */

TR_TEST(npy_errors_preamble) {
  CHECK_STR(fail_with("PK\003\004 not npy", 15, NONE, TR_ERR_SYNTAX),
            "x.npy: not a .npy file (expected the magic \"\\x93NUMPY\" at the start)");
  CHECK_STR(fail_with("\x93NUM", 4, NONE, TR_ERR_SYNTAX),
            "x.npy: truncated header: 4 bytes, a .npy file starts with at least 10");
  CHECK_STR(fail_with("", 0, NONE, TR_ERR_SYNTAX),
            "x.npy: truncated header: 0 bytes, a .npy file starts with at least 10");
  CHECK_STR(fail_with("\x93NUMPY\x04\x00\x10\x00", 10, NONE, TR_ERR_UNSUPPORTED),
            "x.npy: unsupported .npy format version 4.0 (trench reads 1.0, 2.0 and 3.0)");
  CHECK_STR(fail_with("\x93NUMPY\x02\x00\x10\x00", 10, NONE, TR_ERR_SYNTAX),
            "x.npy: truncated header: 10 bytes, a version 2.0 preamble is 12");
  CHECK_STR(fail_with("\x93NUMPY\x01\x00\x76\x00{'descr'", 17, NONE, TR_ERR_SYNTAX),
            "x.npy: truncated header: it claims 118 bytes, the file has 7 after "
            "the preamble");
  /* A v2 length field of 4 GiB against a tiny file. */
  CHECK_CONTAINS(fail_with("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14, NONE,
                           TR_ERR_SYNTAX),
                 "it claims 4294967295 bytes, the file has 2");
}

TR_TEST(npy_errors_header) {
  CHECK_STR(hdr_fail("[1, 2]", 0, TR_ERR_SYNTAX),
            "x.npy: header: expected a dict '{...}', found '[1, 2]'");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'fortran_order': False, }", 0, TR_ERR_SYNTAX),
            "x.npy: header: expected 'shape' tuple, found none");
  CHECK_STR(hdr_fail("{'fortran_order': False, 'shape': (1,)}", 4, TR_ERR_SYNTAX),
            "x.npy: header: missing 'descr'");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'shape': (1,)}", 4, TR_ERR_SYNTAX),
            "x.npy: header: missing 'fortran_order'");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }",
                     24, TR_ERR_SYNTAX),
            "x.npy: header: expected 'shape' tuple, found '[2, 3], }'");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (3), }",
                     12, TR_ERR_SYNTAX),
            "x.npy: header: expected 'shape' tuple, found the int (3) (a 1-d "
            "shape is written (3,))");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }",
                     0, TR_ERR_SYNTAX),
            "x.npy: header: 'shape' has a negative dim -3");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'fortran_order': False, 'shape': "
                     "(99999999999999999999,), }", 0, TR_ERR_SYNTAX),
            "x.npy: header: 'shape' has a dim beyond 9223372036854775807");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }",
                     0, TR_ERR_SYNTAX),
            "x.npy: header: expected an integer dim in 'shape', found 'x), }'");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", 0,
                     TR_ERR_SYNTAX),
            "x.npy: header: expected ',' or ')' in 'shape', found end of header");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", 4,
                     TR_ERR_SYNTAX),
            "x.npy: header: expected 'fortran_order' True or False, found '0, 'shape': '");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'fortran_order': Falsey, 'shape': (1,)}", 4,
                     TR_ERR_SYNTAX),
            "x.npy: header: expected 'fortran_order' True or False, found 'Falsey, 'sha'");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), "
                     "'extra': 1}", 4, TR_ERR_SYNTAX),
            "x.npy: header: unexpected key 'extra' (a .npy header has 'descr', "
            "'fortran_order' and 'shape')");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                     "'shape': (1,)}", 4, TR_ERR_SYNTAX),
            "x.npy: header: 'descr' given twice");
  CHECK_STR(hdr_fail("{'descr': '<f4 , 'fortran_order': False, 'shape': (1,)}",
                     4, TR_ERR_SYNTAX),
            "x.npy: header: expected ',' or '}' in the header dict, found "
            "'fortran_orde'");
  CHECK_STR(hdr_fail("{'descr': '<f4", 4, TR_ERR_SYNTAX),
            "x.npy: header: expected 'descr' string, found ''<f4'");
  CHECK_STR(hdr_fail("{'descr': 3, 'fortran_order': False, 'shape': (1,)}",
                     4, TR_ERR_SYNTAX),
            "x.npy: header: expected 'descr' string, found '3, 'fortran_'");
  CHECK_STR(hdr_fail("{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}", 4,
                     TR_ERR_SYNTAX),
            "x.npy: header: expected ',' or '}' in the header dict, found "
            "''fortran_ord'");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x",
                     4, TR_ERR_SYNTAX),
            "x.npy: header: expected only padding after the header dict, found 'x'");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)",
                     4, TR_ERR_SYNTAX),
            "x.npy: header: expected ',' or '}' in the header dict, found end of header");
  CHECK_STR(hdr_fail("{'descr': [('a', '<f4')], 'fortran_order': False, "
                     "'shape': (1,)}", 4, TR_ERR_SYNTAX),
            "x.npy: header: 'descr' is a structured dtype; trench reads plain arrays");
  CHECK_STR(hdr_fail("{7: 1}", 0, TR_ERR_SYNTAX),
            "x.npy: header: expected a quoted key or '}', found '7: 1}'");
  /* 65 dims: past numpy's limit. */
  tr_buf h = {0};
  tr_buf_puts(&h, "{'descr': '|u1', 'fortran_order': False, 'shape': (");
  for (int i = 0; i < 65; i++) tr_buf_puts(&h, "1, ");
  tr_buf_puts(&h, "), }");
  CHECK_STR(hdr_fail(h.p, 1, TR_ERR_SYNTAX),
            "x.npy: header: 'shape' has more than 64 dims");
  tr_buf_free(&h);
}

TR_TEST(npy_errors_descr_and_data) {
  CHECK_STR(hdr_fail("{'descr': '<U5', 'fortran_order': False, 'shape': (1,)}", 20,
                     TR_ERR_UNSUPPORTED),
            "x.npy: header: unsupported descr '<U5' (trench reads bool, int, "
            "uint, float, complex and raw 'V' arrays)");
  CHECK_CONTAINS(hdr_fail("{'descr': '|O', 'fortran_order': False, 'shape': (1,)}",
                          8, TR_ERR_UNSUPPORTED), "unsupported descr '|O'");
  CHECK_CONTAINS(hdr_fail("{'descr': '<M8[ns]', 'fortran_order': False, 'shape': ()}",
                          8, TR_ERR_UNSUPPORTED), "unsupported descr '<M8[ns]'");
  CHECK_CONTAINS(hdr_fail("{'descr': '<f16', 'fortran_order': False, 'shape': ()}",
                          16, TR_ERR_UNSUPPORTED), "unsupported descr '<f16'");
  CHECK_CONTAINS(hdr_fail("{'descr': '<i3', 'fortran_order': False, 'shape': ()}",
                          3, TR_ERR_UNSUPPORTED), "unsupported descr '<i3'");
  CHECK_CONTAINS(hdr_fail("{'descr': '', 'fortran_order': False, 'shape': ()}",
                          3, TR_ERR_UNSUPPORTED), "unsupported descr ''");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                     20, TR_ERR_SYNTAX),
            "x.npy: data: expected 24 bytes for '<f4' (2, 3), found 20");
  CHECK_STR(hdr_fail("{'descr': '<c16', 'fortran_order': False, 'shape': (), }",
                     0, TR_ERR_SYNTAX),
            "x.npy: data: expected 16 bytes for '<c16' (), found 0");
  /* A lying header: terabytes claimed, nothing allocated. */
  CHECK_STR(hdr_fail("{'descr': '<f8', 'fortran_order': False, 'shape': "
                     "(1099511627776, 1099511627776), }", 8, TR_ERR_UNSUPPORTED),
            "x.npy: shape (1099511627776, 1099511627776) of '<f8' overflows "
            "64-bit sizes");
  CHECK_STR(hdr_fail("{'descr': '<f8', 'fortran_order': False, 'shape': "
                     "(0, 4611686018427387904, 4), }", 0, TR_ERR_UNSUPPORTED),
            "x.npy: shape (0, 4611686018427387904, 4) of '<f8' overflows "
            "64-bit sizes");
  CHECK_STR(hdr_fail("{'descr': '<f8', 'fortran_order': False, 'shape': "
                     "(4294967296, 8), }", 8, TR_ERR_UNSUPPORTED),
            "x.npy: shape (4294967296, 8) of '<f8' is 274877906944 bytes, more "
            "than trench's limit of 17179869184");
  CHECK_STR(hdr_fail("{'descr': '<f4', 'fortran_order': False, 'shape': "
                     "(1073741824,), }", 64, TR_ERR_SYNTAX),
            "x.npy: data: expected 4294967296 bytes for '<f4' (1073741824,), found 64");
  /* Trailing bytes: read, with a warning. */
  float two[2] = {1, 2};
  tr_buf b = mkfile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
                    two, 8);
  tr_status st;
  int nm;
  tr_tensor *t = parse(b.p, b.n, NONE, &st, &nm);
  CHECK_EQ_INT(st, TR_OK);
  CHECK(t && tr_tensor_count(t) == 1 && tr_tensor_get_f(t, 0) == 1);
  CHECK_EQ_INT(nm, 1);
  CHECK_STR(diag_msg, "x.npy: warning: 4 bytes after the data are ignored");
  tr_tensor_free(t);
  tr_buf_free(&b);
}

/* Every prefix and many one-byte corruptions of real files: an error or a
 * tensor, never a crash (run under ASan by make check-san). */
TR_TEST(npy_corrupt_files) {
  int oks = 0, errs = 0;
  for (int k = 0; k < TR_NELEMS(fixtures); k++) {
    const fixture *f = &fixtures[k];
    char *copy = malloc(f->len + 1);
    for (size_t cut = 0; cut < f->len; cut++) {
      memcpy(copy, f->buf, cut);
      tr_status st;
      int nm;
      tr_tensor *t = parse(copy, cut, f->expect, &st, &nm);
      CHECK(st != TR_OK && t == NULL && nm == 1);
      tr_tensor_free(t);
    }
    static const unsigned char vals[] = {0, ' ', '(', ')', ',', '\'', '9', '-', 0xff};
    for (size_t at = 0; at < f->len; at++) {
      for (int v = 0; v < TR_NELEMS(vals); v++) {
        memcpy(copy, f->buf, f->len);
        copy[at] = (char)vals[v];
        tr_status st;
        int nm;
        tr_tensor *t = parse(copy, f->len, f->expect, &st, &nm);
        CHECK((st == TR_OK) == (t != NULL));
        CHECK(st == TR_OK || nm == 1);
        if (t) oks++;
        else errs++;
        tr_tensor_free(t);
      }
    }
    free(copy);
  }
  CHECK(oks > 1000 && errs > 1000);
}

/* ---- files on disk ---- */

TR_TEST(npy_file_io) {
  char path[64];
  snprintf(path, sizeof path, "/tmp/trench_npy_test_%d.npy", (int)getpid());
  int64_t dims[2] = {2, 2};
  tr_diag d = {0};
  tr_tensor *t = tr_tensor_new(TR_DT_BF16, 2, dims, &d);
  for (size_t i = 0; i < 4; i++) tr_tensor_set_f(t, i, (double)i * 0.5 - 1);
  CHECK_EQ_INT(tr_npy_write(path, t, &d), TR_OK);
  tr_tensor *back = NULL;
  CHECK_EQ_INT(tr_npy_read(path, TR_DT_BF16, &back, &d), TR_OK);
  CHECK(back && tr_tensor_equal_bits(t, back));
  CHECK(back && tr_tensor_get_f(back, 3) == 0.5);
  CHECK_EQ_INT(d.nmsgs, 0);
  tr_tensor_free(back);
  remove(path);
  back = (tr_tensor *)1;
  CHECK_EQ_INT(tr_npy_read(path, TR_DT_COUNT, &back, &d), TR_ERR_IO);
  CHECK(back == NULL);
  CHECK_CONTAINS(tr_diag_first(&d), "cannot open");
  CHECK_CONTAINS(tr_diag_first(&d), path);
  tr_diag_clear(&d);
  CHECK_EQ_INT(tr_npy_write("/nonexistent-dir/x.npy", t, &d), TR_ERR_IO);
  CHECK_CONTAINS(tr_diag_first(&d), "/nonexistent-dir/x.npy: cannot create");
  tr_diag_clear(&d);
  tr_tensor_free(t);
}

/* ---- tensors ---- */

TR_TEST(tensor_new_limits) {
  tr_diag d = {0};
  int64_t neg[2] = {2, -1};
  CHECK(tr_tensor_new(TR_DT_F32, 2, neg, &d) == NULL);
  CHECK_STR(tr_diag_first(&d), "tensor: dim 1 is negative (-1)");
  tr_diag_clear(&d);
  int64_t huge[3] = {1 << 20, 1 << 20, 1 << 20};
  CHECK(tr_tensor_new(TR_DT_U8, 3, huge, &d) == NULL);
  CHECK_STR(tr_diag_first(&d), "tensor: u8 tensor of 1152921504606846976 "
            "bytes is larger than the limit of 17179869184");
  tr_diag_clear(&d);
  int64_t ovf[2] = {INT64_MAX, INT64_MAX};
  CHECK(tr_tensor_new(TR_DT_F64, 2, ovf, &d) == NULL);
  CHECK_STR(tr_diag_first(&d), "tensor: f64 tensor of 2 dims overflows 64-bit sizes");
  tr_diag_clear(&d);
  int64_t zero_ovf[3] = {0, INT64_MAX, 4};
  CHECK(tr_tensor_new(TR_DT_F64, 3, zero_ovf, &d) == NULL);
  CHECK_STR(tr_diag_first(&d), "tensor: f64 tensor of 3 dims overflows 64-bit sizes");
  tr_diag_clear(&d);
  CHECK(tr_tensor_new(TR_DT_TOKEN, 0, NULL, &d) == NULL);
  CHECK_STR(tr_diag_first(&d), "tensor: token is not an array element type");
  tr_diag_clear(&d);
  int64_t ones[65] = {0};
  CHECK(tr_tensor_new(TR_DT_F32, 65, ones, &d) == NULL);
  CHECK_STR(tr_diag_first(&d), "tensor: rank 65 is outside 0..64");
  tr_diag_clear(&d);
  /* An empty tensor may have huge other dims (numpy allows it); a scalar
   * holds one element. */
  int64_t e[2] = {(int64_t)1 << 50, 0};
  tr_tensor *t = tr_tensor_new(TR_DT_F32, 2, e, &d);
  CHECK(t && t->nbytes == 0 && tr_tensor_count(t) == 0 && t->data != NULL);
  tr_tensor_free(t);
  t = tr_tensor_new(TR_DT_C128, 0, NULL, &d);
  CHECK(t && t->nbytes == 16 && tr_tensor_count(t) == 1 && t->rank == 0);
  tr_tensor_free(t);
  CHECK_EQ_INT(d.nmsgs, 0);
  tr_tensor_free(NULL);
}

TR_TEST(tensor_access) {
  int64_t n = 4;
  tr_tensor *t = tr_tensor_new(TR_DT_S4, 1, &n, NULL);
  tr_tensor_set_i(t, 0, 9);   /* wraps to -7 */
  tr_tensor_set_i(t, 1, -8);
  tr_tensor_set_f(t, 2, 100); /* saturates */
  tr_tensor_set_f(t, 3, -2.9);
  CHECK_EQ_INT(tr_tensor_get_i(t, 0), -7);
  CHECK_EQ_INT(tr_tensor_get_i(t, 1), -8);
  CHECK_EQ_INT(tr_tensor_get_i(t, 2), 7);
  CHECK_EQ_INT(tr_tensor_get_i(t, 3), -2);
  CHECK_EQ_INT(tr_tensor_get_bits(t, 1), 0x8);
  CHECK(tr_tensor_get_f(t, 1) == -8.0);
  CHECK_EQ_INT(((unsigned char *)t->data)[0], 0xf9);
  tr_tensor_free(t);

  t = tr_tensor_new(TR_DT_U8, 1, &n, NULL);
  tr_tensor_set_f(t, 0, -1);
  tr_tensor_set_f(t, 1, NAN);
  tr_tensor_set_f(t, 2, 1e30);
  tr_tensor_set_u(t, 3, 0x1ff);
  CHECK_EQ_INT(tr_tensor_get_u(t, 0), 0);
  CHECK_EQ_INT(tr_tensor_get_u(t, 1), 0);
  CHECK_EQ_INT(tr_tensor_get_u(t, 2), 255);
  CHECK_EQ_INT(tr_tensor_get_u(t, 3), 255);
  tr_tensor_free(t);

  t = tr_tensor_new(TR_DT_S64, 1, &n, NULL);
  tr_tensor_set_f(t, 0, 1e300);
  tr_tensor_set_f(t, 1, -1e300);
  tr_tensor_set_f(t, 2, NAN);
  tr_tensor_set_i(t, 3, INT64_MIN);
  CHECK(tr_tensor_get_i(t, 0) == INT64_MAX);
  CHECK(tr_tensor_get_i(t, 1) == INT64_MIN);
  CHECK_EQ_INT(tr_tensor_get_i(t, 2), 0);
  CHECK(tr_tensor_get_i(t, 3) == INT64_MIN);
  tr_tensor_free(t);

  t = tr_tensor_new(TR_DT_U64, 1, &n, NULL);
  tr_tensor_set_u(t, 0, UINT64_MAX);
  tr_tensor_set_f(t, 1, 1e30);
  CHECK(tr_tensor_get_u(t, 0) == UINT64_MAX);
  CHECK(tr_tensor_get_u(t, 1) == UINT64_MAX);
  CHECK(tr_tensor_get_f(t, 0) == 18446744073709551616.0);
  tr_tensor_free(t);

  t = tr_tensor_new(TR_DT_PRED, 1, &n, NULL);
  tr_tensor_set_i(t, 0, 5);
  tr_tensor_set_f(t, 1, -0.5);
  tr_tensor_set_f(t, 2, 0.0);
  tr_tensor_set_bits(t, 3, 0x100);
  CHECK_EQ_INT(tr_tensor_get_i(t, 0), 1);
  CHECK_EQ_INT(tr_tensor_get_i(t, 1), 1);
  CHECK_EQ_INT(tr_tensor_get_i(t, 2), 0);
  CHECK_EQ_INT(tr_tensor_get_i(t, 3), 1);
  tr_tensor_free(t);

  t = tr_tensor_new(TR_DT_U4, 1, &n, NULL);
  tr_tensor_set_i(t, 0, -1);
  CHECK_EQ_INT(tr_tensor_get_u(t, 0), 15);
  tr_tensor_free(t);

  t = tr_tensor_new(TR_DT_F16, 1, &n, NULL);
  tr_tensor_set_f(t, 0, 65520);  /* rounds to inf */
  tr_tensor_set_f(t, 1, 1.0 / 3);
  CHECK_EQ_INT(tr_tensor_get_bits(t, 0), 0x7c00);
  CHECK_EQ_INT(tr_tensor_get_bits(t, 1), 0x3555);
  CHECK(tr_tensor_get_f(t, 1) == 0.333251953125);
  tr_tensor_free(t);

  t = tr_tensor_new(TR_DT_C64, 1, &n, NULL);
  tr_tensor_set_c(t, 0, 1.5, -2.25);
  tr_tensor_set_f(t, 1, 3);
  double re, im;
  tr_tensor_get_c(t, 0, &re, &im);
  CHECK(re == 1.5 && im == -2.25);
  tr_tensor_get_c(t, 1, &re, &im);
  CHECK(re == 3 && im == 0);
  tr_tensor_free(t);
}

TR_TEST(tensor_equal_and_print) {
  int64_t d23[2] = {2, 3}, d32[2] = {3, 2};
  tr_tensor *a = tr_tensor_new(TR_DT_F32, 2, d23, NULL);
  tr_tensor *b = tr_tensor_new(TR_DT_F32, 2, d32, NULL);
  CHECK(!tr_tensor_equal_bits(a, b)); /* same bytes, other dims */
  tr_tensor *c = tr_tensor_clone(a);
  CHECK(tr_tensor_equal_bits(a, c));
  tr_tensor_set_f(a, 5, NAN);
  CHECK(!tr_tensor_equal_bits(a, c));
  tr_tensor_set_f(c, 5, NAN);
  CHECK(tr_tensor_equal_bits(a, c)); /* NaN equals itself by pattern */
  tr_tensor_set_f(c, 0, -0.0);
  CHECK(!tr_tensor_equal_bits(a, c)); /* -0.0 differs from 0.0 */
  tr_tensor *i = tr_tensor_new(TR_DT_S32, 2, d23, NULL);
  CHECK(!tr_tensor_equal_bits(a, i) || a->dtype == i->dtype);
  CHECK(!tr_tensor_equal_bits(b, i));
  tr_buf s = {0};
  tr_tensor_print_type(&s, a);
  tr_buf_putc(&s, ' ');
  tr_tensor *z = tr_tensor_new(TR_DT_BF16, 0, NULL, NULL);
  tr_tensor_print_type(&s, z);
  CHECK_STR(tr_buf_str(&s), "f32[2,3] bf16[]");
  tr_buf_free(&s);
  tr_tensor_free(a);
  tr_tensor_free(b);
  tr_tensor_free(c);
  tr_tensor_free(i);
  tr_tensor_free(z);
}

/* ---- narrow float conversions (dtype.c) ---- */

static uint64_t fb(tr_dtype t, double v) { return tr_float_from_double(t, v); }

TR_TEST(dtype_convert_bf16) {
  CHECK_EQ_INT(fb(TR_DT_BF16, 1.0), 0x3f80);
  CHECK_EQ_INT(fb(TR_DT_BF16, -0.0), 0x8000);
  CHECK_EQ_INT(fb(TR_DT_BF16, 0.0), 0x0000);
  /* Ties go to the even mantissa. */
  CHECK_EQ_INT(fb(TR_DT_BF16, 1 + ldexp(1, -8)), 0x3f80);     /* 1.0 | 1.0078125 */
  CHECK_EQ_INT(fb(TR_DT_BF16, 1 + 3 * ldexp(1, -8)), 0x3f82); /* odd below: up */
  CHECK_EQ_INT(fb(TR_DT_BF16, -(1 + 3 * ldexp(1, -8))), 0xbf82);
  CHECK_EQ_INT(fb(TR_DT_BF16, 1 + ldexp(1, -8) + ldexp(1, -23)), 0x3f81);
  /* One rounding from double: 1 + 2^-8 + 2^-30 is above the tie, though
   * it becomes the tie when first rounded to f32 (ml_dtypes does that). */
  CHECK_EQ_INT(fb(TR_DT_BF16, 1 + ldexp(1, -8) + ldexp(1, -30)), 0x3f81);
  /* f32 max rounds past bf16 max to inf; bf16 max itself stays. */
  CHECK_EQ_INT(fb(TR_DT_BF16, 3.4028234663852886e38), 0x7f80);
  CHECK_EQ_INT(fb(TR_DT_BF16, 3.3895313892515355e38), 0x7f7f);
  CHECK_EQ_INT(fb(TR_DT_BF16, NAN), 0x7fc0);
  CHECK_EQ_INT(fb(TR_DT_BF16, -INFINITY), 0xff80);
  /* Subnormals: the smallest, and half of it (a tie with 0: to even). */
  CHECK_EQ_INT(fb(TR_DT_BF16, ldexp(1, -133)), 0x0001);
  CHECK_EQ_INT(fb(TR_DT_BF16, ldexp(1, -134)), 0x0000);
  CHECK_EQ_INT(fb(TR_DT_BF16, 3 * ldexp(1, -134)), 0x0002);
  CHECK(tr_float_to_double(TR_DT_BF16, 0x0001) == ldexp(1, -133));
  CHECK(tr_float_to_double(TR_DT_BF16, 0x3f80) == 1.0);
  CHECK(tr_float_to_double(TR_DT_BF16, 0xc2f7) == -123.5);
  CHECK(isnan(tr_float_to_double(TR_DT_BF16, 0xffc1)));
  CHECK(tr_float_max(TR_DT_BF16) == 3.3895313892515355e38);
}

TR_TEST(dtype_convert_f16) {
  CHECK_EQ_INT(fb(TR_DT_F16, ldexp(1, -24)), 0x0001);      /* min subnormal */
  CHECK_EQ_INT(fb(TR_DT_F16, ldexp(1, -25)), 0x0000);      /* tie with 0 */
  CHECK_EQ_INT(fb(TR_DT_F16, ldexp(1, -25) * 1.0000001), 0x0001);
  CHECK_EQ_INT(fb(TR_DT_F16, 3 * ldexp(1, -25)), 0x0002);  /* tie 1|2: even */
  CHECK_EQ_INT(fb(TR_DT_F16, 5 * ldexp(1, -25)), 0x0002);  /* tie 2|3: even */
  CHECK_EQ_INT(fb(TR_DT_F16, -1023 * ldexp(1, -24)), 0x83ff);
  CHECK_EQ_INT(fb(TR_DT_F16, ldexp(1, -14) - ldexp(1, -25)), 0x0400); /* up to normal */
  CHECK_EQ_INT(fb(TR_DT_F16, ldexp(1, -14)), 0x0400);
  CHECK(tr_float_to_double(TR_DT_F16, 0x0001) == ldexp(1, -24));
  CHECK(tr_float_to_double(TR_DT_F16, 0x03ff) == 1023 * ldexp(1, -24));
  CHECK(tr_float_to_double(TR_DT_F16, 0x8200) == -512 * ldexp(1, -24));
  CHECK_EQ_INT(fb(TR_DT_F16, 65504), 0x7bff);
  CHECK_EQ_INT(fb(TR_DT_F16, 65519.99), 0x7bff);
  CHECK_EQ_INT(fb(TR_DT_F16, 65520), 0x7c00); /* tie above max: to inf */
  CHECK_EQ_INT(fb(TR_DT_F16, -1e10), 0xfc00);
  CHECK_EQ_INT(fb(TR_DT_F16, -0.0), 0x8000);
  CHECK_EQ_INT(fb(TR_DT_F16, NAN), 0x7e00);
  CHECK(tr_float_to_double(TR_DT_F16, 0xfc00) == -INFINITY);
}

TR_TEST(dtype_convert_f8) {
  /* f8e4m3fn: no inf; max 448 (0x7e); 0x7f is NaN; overflow is NaN. */
  CHECK_EQ_INT(fb(TR_DT_F8E4M3FN, 448), 0x7e);
  CHECK(tr_float_to_double(TR_DT_F8E4M3FN, 0x7e) == 448);
  CHECK(tr_float_to_double(TR_DT_F8E4M3FN, 0xfe) == -448);
  CHECK(isnan(tr_float_to_double(TR_DT_F8E4M3FN, 0x7f)));
  CHECK(tr_float_max(TR_DT_F8E4M3FN) == 448);
  CHECK_EQ_INT(fb(TR_DT_F8E4M3FN, 464), 0x7e); /* tie 448|480: to even */
  CHECK_EQ_INT(fb(TR_DT_F8E4M3FN, 465), 0x7f);
  CHECK_EQ_INT(fb(TR_DT_F8E4M3FN, 1e9), 0x7f);
  CHECK_EQ_INT(fb(TR_DT_F8E4M3FN, -1e9), 0xff);
  CHECK_EQ_INT(fb(TR_DT_F8E4M3FN, INFINITY), 0x7f);
  CHECK_EQ_INT(fb(TR_DT_F8E4M3FN, NAN), 0x7f);
  CHECK_EQ_INT(fb(TR_DT_F8E4M3FN, -0.0), 0x80);
  CHECK_EQ_INT(fb(TR_DT_F8E4M3FN, ldexp(1, -9)), 0x01);
  CHECK_EQ_INT(fb(TR_DT_F8E4M3FN, ldexp(1, -10)), 0x00); /* tie with 0 */
  CHECK_EQ_INT(fb(TR_DT_F8E4M3FN, 3 * ldexp(1, -10)), 0x02);
  CHECK_EQ_INT(fb(TR_DT_F8E4M3FN, 1.0625), 0x38); /* 1|1.125 tie: even */
  CHECK_EQ_INT(fb(TR_DT_F8E4M3FN, 1.1875), 0x3a); /* 1.125|1.25 tie: even */
  /* f8e5m2: IEEE-like; max 57344; overflow is inf. */
  CHECK_EQ_INT(fb(TR_DT_F8E5M2, 57344), 0x7b);
  CHECK_EQ_INT(fb(TR_DT_F8E5M2, 61439), 0x7b);
  CHECK_EQ_INT(fb(TR_DT_F8E5M2, 61440), 0x7c); /* tie above max: to inf */
  CHECK_EQ_INT(fb(TR_DT_F8E5M2, 1e9), 0x7c);
  CHECK_EQ_INT(fb(TR_DT_F8E5M2, -1e9), 0xfc);
  CHECK(tr_float_to_double(TR_DT_F8E5M2, 0x7c) == INFINITY);
  CHECK(isnan(tr_float_to_double(TR_DT_F8E5M2, 0x7d)));
  CHECK_EQ_INT(fb(TR_DT_F8E5M2, NAN), 0x7e);
  CHECK_EQ_INT(fb(TR_DT_F8E5M2, -0.0), 0x80);
  CHECK_EQ_INT(fb(TR_DT_F8E5M2, ldexp(1, -16)), 0x01);
  CHECK(tr_float_to_double(TR_DT_F8E5M2, 0x03) == 3 * ldexp(1, -16));
  CHECK(tr_float_max(TR_DT_F8E5M2) == 57344);
}

TR_TEST(dtype_convert_f32_f64) {
  CHECK_EQ_INT(fb(TR_DT_F32, 0.1), 0x3dcccccd);
  CHECK_EQ_INT(fb(TR_DT_F32, -0.0), 0x80000000);
  CHECK_EQ_INT(fb(TR_DT_F32, 1e-46), 0);          /* below half the min subnormal */
  CHECK_EQ_INT(fb(TR_DT_F32, 1e39), 0x7f800000);
  CHECK(fb(TR_DT_F64, -0.0) == 0x8000000000000000u);
  CHECK(tr_float_to_double(TR_DT_F32, 0x00000001) == ldexp(1, -149));
  /* Every f16 and bf16 pattern survives to_double -> from_double. */
  int bad = 0;
  for (uint64_t p = 0; p < 0x10000; p++) {
    tr_dtype ts[2] = {TR_DT_F16, TR_DT_BF16};
    for (int k = 0; k < 2; k++) {
      double v = tr_float_to_double(ts[k], p);
      if (isnan(v)) continue;
      if (fb(ts[k], v) != p) bad++;
    }
  }
  CHECK_EQ_INT(bad, 0);
}
