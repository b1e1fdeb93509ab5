/* eval_rng.c - rng-bit-generator as XLA:CPU computes it. E does not
 * evaluate it; the CPU pipeline expands it with RngBitGeneratorExpander
 * (xla/hlo/transforms/expanders/rng_bit_generator_expander.cc) into the
 * generators of xla/hlo/builder/lib/prng.cc, with RNG_DEFAULT meaning
 * Philox4x32-10 on CPU. This file follows those two files step by step:
 * the key is state[0]; Philox takes the 128-bit counter (state[1],
 * state[2]) (for a u64[2] state: (state[1], state[0])); ThreeFry2x32-20
 * takes the 64-bit counter state[1]. Types narrower than 32 bits (4, 8,
 * 16) take the low bits of the 32-bit stream. */
#include "evalint.h"

#include <stdlib.h>
#include <string.h>

/* ---- Philox4x32-10 ---- */

static void philox(uint32_t x[4], uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; round++) {
    uint64_t p0 = (uint64_t)x[0] * 0xD2511F53u, p1 = (uint64_t)x[2] * 0xCD9E8D57u;
    uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k0, y1 = (uint32_t)p1;
    uint32_t y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k1, y3 = (uint32_t)p0;
    x[0] = y0;
    x[1] = y1;
    x[2] = y2;
    x[3] = y3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

/* The 4*nv4 32-bit Philox words for counters ctr+0 .. ctr+nv4-1, in XLA's
 * round-robin order: word 4j+i is output i of counter j. */
static uint32_t *philox_words(uint64_t key, uint64_t lo, uint64_t hi, size_t nv4) {
  uint32_t *w = tr_xmalloc(sizeof(uint32_t) * 4 * (nv4 ? nv4 : 1));
  for (size_t j = 0; j < nv4; j++) {
    uint64_t l = lo + j, h = hi + (l < lo ? 1 : 0);
    uint32_t x[4] = {(uint32_t)l, (uint32_t)(l >> 32), (uint32_t)h, (uint32_t)(h >> 32)};
    philox(x, (uint32_t)key, (uint32_t)(key >> 32));
    memcpy(&w[4 * j], x, sizeof x);
  }
  return w;
}

/* ---- ThreeFry2x32-20 ---- */

static uint32_t rotl(uint32_t v, int d) { return (v << d) | (v >> (32 - d)); }

static void threefry(uint32_t x[2], uint64_t key) {
  static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {(uint32_t)key, (uint32_t)(key >> 32), 0x1BD11BDAu};
  ks[2] ^= ks[0] ^ ks[1];
  x[0] += ks[0];
  x[1] += ks[1];
  for (int block = 0; block < 5; block++) {
    for (int r = 0; r < 4; r++) {
      x[0] += x[1];
      x[1] = rotl(x[1], rot[(block % 2) * 4 + r]);
      x[1] ^= x[0];
    }
    x[0] += ks[(block + 1) % 3];
    x[1] += ks[(block + 2) % 3] + (uint32_t)(block + 1);
  }
}

/* ---- the op ---- */

tr_status ev_rng_bit_generator(ev_ctx *c, const tr_instr *in, const tr_tensor *st,
                               tr_value **out) {
  const tr_shape *s = in->shape;
  const tr_attr *aa = tr_instr_attr(in, TR_ATTR_ALGORITHM);
  const char *alg = aa && aa->u.s ? aa->u.s : "rng_default";
  if (s->dtype != TR_DT_TUPLE || s->nelems != 2 || st->dtype != TR_DT_U64 || st->rank != 1)
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: rng-bit-generator of this shape");
  const tr_shape *ds = s->elems[1];
  int bits = tr_dtypes[ds->dtype].bits;
  if (!tr_dtype_is_int(ds->dtype) || (bits != 4 && bits != 8 && bits != 16 && bits != 32 && bits != 64))
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: rng-bit-generator of %s values",
                  tr_dtype_name(ds->dtype));
  bool three = strcmp(alg, "rng_three_fry") == 0;
  if (!three && strcmp(alg, "rng_philox") != 0 && strcmp(alg, "rng_default") != 0)
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: rng-bit-generator algorithm=%s", alg);
  int64_t ns = st->dims[0];
  if (ns < 2)
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: rng-bit-generator state of %lld words",
                  (long long)ns);
  uint64_t *state = tr_xmalloc(sizeof(uint64_t) * (size_t)ns);
  ev_load_ints(st, state);
  tr_tensor *data = ev_new(c, in, ds->dtype, ds->rank, ds->dims);
  tr_tensor *nst = data ? ev_new(c, in, TR_DT_U64, 1, st->dims) : NULL;
  if (!nst) {
    tr_tensor_free(data);
    tr_free(state);
    return TR_ERR_UNSUPPORTED;
  }
  size_t n = tr_tensor_count(data);
  uint64_t *v = tr_xmalloc(sizeof(uint64_t) * (n ? n : 1)), key = state[0];
  uint64_t *ns_out = tr_xmalloc(sizeof(uint64_t) * (size_t)ns);
  memcpy(ns_out, state, sizeof(uint64_t) * (size_t)ns);
  if (!three) {
    /* Counter: (state[1], state[2]), or reversed state for u64[2]. */
    uint64_t lo = state[1], hi = ns >= 3 ? state[2] : state[0];
    size_t nv4 = bits == 64 ? (2 * n + 3) / 4 : (n + 3) / 4;
    uint32_t *w = philox_words(key, lo, hi, nv4);
    for (size_t i = 0; i < n; i++) {
      if (bits == 64) {
        /* 64-bit value 2j+i joins words 2i and 2i+1 of counter j. */
        size_t j = i / 2, h = i % 2;
        v[i] = (uint64_t)w[4 * j + 2 * h] | ((uint64_t)w[4 * j + 2 * h + 1] << 32);
      } else {
        v[i] = w[i];
      }
    }
    tr_free(w);
    uint64_t nlo = lo + nv4, nhi = hi + (nlo < lo ? 1 : 0);
    ns_out[1] = nlo;
    if (ns >= 3) ns_out[2] = nhi;
  } else if (bits == 64) {
    /* One ThreeFry block per element: counter state[1] + linear index. */
    uint64_t base = state[1];
    for (size_t i = 0; i < n; i++) {
      uint64_t ctr = base + i;
      uint32_t x[2] = {(uint32_t)ctr, (uint32_t)(ctr >> 32)};
      threefry(x, key);
      v[i] = (uint64_t)x[0] | ((uint64_t)x[1] << 32);
    }
    ns_out[1] = base + n;
  } else {
    /* 32 bits and narrower: the shape is split in half along its first
     * even dim (else its largest; a scalar counts as [1]); block h gives
     * the elements 2h and 2h+1 along that dim (XLA's
     * SplitShapeIntoHalves / CombineShapePair). */
    int r = ds->rank, sd = 0;
    if (r > 0) {
      sd = -1;
      for (int d = 0; d < r && sd < 0; d++)
        if (ds->dims[d] % 2 == 0) sd = d;
      if (sd < 0) {
        sd = 0;
        for (int d = 1; d < r; d++)
          if (ds->dims[d] > ds->dims[sd]) sd = d;
      }
    }
    int64_t hdims[TR_TENSOR_MAX_RANK], hst[TR_TENSOR_MAX_RANK], idx[TR_TENSOR_MAX_RANK] = {0};
    if (r > TR_TENSOR_MAX_RANK) r = TR_TENSOR_MAX_RANK;
    for (int d = 0; d < r; d++) hdims[d] = d == sd ? (ds->dims[d] + 1) / 2 : ds->dims[d];
    ev_strides(hdims, r, hst);
    size_t nhalf = 1;
    for (int d = 0; d < r; d++) nhalf *= (size_t)hdims[d];
    uint64_t base = state[1];
    for (size_t i = 0; i < n; i++) {
      /* i -> multi-index in the data shape -> half index and which half. */
      size_t rem = i;
      for (int d = r - 1; d >= 0; d--) {
        idx[d] = (int64_t)(rem % (size_t)ds->dims[d]);
        rem /= (size_t)ds->dims[d];
      }
      int which = 0;
      int64_t lin = 0;
      for (int d = 0; d < r; d++) {
        int64_t q = idx[d];
        if (d == sd) {
          which = (int)(q % 2);
          q /= 2;
        }
        lin += q * hst[d];
      }
      uint64_t ctr = base + (uint64_t)lin;
      uint32_t x[2] = {(uint32_t)ctr, (uint32_t)(ctr >> 32)};
      threefry(x, key);
      v[i] = x[which];
    }
    ns_out[1] = base + (r ? nhalf : 1);
  }
  ev_store_ints(data, v); /* narrow types keep the low bits */
  ev_store_ints(nst, ns_out);
  tr_free(v);
  tr_free(ns_out);
  tr_free(state);
  tr_value *el[2] = {tr_value_tensor(nst), tr_value_tensor(data)};
  *out = tr_value_tuple(2, el);
  return TR_OK;
}
