/* npy.c - reading and writing NumPy .npy files (format 1.0, 2.0, 3.0).
 *
 * The header is a Python dict literal; it is parsed here by a small
 * recursive-descent reader that accepts what numpy writes and what numpy's
 * own reader (ast.literal_eval plus key checks) accepts for the three keys,
 * and nothing that needs evaluating. Sizes from the header are checked
 * against the bytes actually present before anything is allocated, so a
 * lying header costs an error message, not memory. docs/NPY.md describes
 * the dtype mapping and the choices made for types numpy lacks. */
#include "tensor.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64         /* numpy's ARRAY_ALIGN */
#define NPY_GROWTH_DIGITS 21 /* numpy's GROWTH_AXIS_MAX_DIGITS */

static bool host_is_little(void) {
  uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

/* ---- descr <-> dtype ---- */

/* Types numpy lacks are written as raw bits with a void descr, exactly as
 * np.save writes ml_dtypes arrays ('<V2' for bfloat16, '<V1' for the
 * one-byte types). ml_dtypes' float8_e5m2 saves as '<f1', which np.load
 * then refuses; trench writes '<V1' for it and reads '<f1' too. */
const char *tr_npy_descr(tr_dtype t) {
  switch (t) {
  case TR_DT_PRED: return "|b1";
  case TR_DT_S8: return "|i1";
  case TR_DT_S16: return "<i2";
  case TR_DT_S32: return "<i4";
  case TR_DT_S64: return "<i8";
  case TR_DT_U8: return "|u1";
  case TR_DT_U16: return "<u2";
  case TR_DT_U32: return "<u4";
  case TR_DT_U64: return "<u8";
  case TR_DT_F16: return "<f2";
  case TR_DT_F32: return "<f4";
  case TR_DT_F64: return "<f8";
  case TR_DT_C64: return "<c8";
  case TR_DT_C128: return "<c16";
  case TR_DT_BF16: return "<V2";
  default:
    if ((unsigned)t < TR_DT_COUNT && tr_dtype_is_array(t) &&
        tr_dtype_size(t) == 1)
      return "<V1";
    return NULL;
  }
}

/* What a descr string says: a dtype, or raw bytes whose type only the
 * caller knows (void, and ml_dtypes' '<f1'). */
typedef struct {
  tr_dtype dt;    /* TR_DT_COUNT for raw */
  int size;       /* bytes per element in the file */
  bool big;       /* stored big-endian */
  bool f1;        /* the '<f1' of ml_dtypes' float8_e5m2 */
} npy_type;

static bool parse_descr(const char *s, size_t n, npy_type *ty) {
  bool big = !host_is_little();
  size_t i = 0;
  if (n > 0 && strchr("<>|=", s[0])) {
    if (s[0] == '<') big = false;
    else if (s[0] == '>') big = true;
    i = 1;
  }
  if (i >= n) return false;
  char k = s[i++];
  if (k == '?' && i == n) {
    *ty = (npy_type){TR_DT_PRED, 1, big, false};
    return true;
  }
  int size = 0;
  if (i == n) return false;
  for (; i < n; i++) {
    if (s[i] < '0' || s[i] > '9' || size > 1000) return false;
    size = size * 10 + (s[i] - '0');
  }
  tr_dtype dt = TR_DT_COUNT;
  switch (k) {
  case 'b': if (size == 1) dt = TR_DT_PRED; break;
  case 'i':
    dt = size == 1 ? TR_DT_S8 : size == 2 ? TR_DT_S16 : size == 4 ? TR_DT_S32
       : size == 8 ? TR_DT_S64 : TR_DT_COUNT;
    break;
  case 'u':
    dt = size == 1 ? TR_DT_U8 : size == 2 ? TR_DT_U16 : size == 4 ? TR_DT_U32
       : size == 8 ? TR_DT_U64 : TR_DT_COUNT;
    break;
  case 'f':
    if (size == 1) {
      *ty = (npy_type){TR_DT_COUNT, 1, big, true};
      return true;
    }
    dt = size == 2 ? TR_DT_F16 : size == 4 ? TR_DT_F32 : size == 8 ? TR_DT_F64
       : TR_DT_COUNT;
    break;
  case 'c': dt = size == 8 ? TR_DT_C64 : size == 16 ? TR_DT_C128 : TR_DT_COUNT; break;
  case 'V':
    if (size < 1 || size > 16) return false;
    *ty = (npy_type){TR_DT_COUNT, size, big, false};
    return true;
  default: break;
  }
  if (dt == TR_DT_COUNT) return false;
  *ty = (npy_type){dt, size, big, false};
  return true;
}

/* Float types numpy itself lacks: their bits may come as an int view. */
static bool is_ml_float(tr_dtype t) {
  return tr_dtype_is_float(t) && t != TR_DT_F16 && t != TR_DT_F32 &&
         t != TR_DT_F64;
}

static bool is_narrow_int(tr_dtype t) {
  return tr_dtype_is_int(t) && tr_dtypes[t].bits < 8;
}

/* ---- the header dict ---- */

typedef struct {
  const char *name;        /* file name for messages */
  const char *p, *end;     /* header text being read */
  tr_diag *d;
  bool failed;
  /* results */
  const char *descr;
  size_t descr_len;
  int fortran;             /* -1 until seen */
  int rank;                /* -1 until seen */
  int64_t dims[TR_TENSOR_MAX_RANK];
} hdr;

__attribute__((format(printf, 2, 3)))
static void herr(hdr *h, const char *fmt, ...) {
  if (h->failed) return;
  h->failed = true;
  tr_buf b = {0};
  tr_buf_printf(&b, "%s: header: ", h->name);
  va_list ap;
  va_start(ap, fmt);
  tr_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  tr_diag_errorf(h->d, "%s", tr_buf_str(&b));
  tr_buf_free(&b);
}

static void skip_ws(hdr *h) {
  while (h->p < h->end &&
         (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
    h->p++;
}

static bool eat(hdr *h, char c) {
  skip_ws(h);
  if (h->p < h->end && *h->p == c) {
    h->p++;
    return true;
  }
  return false;
}

/* A short printable rendering of the text at the cursor, for messages. */
static void near(hdr *h, tr_buf *b) {
  if (h->p >= h->end) {
    tr_buf_puts(b, "end of header");
    return;
  }
  tr_buf_putc(b, '\'');
  for (const char *q = h->p; q < h->end && q < h->p + 12; q++)
    if (*q >= 32 && *q < 127) tr_buf_putc(b, *q);
    else tr_buf_printf(b, "\\x%02x", (unsigned char)*q);
  tr_buf_putc(b, '\'');
}

static void expected(hdr *h, const char *what) {
  tr_buf b = {0};
  near(h, &b);
  herr(h, "expected %s, found %s", what, tr_buf_str(&b));
  tr_buf_free(&b);
}

/* A quoted string without escapes (numpy never writes any in these). */
static bool read_str(hdr *h, const char **s, size_t *n) {
  skip_ws(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return false;
  char q = *h->p++;
  const char *start = h->p;
  while (h->p < h->end && *h->p != q && *h->p != '\\' && *h->p != '\n') h->p++;
  if (h->p >= h->end || *h->p != q) {
    h->p = start - 1; /* report from the opening quote */
    return false;
  }
  *s = start;
  *n = (size_t)(h->p - start);
  h->p++;
  return true;
}

static bool word(hdr *h, const char *w) {
  size_t n = strlen(w);
  skip_ws(h);
  if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) {
    const char *after = h->p + n;
    if (after < h->end && (*after == '_' || (*after >= 'a' && *after <= 'z') ||
                           (*after >= 'A' && *after <= 'Z') ||
                           (*after >= '0' && *after <= '9')))
      return false;
    h->p = after;
    return true;
  }
  return false;
}

/* One dim: a decimal int (Python 2 numpy appended 'L'). */
static bool read_dim(hdr *h, int64_t *v) {
  skip_ws(h);
  const char *start = h->p;
  bool neg = false;
  if (h->p < h->end && (*h->p == '-' || *h->p == '+')) neg = *h->p++ == '-';
  if (h->p >= h->end || *h->p < '0' || *h->p > '9') {
    h->p = start;
    expected(h, "an integer dim in 'shape'");
    return false;
  }
  uint64_t x = 0;
  bool big = false;
  while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
    unsigned dg = (unsigned)(*h->p++ - '0');
    if (x > ((uint64_t)INT64_MAX - dg) / 10) big = true;
    else x = x * 10 + dg;
  }
  if (h->p < h->end && (*h->p == 'L' || *h->p == 'l')) h->p++;
  if (neg && x != 0) {
    herr(h, "'shape' has a negative dim -%llu", (unsigned long long)x);
    return false;
  }
  if (big) {
    herr(h, "'shape' has a dim beyond %lld", (long long)INT64_MAX);
    return false;
  }
  *v = (int64_t)x;
  return true;
}

static void read_shape(hdr *h) {
  if (!eat(h, '(')) {
    expected(h, "'shape' tuple");
    return;
  }
  int n = 0;
  bool comma = false; /* a 1-tuple needs its trailing comma: (3) is an int */
  skip_ws(h);
  while (!eat(h, ')')) {
    if (h->p >= h->end) {
      expected(h, "')' closing 'shape'");
      return;
    }
    if (n == TR_TENSOR_MAX_RANK) {
      herr(h, "'shape' has more than %d dims", TR_TENSOR_MAX_RANK);
      return;
    }
    if (!read_dim(h, &h->dims[n])) return;
    n++;
    comma = eat(h, ',');
    if (!comma) {
      if (!eat(h, ')')) {
        expected(h, "',' or ')' in 'shape'");
        return;
      }
      break;
    }
  }
  if (n == 1 && !comma) {
    herr(h, "expected 'shape' tuple, found the int (%lld) (a 1-d shape is "
            "written (%lld,))", (long long)h->dims[0], (long long)h->dims[0]);
    return;
  }
  h->rank = n;
}

static void read_header(hdr *h) {
  bool seen_descr = false;
  if (!eat(h, '{')) {
    expected(h, "a dict '{...}'");
    return;
  }
  while (!h->failed && !eat(h, '}')) {
    const char *k;
    size_t kn;
    if (!read_str(h, &k, &kn)) {
      expected(h, "a quoted key or '}'");
      return;
    }
    if (!eat(h, ':')) {
      expected(h, "':' after a key");
      return;
    }
#define KEY(s) (kn == strlen(s) && memcmp(k, s, kn) == 0)
    if (KEY("descr")) {
      if (seen_descr) { herr(h, "'descr' given twice"); return; }
      seen_descr = true;
      skip_ws(h);
      if (h->p < h->end && (*h->p == '[' || *h->p == '{')) {
        herr(h, "'descr' is a structured dtype; trench reads plain arrays");
        return;
      }
      if (!read_str(h, &h->descr, &h->descr_len)) {
        expected(h, "'descr' string");
        return;
      }
    } else if (KEY("fortran_order")) {
      if (h->fortran >= 0) { herr(h, "'fortran_order' given twice"); return; }
      if (word(h, "True")) h->fortran = 1;
      else if (word(h, "False")) h->fortran = 0;
      else { expected(h, "'fortran_order' True or False"); return; }
    } else if (KEY("shape")) {
      if (h->rank >= 0) { herr(h, "'shape' given twice"); return; }
      read_shape(h);
      if (h->failed) return;
    } else {
      herr(h, "unexpected key '%.*s' (a .npy header has 'descr', "
              "'fortran_order' and 'shape')", (int)(kn > 40 ? 40 : kn), k);
      return;
    }
#undef KEY
    if (!eat(h, ',')) {
      if (!eat(h, '}')) expected(h, "',' or '}' in the header dict");
      break;
    }
  }
  if (h->failed) return;
  skip_ws(h);
  if (h->p < h->end) {
    expected(h, "only padding after the header dict");
    return;
  }
  if (!seen_descr) herr(h, "missing 'descr'");
  else if (h->fortran < 0) herr(h, "missing 'fortran_order'");
  else if (h->rank < 0) herr(h, "expected 'shape' tuple, found none");
}

/* ---- reading ---- */

static void swap_bytes(unsigned char *p, int n) {
  for (int i = 0; i < n / 2; i++) {
    unsigned char c = p[i];
    p[i] = p[n - 1 - i];
    p[n - 1 - i] = c;
  }
}

static void print_shape(tr_buf *b, const int64_t *dims, int rank) {
  tr_buf_putc(b, '(');
  for (int i = 0; i < rank; i++)
    tr_buf_printf(b, "%s%lld", i ? ", " : "", (long long)dims[i]);
  if (rank == 1) tr_buf_putc(b, ',');
  tr_buf_putc(b, ')');
}

/* Picks the tensor dtype for file type ty and the caller's expectation.
 * Returns TR_DT_COUNT after a diagnostic when they do not fit. */
static tr_dtype resolve(const char *name, const char *descr, const npy_type *ty,
                        tr_dtype expect, tr_diag *d) {
  bool have = expect != TR_DT_COUNT;
  if (ty->dt == TR_DT_COUNT) { /* raw bits: only the caller knows the type */
    if (have && tr_dtype_size(expect) == ty->size &&
        (!ty->f1 || tr_dtype_is_float(expect)))
      return expect;
    if (!have && ty->f1) return TR_DT_F8E5M2;
    if (!have && ty->size == 2) return TR_DT_BF16; /* numpy's only 2-byte gap */
    if (have)
      tr_diag_errorf(d, "%s: '%s' holds %d-byte raw values, which cannot be %s",
                     name, descr, ty->size, tr_dtype_name(expect));
    else
      tr_diag_errorf(d, "%s: '%s' holds %d-byte raw values of a type numpy "
                     "lacks (ml_dtypes float8, int4, ...); give the expected "
                     "dtype", name, descr, ty->size);
    return TR_DT_COUNT;
  }
  if (!have || expect == ty->dt) return ty->dt;
  /* Bit views: bf16/f8 bits saved as a same-sized int array. */
  if (is_ml_float(expect) && tr_dtype_is_int(ty->dt) &&
      tr_dtype_size(expect) == ty->size)
    return expect;
  /* s4/u4 values saved as int8/uint8 (checked for range later). */
  if (is_narrow_int(expect) && (ty->dt == TR_DT_S8 || ty->dt == TR_DT_U8))
    return expect;
  tr_diag_errorf(d, "%s: holds %s ('%s'), expected %s", name,
                 tr_dtype_name(ty->dt), descr, tr_dtype_name(expect));
  return TR_DT_COUNT;
}

/* Makes the slots of a sub-byte type or pred canonical (tensor.h). A
 * sub-byte value may come zero-extended (ml_dtypes' layout) or, for signed
 * types, sign-extended (trench's); anything else is refused rather than
 * silently truncated. Values from an int8/uint8 file must be in range. */
static bool normalize(const char *name, tr_tensor *t, const npy_type *ty,
                      tr_diag *d) {
  unsigned char *p = t->data;
  size_t n = tr_tensor_count(t);
  const tr_dtype_info *f = &tr_dtypes[t->dtype];
  if (f->kind == TR_DK_PRED) {
    for (size_t i = 0; i < n; i++) p[i] = p[i] != 0;
    return true;
  }
  if (f->bits >= 8) return true;
  unsigned mask = (1u << f->bits) - 1;
  bool sint = f->kind == TR_DK_SINT;
  bool from_int = ty->dt == TR_DT_S8 || ty->dt == TR_DT_U8;
  for (size_t i = 0; i < n; i++) {
    unsigned b = p[i], lo = b & mask;
    bool neg = sint && (lo >> (f->bits - 1)) & 1;
    unsigned sext = neg ? (lo | (~mask & 0xffu)) : lo;
    bool ok;
    if (from_int) /* a value: it must be in range */
      ok = sint ? (ty->dt == TR_DT_S8 ? b == sext : b == lo && !neg) : b == lo;
    else /* raw bits */
      ok = b == lo || b == sext;
    if (!ok) {
      if (from_int)
        tr_diag_errorf(d, "%s: element %zu is %d, outside the range of %s",
                       name, i, ty->dt == TR_DT_S8 ? (int)(signed char)b : (int)b,
                       f->name);
      else
        tr_diag_errorf(d, "%s: element %zu is the byte 0x%02x, not a %s value "
                       "(expected 0x%02x or less%s)", name, i, b, f->name, mask,
                       sint ? ", or a sign-extended byte" : "");
      return false;
    }
    p[i] = (unsigned char)(f->kind == TR_DK_SINT ? sext : lo);
  }
  return true;
}

static uint64_t rd_le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

tr_status tr_npy_parse(const char *name, const void *buf, size_t len,
                       tr_dtype expect, tr_tensor **out, tr_diag *d) {
  const unsigned char *b = buf;
  *out = NULL;
  TR_ASSERT((unsigned)expect <= TR_DT_COUNT);
  if (len < NPY_MAGIC_LEN + 2 || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
    if (len >= NPY_MAGIC_LEN && memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
      tr_diag_errorf(d, "%s: not a .npy file (expected the magic "
                     "\"\\x93NUMPY\" at the start)", name);
    else
      tr_diag_errorf(d, "%s: truncated header: %zu bytes, a .npy file starts "
                     "with at least 10", name, len);
    return TR_ERR_SYNTAX;
  }
  int major = b[6], minor = b[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    tr_diag_errorf(d, "%s: unsupported .npy format version %d.%d (trench "
                   "reads 1.0, 2.0 and 3.0)", name, major, minor);
    return TR_ERR_UNSUPPORTED;
  }
  size_t lensz = major == 1 ? 2 : 4, pre = 8 + lensz;
  if (len < pre) {
    tr_diag_errorf(d, "%s: truncated header: %zu bytes, a version %d.0 "
                   "preamble is %zu", name, len, major, pre);
    return TR_ERR_SYNTAX;
  }
  uint64_t hlen = rd_le(b + 8, (int)lensz);
  if (hlen > len - pre) {
    tr_diag_errorf(d, "%s: truncated header: it claims %llu bytes, the file "
                   "has %zu after the preamble", name, (unsigned long long)hlen,
                   len - pre);
    return TR_ERR_SYNTAX;
  }
  hdr h = {0};
  h.name = name;
  h.p = (const char *)b + pre;
  h.end = h.p + hlen;
  h.d = d;
  h.fortran = -1;
  h.rank = -1;
  read_header(&h);
  if (h.failed) return TR_ERR_SYNTAX;

  /* A copy of the descr, NUL-terminated, for parsing and messages. */
  char descr[48];
  size_t dn = h.descr_len < 40 ? h.descr_len : 40;
  memcpy(descr, h.descr, dn);
  strcpy(descr + dn, h.descr_len > dn ? "..." : "");
  for (char *c = descr; *c; c++)
    if (*c < 32 || *c > 126) *c = '?';
  npy_type ty;
  if (h.descr_len > dn || !parse_descr(descr, h.descr_len, &ty)) {
    tr_diag_errorf(d, "%s: header: unsupported descr '%s' (trench reads bool, "
                   "int, uint, float, complex and raw 'V' arrays)", name, descr);
    return TR_ERR_UNSUPPORTED;
  }
  tr_dtype dt = resolve(name, descr, &ty, expect, d);
  if (dt == TR_DT_COUNT) return TR_ERR_INVALID;

  /* Bytes the shape needs, checked before any allocation with
   * tr_tensor_new's rules (numpy's: the nonzero dims must not overflow). */
  size_t avail = len - pre - (size_t)hlen;
  uint64_t bound = (uint64_t)ty.size;
  bool overflow = false, empty = false;
  for (int i = 0; i < h.rank; i++) {
    uint64_t n = (uint64_t)h.dims[i];
    if (n == 0) empty = true;
    else if (bound > (uint64_t)INT64_MAX / n) overflow = true;
    else bound *= n;
  }
  tr_buf sh = {0};
  print_shape(&sh, h.dims, h.rank);
  if (overflow || (!empty && bound > TR_TENSOR_MAX_BYTES)) {
    if (overflow)
      tr_diag_errorf(d, "%s: shape %s of '%s' overflows 64-bit sizes", name,
                     tr_buf_str(&sh), descr);
    else
      tr_diag_errorf(d, "%s: shape %s of '%s' is %llu bytes, more than "
                     "trench's limit of %zu", name, tr_buf_str(&sh), descr,
                     (unsigned long long)bound, (size_t)TR_TENSOR_MAX_BYTES);
    tr_buf_free(&sh);
    return TR_ERR_UNSUPPORTED;
  }
  size_t need = empty ? 0 : (size_t)bound;
  if (avail < need) {
    tr_diag_errorf(d, "%s: data: expected %zu bytes for '%s' %s, found %zu",
                   name, need, descr, tr_buf_str(&sh), avail);
    tr_buf_free(&sh);
    return TR_ERR_SYNTAX;
  }
  tr_buf_free(&sh);
  tr_tensor *t = tr_tensor_new(dt, h.rank, h.dims, d);
  if (!t) return TR_ERR_UNSUPPORTED;
  TR_ASSERT(t->nbytes == need);

  /* Copy into C order, swapping bytes of foreign-endian elements (each
   * half of a complex separately). */
  const unsigned char *src = b + pre + hlen;
  unsigned char *dst = t->data;
  size_t n = tr_tensor_count(t), es = (size_t)ty.size;
  int part = tr_dtypes[dt].kind == TR_DK_COMPLEX ? (int)es / 2 : (int)es;
  bool swap = part > 1 && ty.big == host_is_little();
  if (!h.fortran || h.rank < 2) {
    memcpy(dst, src, need);
  } else {
    /* Walk C order with an odometer, tracking the Fortran offset. */
    int64_t idx[TR_TENSOR_MAX_RANK] = {0}, fst[TR_TENSOR_MAX_RANK];
    int r = h.rank;
    fst[0] = 1;
    for (int k = 1; k < r; k++) fst[k] = fst[k - 1] * h.dims[k - 1];
    size_t off = 0;
    for (size_t j = 0; j < n; j++) {
      memcpy(dst + j * es, src + off * es, es);
      for (int k = r - 1; k >= 0; k--) {
        off += (size_t)fst[k];
        if (++idx[k] < h.dims[k]) break;
        off -= (size_t)(fst[k] * h.dims[k]);
        idx[k] = 0;
      }
    }
  }
  if (swap)
    for (size_t j = 0; j < need; j += (size_t)part) swap_bytes(dst + j, part);
  if (!normalize(name, t, &ty, d)) {
    tr_tensor_free(t);
    return TR_ERR_INVALID;
  }
  if (avail > need)
    tr_diag_errorf(d, "%s: warning: %zu bytes after the data are ignored",
                   name, avail - need);
  *out = t;
  return TR_OK;
}

tr_status tr_npy_read(const char *path, tr_dtype expect, tr_tensor **out,
                      tr_diag *d) {
  char *text;
  size_t len;
  *out = NULL;
  tr_status s = tr_read_file(path, &text, &len, d);
  if (s != TR_OK) return s;
  s = tr_npy_parse(path, text, len, expect, out, d);
  tr_free(text);
  return s;
}

/* ---- writing ---- */

tr_status tr_npy_encode(const tr_tensor *t, tr_buf *out, tr_diag *d) {
  const char *descr = tr_npy_descr(t->dtype);
  if (!descr) {
    tr_diag_errorf(d, "npy: %s has no .npy representation",
                   tr_dtype_name(t->dtype));
    return TR_ERR_UNSUPPORTED;
  }
  /* The header numpy's _write_array_header builds: sorted keys, Python
   * reprs, room for the first dim to grow, then spaces and '\n' up to a
   * multiple of 64 bytes counting the preamble. */
  tr_buf h = {0};
  tr_buf_printf(&h, "{'descr': '%s', 'fortran_order': False, 'shape': ", descr);
  print_shape(&h, t->dims, t->rank);
  tr_buf_puts(&h, ", }");
  if (t->rank > 0) {
    int digits = snprintf(NULL, 0, "%lld", (long long)t->dims[0]);
    for (int i = digits; i < NPY_GROWTH_DIGITS; i++) tr_buf_putc(&h, ' ');
  }
  int major = 1;
  size_t pre = 10, hl = h.n + 1;
  size_t pad = NPY_ALIGN - (pre + hl) % NPY_ALIGN;
  if (hl + pad > 0xffff) { /* numpy then falls back to version 2.0 */
    major = 2;
    pre = 12;
    pad = NPY_ALIGN - (pre + hl) % NPY_ALIGN;
  }
  for (size_t i = 0; i < pad; i++) tr_buf_putc(&h, ' ');
  tr_buf_putc(&h, '\n');
  unsigned char pb[12];
  memcpy(pb, NPY_MAGIC, NPY_MAGIC_LEN);
  pb[6] = (unsigned char)major;
  pb[7] = 0;
  for (size_t i = 0; i < pre - 8; i++) pb[8 + i] = (unsigned char)(h.n >> (8 * i));
  tr_buf_putn(out, (const char *)pb, pre);
  tr_buf_putn(out, h.p, h.n);
  tr_buf_free(&h);

  /* Data: little-endian; s4/u4 as their low bits (ml_dtypes' layout). */
  size_t start = out->n;
  tr_buf_putn(out, (const char *)t->data, t->nbytes);
  unsigned char *p = (unsigned char *)out->p + start;
  const tr_dtype_info *f = &tr_dtypes[t->dtype];
  if (tr_dtype_is_int(t->dtype) && f->bits < 8)
    for (size_t i = 0; i < t->nbytes; i++) p[i] &= (unsigned char)((1u << f->bits) - 1);
  int part = f->kind == TR_DK_COMPLEX ? tr_dtype_size(t->dtype) / 2
                                      : tr_dtype_size(t->dtype);
  if (part > 1 && !host_is_little())
    for (size_t i = 0; i < t->nbytes; i += (size_t)part) swap_bytes(p + i, part);
  return TR_OK;
}

tr_status tr_npy_write(const char *path, const tr_tensor *t, tr_diag *d) {
  tr_buf b = {0};
  tr_status s = tr_npy_encode(t, &b, d);
  if (s != TR_OK) return s;
  FILE *f = fopen(path, "wb");
  if (!f) {
    tr_diag_errorf(d, "%s: cannot create: %s", path, strerror(errno));
    tr_buf_free(&b);
    return TR_ERR_IO;
  }
  bool ok = fwrite(b.p, 1, b.n, f) == b.n;
  ok = (fclose(f) == 0) && ok;
  tr_buf_free(&b);
  if (!ok) {
    tr_diag_errorf(d, "%s: write error: %s", path, strerror(errno));
    return TR_ERR_IO;
  }
  return TR_OK;
}
