/* dtype.h - element types (from dtypes.def) and exact conversions between
 * double and the narrow float formats. */
#ifndef TR_DTYPE_H
#define TR_DTYPE_H

#include "../base/base.h"

typedef enum {
  TR_DK_PRED, TR_DK_SINT, TR_DK_UINT, TR_DK_FLOAT, TR_DK_COMPLEX,
  TR_DK_TOKEN, TR_DK_TUPLE, TR_DK_OPAQUE
} tr_dkind;

typedef enum {
  TR_FS_NONE, TR_FS_IEEE, TR_FS_FN, TR_FS_FNUZ, TR_FS_FINITE, TR_FS_E8M0
} tr_fstyle;

typedef enum {
#define X(E, name, bits, kind, eb, mb, bias, fs, core) TR_DT_##E,
#include "dtypes.def"
#undef X
  TR_DT_COUNT
} tr_dtype;

typedef struct {
  const char *name; /* HLO spelling */
  int bits;         /* storage bits per element */
  tr_dkind kind;    /* family */
  int ebits, mbits; /* float exponent and stored mantissa bits */
  int bias;         /* float exponent bias */
  tr_fstyle fstyle; /* float special-value style */
  bool core;        /* handled by every layer */
} tr_dtype_info;

extern const tr_dtype_info tr_dtypes[TR_DT_COUNT];

/* Returns true and sets *dt when s[0..n) spells a dtype usable in a shape. */
bool tr_dtype_lookup(const char *s, size_t n, tr_dtype *dt);
static inline const char *tr_dtype_name(tr_dtype t) { return tr_dtypes[t].name; }
static inline bool tr_dtype_is_float(tr_dtype t) { return tr_dtypes[t].kind == TR_DK_FLOAT; }
static inline bool tr_dtype_is_int(tr_dtype t) {
  return tr_dtypes[t].kind == TR_DK_SINT || tr_dtypes[t].kind == TR_DK_UINT;
}
static inline bool tr_dtype_is_array(tr_dtype t) {
  tr_dkind k = tr_dtypes[t].kind;
  return k != TR_DK_TOKEN && k != TR_DK_TUPLE && k != TR_DK_OPAQUE;
}
/* Bytes one element occupies in memory (sub-byte types take one byte each;
 * .npy and tensors store s4/u4/f4/f6 unpacked, one element per byte). */
int tr_dtype_size(tr_dtype t);

/* Narrow float formats: bit pattern <-> double. Conversion to the format
 * rounds once, to nearest even, from the double (ml_dtypes rounds f64 via
 * f32, twice); overflow gives inf where the format has one, else NaN
 * (FN/FNUZ/E8M0) or the largest finite value (FINITE), as XLA's convert
 * does. f8e8m0fnu (not a core type) rounds ties to the even exponent and
 * maps 0 to its smallest value, where ml_dtypes rounds ties up and gives
 * NaN. Also valid for f16, bf16, f32, f64. */
uint64_t tr_float_from_double(tr_dtype t, double v);
double tr_float_to_double(tr_dtype t, uint64_t bits);
/* Largest finite value of a float type. */
double tr_float_max(tr_dtype t);
bool tr_float_has_inf(tr_dtype t);
bool tr_float_has_nan(tr_dtype t);
/* Float types whose NaN carries payload bits in HLO text (nan(0x..)). */
bool tr_float_has_payload(tr_dtype t);

/* Integer range of an integer (or pred) type. */
int64_t tr_int_min(tr_dtype t);
uint64_t tr_int_max(tr_dtype t);

#endif
